// Rank 1 dies before init while the others initialize and wait.
import * as MPI from '@tsmpi/core';

if (process.env.TSMPI_RANK === '1') process.exit(3);
await MPI.init();
await MPI.COMM_WORLD.barrier();
await MPI.finalize();
