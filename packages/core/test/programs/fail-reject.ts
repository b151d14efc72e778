// Rank 1 leaves an unhandled rejection; the others block in barrier.
import * as MPI from '@tsmpi/core';

await MPI.init();
if (MPI.COMM_WORLD.rank === 1) void Promise.reject(new Error('deliberate rejection in rank 1'));
await MPI.COMM_WORLD.barrier();
await new Promise((r) => setTimeout(r, 60_000));
await MPI.finalize();
