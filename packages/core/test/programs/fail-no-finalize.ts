// Rank 1 returns without finalize (exit status 0); the others wait in barrier.
import * as MPI from '@tsmpi/core';

await MPI.init();
if (MPI.COMM_WORLD.rank !== 1) {
  await MPI.COMM_WORLD.barrier();
  await MPI.finalize();
}
