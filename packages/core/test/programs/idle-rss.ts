// An idle hello rank's resident memory (issue 38): init, a barrier, a short idle turn of the
// event loop so that start-up's garbage can be collected as an idle rank's would, then each
// rank prints process.memoryUsage().rss in MiB and finalizes. Measured the same way in every
// run: after init and the barrier, before finalize. Any number of processes.
import * as MPI from '@tsmpi/core';

await MPI.init();
const world = MPI.COMM_WORLD;
await world.barrier();
await new Promise((resolve) => setTimeout(resolve, 300));
const rssMiB = process.memoryUsage.rss() / 2 ** 20;
console.log(`idle-rss rank ${world.rank} ${rssMiB.toFixed(1)}`);
await world.barrier();
await MPI.finalize();
