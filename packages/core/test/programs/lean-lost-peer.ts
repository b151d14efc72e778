// A lean receive (setting lean=on, docs/adr/0020-lean-common-path.md) whose peer is lost: rank 1
// drops its connections and exits 30 s later; rank 0, waiting in a lean Recv from it, must fail
// with ERR_PROC_FAILED on its own (it says so, then exits 1), not hang until rank 1 exits.
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';

await MPI.init();
await MPI.COMM_WORLD.barrier(); // every connection is up
if (MPI.COMM_WORLD.rank === 1) {
  runtime('lean-lost-peer').device.transport!.destroy();
  setTimeout(() => process.exit(1), 30_000);
} else {
  try {
    await MPI.COMM_WORLD.Recv(new Uint8Array(4), 1, 5);
  } catch (e) {
    const lane = runtime('lean-lost-peer').device.laneState(MPI.COMM_WORLD.contextId);
    if (e instanceof MPI.MPIError && lane === 1) console.log(`lean-lost-peer: the lean receive failed with ${MPI.errorString(e.errorClass)}`);
    throw e;
  }
}
await MPI.finalize();
