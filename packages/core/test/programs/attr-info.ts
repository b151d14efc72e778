// Attributes, keyvals and Info over real processes (issue 36), re-implementing the behaviour MPICH's
// test/mpi/attr and test/mpi/info suites check: predefined attributes on COMM_WORLD (baseattrcomm),
// set/get/delete and copy/delete callbacks on dup and free (attrt, attric, fkeyval), the order of
// deletion (attrorder), errors from callbacks (attrerr), double free of a keyval (keyval_double_free),
// COMM_SELF's attributes deleted at finalize (attrend2); Info set/get/delete/dup/keys and its limits
// (infotest, infodel, infovallen), Info.ENV, and the MPI 4.0 assertion hints on communicators.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;

// 1. Predefined attributes: on COMM_WORLD only, read-only.
equal(world.getAttr(MPI.TAG_UB), MPI.TAG_UB, 'TAG_UB attribute');
check((world.getAttr(MPI.TAG_UB) as number) >= 32767, 'TAG_UB at least 32767 (MPI)');
equal(world.getAttr(MPI.UNIVERSE_SIZE), size, 'UNIVERSE_SIZE');
equal(world.getAttr(MPI.APPNUM), 0, 'APPNUM');
equal(world.getAttr(MPI.WTIME_IS_GLOBAL), false, 'WTIME_IS_GLOBAL');
equal(world.getAttr(MPI.HOST), MPI.PROC_NULL, 'HOST');
equal(world.getAttr(MPI.IO), MPI.ANY_SOURCE, 'IO');
equal(MPI.COMM_SELF.getAttr(MPI.TAG_UB), undefined, 'predefined attributes live on COMM_WORLD only');
await throwsMPI(() => world.setAttr(MPI.TAG_UB, 5), MPI.ERR_KEYVAL, 'Comm.setAttr', 'set a predefined attribute');
await throwsMPI(() => world.deleteAttr(MPI.HOST), MPI.ERR_KEYVAL, 'Comm.deleteAttr', 'delete a predefined attribute');
await throwsMPI(() => MPI.Comm.freeKeyval(MPI.IO), MPI.ERR_KEYVAL, 'Comm.freeKeyval', 'free a predefined keyval');

// 2. set / get / delete, copy on dup, delete on free.
const events: string[] = [];
const copied = MPI.Comm.createKeyval({
  copy: (c, _k, v) => { events.push(`copy ${(c as MPI.Comm).name} ${String(v)}`); return (v as number) + 1; },
  delete: (_c, _k, v) => { events.push(`delete ${String(v)}`); },
});
const notCopied = MPI.Comm.createKeyval({ delete: (_c, _k, v) => { events.push(`delete ${String(v)}`); } });
const refused = MPI.Comm.createKeyval({ copy: () => undefined });
check(copied !== notCopied && copied !== refused, 'distinct keyvals');
const a = await world.dup();
equal(a.getAttr(copied), undefined, 'no attribute before set');
a.setAttr(copied, 10);
a.setAttr(notCopied, 'x');
a.setAttr(refused, 'y');
equal([a.getAttr(copied), a.getAttr(notCopied), a.getAttr(refused)], [10, 'x', 'y'], 'get what was set');
a.setAttr(copied, 20); // replaces: delete callback of 10 first
equal(events, ['delete 10'], 'set over a value runs its delete callback');
events.length = 0;
const b = await a.dup();
equal(events, [`copy ${a.name} 20`], 'dup runs the copy callback at the parent');
equal([b.getAttr(copied), b.getAttr(notCopied), b.getAttr(refused)], [21, undefined, undefined], 'dup copies through copy (no callback or undefined: not copied)');
events.length = 0;
const viaIdup = await b.idup().wait();
equal(viaIdup.getAttr(copied), 22, 'idup copies too');
viaIdup.free();
events.length = 0;
const split = await a.split(0, rank);
equal(split!.getAttr(copied), undefined, 'split does not copy attributes');
split!.free();
a.deleteAttr(notCopied);
equal(events, ['delete x'], 'deleteAttr runs the delete callback');
equal(a.getAttr(notCopied), undefined, 'deleted');
a.deleteAttr(notCopied); // not set: nothing
events.length = 0;

// 3. Order of deletion on free (attrorder): last set first; a freed keyval's delete still runs (fkeyval).
const order: number[] = [];
const keys = [0, 1, 2, 3].map((i) => MPI.Comm.createKeyval({ delete: () => { order.push(i); } }));
const c = await world.dup();
for (const i of [2, 0, 3, 1]) c.setAttr(keys[i]!, i);
MPI.Comm.freeKeyval(keys[3]!);
await throwsMPI(() => c.getAttr(keys[3]!), MPI.ERR_KEYVAL, 'Comm.getAttr', 'get with a freed keyval');
await throwsMPI(() => MPI.Comm.freeKeyval(keys[3]!), MPI.ERR_KEYVAL, 'Comm.freeKeyval', 'keyval freed twice');
c.free();
equal(order, [1, 3, 0, 2], 'free deletes the attributes, last set first, freed keyvals included');
await throwsMPI(() => c.getAttr(keys[0]!), MPI.ERR_COMM, 'Comm.getAttr', 'getAttr on a freed communicator');
b.free();
a.free();
equal(events.filter((e) => e.startsWith('delete')).sort(), ['delete 20', 'delete 21'], 'free runs the remaining delete callbacks');

