// Stale wrappers across threads (issue 13): a communicator and a derived datatype made in the
// main thread and revived in a worker are freed by the main thread. The worker's wrappers must
// see that free: using them, or freeing them again, throws ERR_COMM / ERR_TYPE naming the call,
// both while the records wait for their last reference or collection and after the records
// have been reused by new objects (the handle's generation differs), never an operation on the
// new objects' records. One process; also the worker's body.
import { isMainThread, parentPort } from 'node:worker_threads';
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;

/** In the worker: every use of the stale wrappers fails, naming its call. */
async function staleUsesFail(c: MPI.Comm, t: MPI.Datatype, when: string): Promise<void> {
  await throwsMPI(() => c.isend('late', 0, 3), MPI.ERR_COMM, 'isend', `isend on the freed communicator (${when})`);
  await throwsMPI(() => c.Irecv(new Int32Array(2), 0, 3), MPI.ERR_COMM, 'Irecv', `Irecv on the freed communicator (${when})`);
  await throwsMPI(() => c.barrier(), MPI.ERR_COMM, 'barrier', `barrier on the freed communicator (${when})`);
  await throwsMPI(() => world.Isend([Int32Array.of(1, 2), 1, t], 0, 3), MPI.ERR_TYPE, 'Isend', `Isend with the freed datatype (${when})`);
  await throwsMPI(() => c.free(), MPI.ERR_COMM, 'Comm.free', `a second free of the communicator (${when})`);
  await throwsMPI(() => t.free(), MPI.ERR_TYPE, 'Datatype.free', `a second free of the datatype (${when})`);
}

if (!isMainThread) {
  const port = parentPort!;
  const next = async (): Promise<string> => ((await once(port, 'message')) as [string])[0];
  const { c, t } = MPI.workerData as { c: MPI.Comm; t: MPI.Datatype };
  // Both work before the free.
  await c.send('hello', 0, 1);
  equal(await c.recv(0, 1), 'hello', 'a message on the revived communicator');
  const got = new Int32Array(2);
  const r = c.Irecv([got, 1, t], 0, 2);
  await c.Send([Int32Array.of(5, 6), 1, t], 0, 2);
  await r.wait();
  equal(Array.from(got), [5, 6], 'a message with the revived datatype');
  port.postMessage('ready');
  equal(await next(), 'freed', 'step');
  await staleUsesFail(c, t, 'records not yet reused');
  port.postMessage('checked');
  equal(await next(), 'recycled', 'step');
  await staleUsesFail(c, t, 'records reused by new objects');
  port.postMessage('done');
} else {
  const strategy = MPI.config().refcount;
  const c = await world.dup();
  const t = MPI.Datatype.contiguous(2, MPI.INT32).commit();
  const w = new MPI.Worker(new URL(import.meta.url), { workerData: { c, t } });
  const exited = once(w, 'exit');
  const next = async (): Promise<string> => ((await once(w, 'message')) as [string])[0];
  equal(await next(), 'ready', 'worker step');
  c.free();
  t.free();
  w.postMessage('freed');
  equal(await next(), 'checked', 'worker step');
  // Reuse the records: under gc the freed ones go at a collection (the 65th creation after them).
  if (strategy === 'gc') for (let i = 0; i <= 64; i++) MPI.Op.create(() => undefined).free();
  const made: MPI.Comm[] = [];
  const types: MPI.Datatype[] = [];
  for (let i = 0; i < 4; i++) {
    made.push(await world.dup());
    types.push(MPI.Datatype.contiguous(2, MPI.INT32).commit());
  }
  w.postMessage('recycled');
  equal(await next(), 'done', 'worker step');
  equal((await exited)[0], 0, 'worker exit code');
  // The new objects were not touched by the worker's stale calls.
  for (const m of made) {
    await m.send('new', 0, 3);
    equal(await m.recv(0, 3), 'new', 'a new communicator works, with nothing stale queued on it');
    check(m.iprobe(0, MPI.ANY_TAG) === null, 'nothing stale arrived on a new communicator');
    m.free();
  }
  for (const ty of types) ty.free();
  console.log(`lifetime-stale OK (refcount ${strategy})`);
}
if (isMainThread) await MPI.finalize();
