/**
 * The trivial program of the spawn benchmark (spawn-time.ts): joins the job and leaves it. Spawned,
 * it disconnects from its parents; started by `mpiexec -n 4` it only joins and finalizes, so that
 * both figures start the same program. Outside the timed part it reports the CPU time its processes
 * spent up to the end of MPI.init (Node's start, module loading, the wire-up), summed: spawned, to
 * its parent (spawn-parent.ts); started by mpiexec, rank 0 prints `init-cpu-ms: SUM`.
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/spawn-child.ts
 */
import * as MPI from '@tsmpi/core';

await MPI.init();
const used = process.cpuUsage();
const initCpuMs = (used.user + used.system) / 1000;
const parent = MPI.getParent();
if (parent !== null) {
  await parent.reduce(initCpuMs, MPI.SUM, 0);
  await parent.disconnect();
} else {
  const sum = await MPI.COMM_WORLD.reduce(initCpuMs, MPI.SUM, 0);
  if (MPI.COMM_WORLD.rank === 0) console.log(`init-cpu-ms: ${(sum as number).toFixed(1)}`);
}
await MPI.finalize();
