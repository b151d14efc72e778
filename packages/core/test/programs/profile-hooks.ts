// MPI.profile: hooks see each public call once, with its args, result and a duration >= 0; sets
// compose in order; removing them stops the reports (issue 41). Run with np 2.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

type Seen = { call: string; args: unknown[]; result: unknown; ns: number; target: unknown };
const seen: Seen[] = [];
const order: string[] = [];
const off = MPI.profile.use({
  before: (call) => order.push(`A>${call}`),
  after: (call, result, ns, target, args) => { seen.push({ call, args: [...args], result, ns, target }); order.push(`A<${call}`); },
});
const offB = MPI.profile.use({ before: (call) => order.push(`B>${call}`), after: (call) => order.push(`B<${call}`) });

await MPI.init();
const world = MPI.COMM_WORLD;
const me = world.rank;
equal(seen.map((s) => s.call), ['MPI.init'], 'init is seen once');
equal(order, ['A>MPI.init', 'B>MPI.init', 'B<MPI.init', 'A<MPI.init'], 'sets compose: before in order, after in reverse');
offB();
seen.length = 0;

if (me === 0) {
  await world.send({ x: 1 }, 1, 5);
  const buf = new Float64Array(4);
  const st = await world.Recv(buf, 1, 6);
  equal(seen.map((s) => s.call), ['Comm.send', 'Comm.Recv'], 'rank 0 calls');
  equal(seen[0]!.args, [{ x: 1 }, 1, 5], 'send args');
  check(seen[0]!.target === world, 'send target is the communicator');
  check(seen[1]!.result === st, 'Recv result is its Status');
} else {
  const v = await world.recv(0, 5);
  equal(v, { x: 1 }, 'value');
  const req = world.Isend(new Float64Array([1, 2, 3, 4]), 0, 6);
  await req.wait();
  equal(seen.map((s) => s.call), ['Comm.recv', 'Comm.Isend', 'Request.wait'], 'rank 1 calls');
  check(seen[0]!.result !== null && (seen[0]!.result as { x: number }).x === 1, 'recv result is the value');
  check(seen[1]!.result === req, 'Isend result is its Request');
  check(seen[2]!.target === req, 'wait target is the request');
}
for (const s of seen) check(Number.isInteger(s.ns) && s.ns >= 0, `${s.call} duration ${s.ns} >= 0`);
seen.length = 0;
await world.barrier();
const sum = await world.allreduce(me + 1, MPI.SUM);
equal(sum, 3, 'allreduce');
equal(seen.map((s) => s.call), ['Comm.barrier', 'Comm.allreduce'], 'collectives once each');
let failed: unknown = null;
try {
  await world.send(1, 99);
} catch (e) {
  failed = e;
}
check(failed instanceof MPI.MPIError, 'bad dest throws');
check(seen.at(-1)!.call === 'Comm.send' && seen.at(-1)!.result === failed, 'after sees the error as result');
const calls = MPI.profile.calls();
for (const c of ['Comm.send', 'Comm.Irecv', 'Comm.bcast', 'Comm.dup', 'Request.wait', 'Request.waitall', 'CartComm.shift', 'MPI.finalize']) check(calls.includes(c), `${c} is hooked`);

off();
seen.length = 0;
await world.barrier();
equal(seen.length, 0, 'no reports after removal');
equal(world.send.name, 'send', 'send is the original method again');
off();
console.log(`profile-hooks OK ${me}`);
await MPI.finalize();
