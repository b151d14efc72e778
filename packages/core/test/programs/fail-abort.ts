// Rank 2 calls MPI.abort(7); the others block in recv.
import * as MPI from '@tsmpi/core';

await MPI.init();
if (MPI.COMM_WORLD.rank === 2) MPI.abort(7);
await MPI.COMM_WORLD.recv(MPI.ANY_SOURCE, 1);
await MPI.finalize();
