// Rank 1 waits for a message that never comes; rank 0 waits in barrier. Used with --timeout.
import * as MPI from '@tsmpi/core';

await MPI.init();
if (MPI.COMM_WORLD.rank === 1) await MPI.COMM_WORLD.recv(0, 42);
else await MPI.COMM_WORLD.barrier();
await MPI.finalize();
