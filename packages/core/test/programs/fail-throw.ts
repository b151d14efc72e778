// Rank 1 throws after init while the others wait in a receive that never comes.
import * as MPI from '@tsmpi/core';

await MPI.init();
if (MPI.COMM_WORLD.rank === 1) throw new Error('deliberate failure in rank 1');
await MPI.COMM_WORLD.recv(1, 77);
await MPI.finalize();
