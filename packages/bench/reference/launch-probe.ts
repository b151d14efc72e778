// Launch-time probe: the tsmpi side of launch-probe.c, for cluster-compare.sh.
// Every rank prints the wall-clock time (nanoseconds) at which it got past
// MPI.init(); the script subtracts the time it started mpiexec.
//   mpiexec -n P packages/bench/reference/launch-probe.ts
//   -> launch-probe: rank R of P past init at NS ns
import * as MPI from '@tsmpi/core';

await MPI.init();
const nowNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
console.log(`launch-probe: rank ${MPI.COMM_WORLD.rank} of ${MPI.COMM_WORLD.size} past init at ${nowNs} ns`);
await MPI.finalize();
