/**
 * The spawning side of the spawn benchmark (spawn-time.ts runs it): one process that spawns
 * spawn-child.ts WARMUP + ITERATIONS times, NP children each, timing each `COMM_WORLD.spawn` from
 * the call to the intercommunicator it resolves to (the children are in MPI.init by then), and
 * disconnects before the next. Prints, for spawn-time.ts, the timed spawns' seconds, this process's
 * CPU milliseconds in each spawn call, and the children's CPU milliseconds up to the end of their
 * MPI.init summed over them (spawn-child.ts; received after the timed part), one line each:
 * `spawn-seconds: S1 S2 ...`, `spawn-parent-cpu-ms: ...`, `spawn-children-init-cpu-ms: ...`. Its job needs a universe of 1 + NP * (WARMUP + ITERATIONS) slots
 * (`--hosts localhost:K`), since a job never reuses a process number.
 *
 *   pnpm exec mpiexec --hosts localhost:21 -n 1 packages/bench/src/spawn-parent.ts --np 4 --iterations 4 --warmup 1
 */
import { fileURLToPath } from 'node:url';
import * as MPI from '@tsmpi/core';
import { parseBenchArgs, takeFlag } from './bench-args.ts';

const CHILD = fileURLToPath(new URL('./spawn-child.ts', import.meta.url));

const byNp = takeFlag(process.argv.slice(2), 'np');
const np = Number(byNp.value ?? '4');
const parsed = parseBenchArgs(byNp.rest, { iterations: 5, warmup: 1, window: 1, sizesBytes: [0] });
if (parsed.kind !== 'run' || !Number.isSafeInteger(np) || np < 1) {
  console.error(`spawn-parent: ${parsed.kind === 'error' ? parsed.message : '--np must be an integer >= 1'} (usage: see spawn-time.ts --help)`);
  process.exitCode = 2;
} else {
  const { iterations, warmup } = parsed.flags;
  await MPI.init();
  const world = MPI.COMM_WORLD;
  if (world.size !== 1) throw new Error(`spawn-parent: runs as one process (got ${world.size})`);
  const seconds: number[] = [];
  const parentCpuMs: number[] = [];
  const childrenCpuMs: number[] = [];
  for (let i = -warmup; i < iterations; i++) {
    const cpuBefore = process.cpuUsage();
    const start = MPI.wtime();
    const children = await world.spawn(CHILD, [], np);
    const took = MPI.wtime() - start;
    const cpu = process.cpuUsage(cpuBefore);
    if (children.remoteSize !== np) throw new Error(`spawn-parent: the intercommunicator has ${children.remoteSize} remote processes, not ${np}`);
    const childrenCpu = (await children.reduce(0, MPI.SUM, MPI.ROOT)) as number;
    await children.disconnect();
    if (i < 0) continue;
    seconds.push(took);
    parentCpuMs.push((cpu.user + cpu.system) / 1000);
    childrenCpuMs.push(childrenCpu);
  }
  const line = (values: number[], digits: number): string => values.map((v) => v.toFixed(digits)).join(' ');
  console.log(`spawn-seconds: ${line(seconds, 6)}\nspawn-parent-cpu-ms: ${line(parentCpuMs, 1)}\nspawn-children-init-cpu-ms: ${line(childrenCpuMs, 1)}`);
  await MPI.finalize();
}
