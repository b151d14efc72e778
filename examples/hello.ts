// One line per rank: rank, size and host.
//   pnpm exec mpiexec -n 4 examples/hello.ts
import * as MPI from '@tsmpi/core';

await MPI.init();
const world = MPI.COMM_WORLD;
console.log(`Hello from rank ${world.rank} of ${world.size} on ${MPI.getProcessorName()}`);
await MPI.finalize();
