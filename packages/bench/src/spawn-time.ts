/**
 * Spawn time against start-up time: issue 37's target that `COMM_WORLD.spawn` of 4 processes
 * returns its intercommunicator within 2x of the time `mpiexec -n 4` takes to start the same
 * program. Runs, from the repository's mpiexec (packages/launcher/bin/mpiexec.mjs):
 *
 *   1. one job of spawn-parent.ts (one process, a universe of 1 + NP * (WARMUP + ITERATIONS) slots)
 *      that spawns NP processes of spawn-child.ts WARMUP + ITERATIONS times, each timed from the
 *      call to the intercommunicator returned;
 *   2. WARMUP + ITERATIONS jobs `mpiexec -n NP spawn-child.ts`, each timed from the start of
 *      mpiexec to its exit (the whole job, as startup-time.ts times one).
 *
 * and prints the mean (median, p99, min) of the timed ones, their ratio, and the CPU the started
 * processes spent up to the end of MPI.init (summed over them; spawn: and the parent's CPU in the
 * call), the figure to judge by on a loaded machine.
 *
 *   npx tsx packages/bench/src/spawn-time.ts [--np 4] [--iterations 5] [--warmup 1] [--json FILE]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseBenchArgs, takeFlag } from './bench-args.ts';
import { appendJsonRecord, recordHeader } from './report.ts';
import { mean, summarizeCalls, type CallSummary } from './stats.ts';

const USAGE = `usage: npx tsx packages/bench/src/spawn-time.ts [flags]

Spawn of NP processes (the call to the intercommunicator, several in one job) against the whole
job \`mpiexec -n NP\` of the same trivial program (spawn-child.ts). Prints the mean, median, p99
and min in milliseconds of each, the ratio of the means, and CPU milliseconds per start.

  --np N           processes per spawn and per job (default 4)
  --iterations N   timed spawns, and as many timed jobs (default 5)
  --warmup N       untimed spawns and jobs before them (default 1)
  --json FILE      append one JSON record (one line) to FILE
  -h, --help       this text`;

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const MPIEXEC = fileURLToPath(new URL('../../launcher/bin/mpiexec.mjs', import.meta.url));
const PARENT = fileURLToPath(new URL('./spawn-parent.ts', import.meta.url));
const CHILD = fileURLToPath(new URL('./spawn-child.ts', import.meta.url));

/** Runs mpiexec with `args` from the repository root; its standard output, or exits naming what failed. */
function mpiexec(args: string[]): string {
  const run = spawnSync(process.execPath, [MPIEXEC, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) {
    console.error(`spawn-time: mpiexec ${args.join(' ')} exited with ${run.status ?? run.signal}\n${run.stdout}`);
    process.exit(1);
  }
  return run.stdout;
}

/** The numbers of the line `NAME: N1 N2 ...` in `out`. */
function numbersOf(out: string, name: string): number[] {
  const line = out.split('\n').find((l) => l.startsWith(`${name}: `));
  if (line === undefined) throw new Error(`spawn-time: no '${name}:' line in\n${out}`);
  return line.slice(name.length + 2).trim().split(/\s+/).map(Number);
}

/** `  mean M ms (median, p99, min ...)` of a summary in microseconds. */
function millis(s: CallSummary): string {
  const ms = (us: number): string => (us / 1000).toFixed(1);
  return `mean ${ms(s.meanMicros)} ms (median ${ms(s.medianMicros)}, p99 ${ms(s.p99Micros)}, min ${ms(s.minMicros)}`;
}

const byNp = takeFlag(process.argv.slice(2), 'np');
const np = Number(byNp.value ?? '4');
const parsed = parseBenchArgs(byNp.rest, { iterations: 5, warmup: 1, window: 1, sizesBytes: [0] });
if (parsed.kind === 'help') {
  console.log(USAGE);
} else if (parsed.kind === 'error' || !Number.isSafeInteger(np) || np < 1) {
  console.error(`spawn-time: ${parsed.kind === 'error' ? parsed.message : `--np must be an integer >= 1 (got ${byNp.value})`}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations, warmup, jsonFile } = parsed.flags;
  const counts = ['--np', String(np), '--iterations', String(iterations), '--warmup', String(warmup)];
  const spawned = mpiexec(['--hosts', `localhost:${1 + np * (warmup + iterations)}`, '-n', '1', PARENT, ...counts]);
  const spawnSeconds = numbersOf(spawned, 'spawn-seconds');
  const parentCpuMs = mean(numbersOf(spawned, 'spawn-parent-cpu-ms'));
  const spawnChildrenCpuMs = mean(numbersOf(spawned, 'spawn-children-init-cpu-ms'));
  const jobSeconds: number[] = [];
  const jobCpuMs: number[] = [];
  for (let i = -warmup; i < iterations; i++) {
    const start = performance.now();
    const out = mpiexec(['-n', String(np), CHILD]);
    const seconds = (performance.now() - start) / 1000;
    if (i < 0) continue;
    jobSeconds.push(seconds);
    jobCpuMs.push(...numbersOf(out, 'init-cpu-ms'));
  }
  const spawn = summarizeCalls(spawnSeconds);
  const job = summarizeCalls(jobSeconds);
  const ratio = spawn.meanMicros / job.meanMicros;
  console.log(`spawn: ${np} processes, call to intercommunicator ${millis(spawn)}; cpu to the end of init ${spawnChildrenCpuMs.toFixed(1)} ms over the children, ${parentCpuMs.toFixed(1)} ms in the parent's call; ${iterations} spawns in one job)`);
  console.log(`mpiexec: ${np} processes, start to exit ${millis(job)}; cpu to the end of init ${mean(jobCpuMs).toFixed(1)} ms over the ranks; ${iterations} jobs)`);
  console.log(`spawn/mpiexec: ${ratio.toFixed(2)} (issue 37: at most 2)`);
  if (jsonFile !== null) {
    appendJsonRecord(jsonFile, {
      ...recordHeader(), bench: 'spawn-time', processes: np, iterations, warmup, spawn, job, ratio,
      spawnChildrenInitCpuMs: spawnChildrenCpuMs, spawnParentCpuMs: parentCpuMs, jobInitCpuMs: mean(jobCpuMs),
    });
  }
}
