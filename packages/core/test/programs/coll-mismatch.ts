// Mismatched collectives (issue 39 point 3), run with 2 processes. Args: the case.
//   counts: Allreduce of 2 items on rank 0 and 3 on rank 1; each rank catches an MPIError(ERR_COUNT)
//           naming Allreduce and the mismatch, then the job goes on and finalizes.
//   reduce-scatter: ReduceScatter with different recvcounts on the two ranks, caught likewise
//           (ERR_COUNT on the rank that gets less than it expects, ERR_TRUNCATE on the other).
//   kinds:  barrier on rank 0, bcast from root 0 on rank 1; rank 1's error is left uncaught, so the
//           job ends with it (the test reads mpiexec's output).
import * as MPI from '@tsmpi/core';
import { check, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const rank = world.rank;
const which = process.argv[2];
if (which === 'counts') {
  const n = rank === 0 ? 2 : 3;
  try {
    await world.Allreduce(new Int32Array(n).fill(1), new Int32Array(n), MPI.SUM);
    check(false, 'Allreduce with different counts completed');
  } catch (e) {
    check(e instanceof MPI.MPIError && e.errorClass === MPI.ERR_COUNT && e.call === 'Allreduce', `Allreduce mismatch: ${String(e)}`);
    check(/different counts or datatypes/.test(e.message), `the message names the mismatch: ${e.message}`);
  }
  // The same through the general path (a non-contiguous recvbuf) and the persistent form.
  const every2 = MPI.Datatype.vector(n, 1, 2, MPI.INT32).commit();
  await throwsMPI(() => world.Allreduce(new Int32Array(n).fill(1), [new Int32Array(2 * n), 1, every2], MPI.SUM), MPI.ERR_COUNT, 'Allreduce', 'general path');
  every2.free();
  const r = world.AllreduceInit(new Int32Array(n), new Int32Array(n), MPI.SUM);
  r.start();
  await throwsMPI(() => r.wait(), MPI.ERR_COUNT, 'AllreduceInit', 'persistent form');
  r.free();
} else if (which === 'reduce-scatter') {
  const counts = rank === 0 ? [1, 1] : [2, 2];
  try {
    await world.ReduceScatter(new Int32Array(4), new Int32Array(2), counts, MPI.SUM);
    check(false, 'ReduceScatter with different recvcounts completed');
  } catch (e) {
    // A block shorter than this rank's count is ERR_COUNT, a longer one ERR_TRUNCATE: both name the call and the sizes.
    check(e instanceof MPI.MPIError && (e.errorClass === MPI.ERR_COUNT || e.errorClass === MPI.ERR_TRUNCATE) && e.call === 'ReduceScatter', `ReduceScatter mismatch: ${String(e)}`);
  }
} else if (which === 'kinds') {
  if (rank === 0) await world.barrier();
  else await world.bcast('x', 0);
}
await MPI.finalize();
console.log(`coll-mismatch OK rank ${rank}`);