// 4. Callback errors (attrerr): the call fails, the attribute stays.
const failing = MPI.Comm.createKeyval({
  copy: () => { throw new MPI.MPIError(MPI.ERR_OTHER, 'copy callback', 'refused'); },
  delete: (_c, _k, v) => { if (v === 'keep') throw new MPI.MPIError(MPI.ERR_OTHER, 'delete callback', 'refused'); },
});
const d = await world.dup();
d.setAttr(failing, 'keep');
await throwsMPI(() => d.deleteAttr(failing), MPI.ERR_OTHER, 'delete callback', 'a delete callback that throws fails deleteAttr');
equal(d.getAttr(failing), 'keep', 'the attribute stays');
await throwsMPI(() => d.dup(), MPI.ERR_OTHER, 'copy callback', 'a copy callback that throws fails dup');
await throwsMPI(() => d.setAttr(failing, 'go'), MPI.ERR_OTHER, 'delete callback', 'set over a value whose delete throws fails');
equal(d.getAttr(failing), 'keep', 'set over a value whose delete throws keeps the value');
await throwsMPI(() => d.free(), MPI.ERR_OTHER, 'delete callback', 'free fails when a delete callback throws');

// 5. Argument errors.
await throwsMPI(() => world.getAttr(123456), MPI.ERR_KEYVAL, 'Comm.getAttr', 'unknown keyval');
await throwsMPI(() => world.setAttr('k' as unknown as number, 1), MPI.ERR_KEYVAL, 'Comm.setAttr', 'keyval not a number');
await throwsMPI(() => MPI.Comm.createKeyval({ copy: 5 as unknown as () => unknown }), MPI.ERR_ARG, 'Comm.createKeyval', 'copy not a function');

// 6. Info objects (infotest, infodel, infovallen).
const info = new MPI.Info({ first: '1' });
info.set('second', '2');
info.set('third', '3');
info.set('first', 'one');
equal(info.keys(), ['first', 'second', 'third'], 'keys in the order first set');
equal(info.nkeys, 3, 'nkeys');
equal([info.get('first'), info.get('missing')], ['one', undefined], 'get');
const copy = info.dup();
info.delete('second');
equal([info.keys(), copy.keys()], [['first', 'third'], ['first', 'second', 'third']], 'dup is independent');
await throwsMPI(() => info.delete('second'), MPI.ERR_INFO_NOKEY, 'Info.delete', 'delete of a missing key');
await throwsMPI(() => info.set('x'.repeat(256), 'v'), MPI.ERR_INFO_KEY, 'Info.set', 'key of 256 characters');
await throwsMPI(() => info.set('', 'v'), MPI.ERR_INFO_KEY, 'Info.set', 'empty key');
await throwsMPI(() => info.set('k', 'v'.repeat(1025)), MPI.ERR_INFO_VALUE, 'Info.set', 'value of 1025 characters');
await throwsMPI(() => info.set('k', 7 as unknown as string), MPI.ERR_INFO_VALUE, 'Info.set', 'value not a string');
info.set('k'.repeat(255), 'v'.repeat(1024)); // the limits themselves are fine
await throwsMPI(() => MPI.Info.NULL.get('a'), MPI.ERR_INFO, 'Info.get', 'Info.NULL');
copy.free();
await throwsMPI(() => copy.keys(), MPI.ERR_INFO, 'Info.keys', 'freed info');
equal(MPI.Info.ENV.get('maxprocs'), String(size), 'Info.ENV maxprocs');
check(typeof MPI.Info.ENV.get('host') === 'string' && typeof MPI.Info.ENV.get('command') === 'string', 'Info.ENV host and command');
await throwsMPI(() => MPI.Info.ENV.set('a', 'b'), MPI.ERR_INFO, 'Info.set', 'Info.ENV is read-only');

// 7. Hints on communicators: the MPI 4.0 assertions stored, returned, copied by dup, replaced by dupWithInfo.
const hinted = await world.dupWithInfo(new MPI.Info({ mpi_assert_no_any_tag: 'true', mpi_assert_no_any_source: 'true' }));
const got = hinted.getInfo();
equal([got.get('mpi_assert_no_any_tag'), got.get('mpi_assert_no_any_source')], ['true', 'true'], 'dupWithInfo hints');
got.free();
hinted.setInfo(new MPI.Info({ mpi_assert_exact_length: 'true', mpi_assert_allow_overtaking: 'false' }));
equal(hinted.getInfo().keys().sort(), ['mpi_assert_allow_overtaking', 'mpi_assert_exact_length', 'mpi_assert_no_any_source', 'mpi_assert_no_any_tag'], 'setInfo adds');
const hintedDup = await hinted.dup();
equal(hintedDup.getInfo().get('mpi_assert_exact_length'), 'true', 'dup keeps the hints');
const plain = await hinted.idupWithInfo(MPI.Info.NULL).wait();
equal(plain.getInfo().nkeys, 0, 'idupWithInfo(Info.NULL): no hints');
// A communicator that asserts the hints still carries traffic that respects them.
const right = (rank + 1) % size;
const left = (rank - 1 + size) % size;
equal(await hinted.sendrecv(rank, right, 3, left, 3), left, 'traffic on an asserted communicator');
await throwsMPI(() => world.dupWithInfo({} as MPI.Info), MPI.ERR_INFO, 'Comm.dupWithInfo', 'info not an Info');
for (const x of [hinted, hintedDup, plain]) x.free();

// 8. COMM_SELF's attributes are deleted at finalize (attrend2): the callback prints.
const atExit = MPI.Comm.createKeyval({ delete: (_c, _k, v) => { console.log(`attr-info finalize deleted ${String(v)} on ${rank}`); } });
MPI.COMM_SELF.setAttr(atExit, 'self');
world.setAttr(atExit, 'world');

console.log(`attr-info OK ${rank}`);
await MPI.finalize();
