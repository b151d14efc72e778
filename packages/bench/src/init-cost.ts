/**
 * What MPI.init costs each rank: the wall time from the process's start (performance.timeOrigin) to
 * the end of init, the process's CPU (all threads) by then, and of that the CPU spent inside init;
 * rank 0 prints every rank's line and the sums (issue 38: a job's start-up is part of its time).
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/init-cost.ts
 */
import * as MPI from '@tsmpi/core';

const cpuBeforeInit = process.cpuUsage();
const wallBeforeInit = performance.now();
await MPI.init();
const wallAtInit = performance.now();
const cpuAtInit = process.cpuUsage();
const ms = (us: { user: number; system: number }): number => (us.user + us.system) / 1e3;
const mine = [wallAtInit, ms(cpuAtInit), ms(cpuAtInit) - ms(cpuBeforeInit), wallAtInit - wallBeforeInit];
const all = await MPI.COMM_WORLD.gather(mine, 0);
if (MPI.COMM_WORLD.rank === 0) {
  all!.forEach((r, rank) => console.log(`init-cost: rank ${rank} wall to end of init ${r[0]!.toFixed(0)} ms (init itself ${r[3]!.toFixed(0)}), cpu by then ${r[1]!.toFixed(0)} ms (init itself ${r[2]!.toFixed(0)})`));
  const sum = (i: number): number => all!.reduce((s, r) => s + r[i]!, 0);
  const max = (i: number): number => Math.max(...all!.map((r) => r[i]!));
  console.log(`init-cost: slowest rank's wall ${max(0).toFixed(0)} ms (init itself ${max(3).toFixed(0)}), cpu over all ranks ${sum(1).toFixed(0)} ms (init itself ${sum(2).toFixed(0)})`);
}
await MPI.finalize();
