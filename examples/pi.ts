// Computes pi by numerical integration of 4 / (1 + x^2) over [0, 1]: each rank
// sums every size-th interval, and allreduce adds the parts.
//   pnpm exec mpiexec -n 4 examples/pi.ts [intervals]
import * as MPI from '@tsmpi/core';

await MPI.init();
const world = MPI.COMM_WORLD;
const n = Number(process.argv[2] ?? 10_000_000);
const h = 1 / n;
const t0 = MPI.wtime();
let part = 0;
for (let i = world.rank; i < n; i += world.size) {
  const x = h * (i + 0.5);
  part += 4 / (1 + x * x);
}
const pi = (await world.allreduce(part * h, MPI.SUM)) as number;
if (world.rank === 0) {
  console.log(`pi ~= ${pi.toFixed(12)}, error ${Math.abs(pi - Math.PI).toExponential(2)}, ${n} intervals on ${world.size} ranks in ${(MPI.wtime() - t0).toFixed(3)} s`);
}
await MPI.finalize();
