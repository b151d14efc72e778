// A lean receive (setting lean=on, docs/adr/0020-lean-common-path.md) whose peer is lost: rank 0
// posts a lean Irecv from rank 1 before the barrier (so it waits in a lane before rank 1 can drop
// anything); rank 1, once rank 0 says it is past the barrier, drops its connections and exits 30 s
// later. Rank 0 must fail the receive
// with ERR_PROC_FAILED on its own (it says so, then exits 1), not hang until rank 1 exits.
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const pending = world.rank === 0 ? world.Irecv(new Uint8Array(4), 1, 5) : null;
const inLane = runtime('lean-lost-peer').device.laneState(world.contextId) === 1;
await world.barrier(); // every connection is up
if (world.rank === 1) {
  // Rank 0 is past the barrier (its last barrier message could otherwise be lost with the connections).
  await world.recv(0, 6);
  runtime('lean-lost-peer').device.transport!.destroy();
  setTimeout(() => process.exit(1), 30_000);
} else {
  await world.send('past the barrier', 1, 6);
  try {
    await pending!.wait();
  } catch (e) {
    if (e instanceof MPI.MPIError && inLane) console.log(`lean-lost-peer: the lean receive failed with ${MPI.errorString(e.errorClass)}`);
    throw e;
  }
}
await MPI.finalize();
