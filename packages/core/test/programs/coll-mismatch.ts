// Mismatched collectives (issue 39 point 3). Args: the case.
//   counts (np 2): Allreduce of 2 items on rank 0 and 3 on rank 1; each rank catches an MPIError(ERR_COUNT)
//           naming Allreduce and the mismatch, then the job goes on and finalizes.
//   reduce-scatter (np 2): ReduceScatter with different recvcounts on the two ranks, caught likewise
//           (ERR_COUNT on the rank that gets less than it expects, ERR_TRUNCATE on the other).
//   The pairs below make different collective calls on different ranks; the rank that receives the
//   other call's message leaves its MPIError (MPI_ERR_OTHER naming both calls and both ranks)
//   uncaught, so the job ends with it (the test reads mpiexec's output). Each is set up so that a
//   message of the other call reaches a receive: where every rank only sends (a bcast root on each
//   side) or only receives, nothing arrives to compare and MPI's undefined outcome stays (docs/ERRORS.md).
//   kinds (np 2):           barrier on rank 0, bcast from root 0 on rank 1 (rank 1 reports)
//   bcast-reduce (np 2):    bcast from root 1 on rank 0, reduce to root 0 on rank 1 (rank 0 reports)
//   allreduce-reduce (np 2): Allreduce (the lean path) on rank 0, Reduce to root 0 on rank 1 (rank 0)
//   gather-scatter (np 2):  gather to root 0 on rank 0, scatter from root 1 on rank 1 (rank 0)
//   object-buffer (np 2):   bcast (object) from root 0 on rank 0, Bcast (buffer) from root 0 on rank 1 (rank 1)
//   nonblocking (np 2):     ibarrier on rank 0, Ibcast from root 0 on rank 1 (rank 1)
//   dup (np 2):             barrier on rank 0, bcast on rank 1, on a dup of COMM_WORLD (rank 1)
//   split (np 3):           on split(0) of ranks 0 and 2 (rank 1 sits out): allreduce on rank 0,
//                           reduce to root 0 on rank 2 (split rank 1), which only sends (split rank 0 reports)
//   bcast-roots (np 4):     bcast from root 0 on ranks 0-2, from root 2 on rank 3 (rank 3 hears rank 2's relay)
//   reduce-roots (np 4):    Reduce to root 0 on ranks 0-2, to root 2 on rank 3 (rank 2 hears rank 3)
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
} else if (which === 'bcast-reduce') {
  if (rank === 0) await world.bcast('x', 1);
  else await world.reduce(1, MPI.SUM, 0);
} else if (which === 'allreduce-reduce') {
  if (rank === 0) await world.Allreduce(new Int32Array([1]), new Int32Array(1), MPI.SUM);
  else await world.Reduce(new Int32Array([1]), null, MPI.SUM, 0);
} else if (which === 'gather-scatter') {
  if (rank === 0) await world.gather('x', 0);
  else await world.scatter(['a', 'b'], 1);
} else if (which === 'object-buffer') {
  if (rank === 0) await world.bcast(new Uint8Array(4), 0);
  else await world.Bcast(new Uint8Array(4), 0);
} else if (which === 'nonblocking') {
  if (rank === 0) await world.ibarrier().wait();
  else await world.Ibcast(new Int32Array(2), 0).wait();
} else if (which === 'dup') {
  const dup = await world.dup();
  if (rank === 0) await dup.barrier();
  else await dup.bcast('x', 0);
} else if (which === 'split') {
  const sub = await world.split(rank === 1 ? MPI.UNDEFINED : 0);
  if (rank === 0) await sub!.allreduce(1, MPI.SUM);
  else if (rank === 2) await sub!.reduce(1, MPI.SUM, 0);
} else if (which === 'bcast-roots') {
  await world.bcast('x', rank === 3 ? 2 : 0);
} else if (which === 'reduce-roots') {
  await world.Reduce(new Int32Array([1]), new Int32Array(1), MPI.SUM, rank === 3 ? 2 : 0);
}
await MPI.finalize();
console.log(`coll-mismatch OK rank ${rank}`);
