// Issue 13's reproducer: a communicator freed while a receive on it is
// pending must keep its context id until that receive completes, so a
// communicator created right after the free gets another id and the two
// never exchange messages. 2 processes.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;

const c1 = await world.dup();
const r = world.rank === 0 ? c1.irecv<string>(1, 5) : null; // pending on c1
const c1Id = c1.contextId;
c1.free();
const c2 = await world.dup();
if (world.rank === 0) check(c2.contextId !== c1Id, `c2 reuses c1's context id ${c1Id} while a receive on c1 is pending`);
if (world.rank === 1) await c2.send('for c2', 0, 5);
if (world.rank === 0) equal(await c2.recv<string>(1, 5), 'for c2', 'the message sent on c2 arrives on c2');
// The receive on the freed c1 is still pending and completes normally (here: cancelled).
r?.cancel();
if (r !== null) {
  await r.wait().catch(() => undefined);
  check(r.status!.cancelled, 'the pending receive on the freed c1 is still cancellable and completes');
}
c2.free();
await world.barrier();
if (world.rank === 0) console.log(`lifetime-reuse OK (refcount ${MPI.config().refcount})`);
await MPI.finalize();
