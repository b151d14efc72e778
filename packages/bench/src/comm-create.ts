/**
 * Communicator-creation benchmark, after Figure 2 of
 * papers/context-id-allocation.txt: time per Comm.create, Comm.createGroup
 * and Comm.dup as the output group grows from 1 to P for a fixed parent
 * (COMM_WORLD), with eager context-id allocation on and off, and with the
 * original (MPICH2) and the new (initial synchronization) algorithm.
 *
 * One configuration, one job (the allocation settings come from the environment):
 *
 *   mpiexec -n 4 [--env TSMPI_CTXID_EAGER=0] [--env TSMPI_CTXID_ALGO=original] \
 *       packages/bench/src/comm-create.ts [--iterations 200] [--warmup 20]
 *
 * prints one line `comm-create {json}` on rank 0: per output size k the mean
 * time of one creation in microseconds (the slowest participating rank's mean
 * over its timed creations), the same rank-slowest median and p99, and the CPU
 * time per creation in milliseconds summed over the participating ranks; and
 * the same for dup (k = P).
 *
 * The sweep (every configuration, each as its own job, round robin, a progress bar):
 *
 *   npx tsx packages/bench/src/comm-create.ts --sweep [--np 4,8] [--repeat 3]
 *       [--iterations 200] [--out bench-results/comm-create]
 *
 * writes OUT.json (every run and the median of each point) and OUT.svg (the
 * chart for the largest P), and prints the eager speed-up of dup and the
 * createGroup times at fixed k for every P.
 *
 * What each creation runs (api/comm.ts): create and dup allreduce over the
 * whole parent (the eager segment first; base rounds after a barrier when not
 * eager); createGroup runs its barrier/allreduces over the k members only, so
 * its cost follows k, not P. Every created communicator is freed at once, so
 * the ids are reused and the eager segment never fills.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import * as MPI from '@tsmpi/core';
import { isLeadProcess } from './lead-rank.ts';
import { ProgressBar } from './progress-bar.ts';
import { median, summarizeCalls } from './stats.ts';
import { renderLineChart, type ChartSeries } from './svg-chart.ts';

const USAGE = `usage: mpiexec -n P packages/bench/src/comm-create.ts [--iterations N] [--warmup N]
       npx tsx packages/bench/src/comm-create.ts --sweep [--np 4,8] [--repeat 3] [--iterations N] [--out PREFIX]

Time per Comm.create, Comm.createGroup (output group of k = 1..P ranks of COMM_WORLD) and
Comm.dup. Allocation settings come from the environment (TSMPI_CTXID_EAGER, TSMPI_CTXID_ALGO);
--sweep runs every configuration as its own job and writes PREFIX.json and PREFIX.svg.`;

/** The configurations of the sweep: the environment of each job. */
export const CONFIGS = [
  { name: 'new, eager', env: { TSMPI_CTXID_ALGO: 'new', TSMPI_CTXID_EAGER: '1' } },
  { name: 'new, base only', env: { TSMPI_CTXID_ALGO: 'new', TSMPI_CTXID_EAGER: '0' } },
  { name: 'original', env: { TSMPI_CTXID_ALGO: 'original', TSMPI_CTXID_EAGER: '0' } },
] as const;

/** What one job prints (times in microseconds). */
export interface JobResult {
  readonly np: number;
  readonly algo: string;
  readonly eager: string;
  readonly iterations: number;
  /** index k - 1: output group of the first k ranks; the slowest participating rank's mean per creation */
  readonly create: number[];
  readonly createGroup: number[];
  readonly dup: number;
  /** the same points' slowest-rank median and p99 (µs), and CPU per creation summed over the participating ranks (ms) */
  readonly createMedian: number[];
  readonly createP99: number[];
  readonly createCpuMs: number[];
  readonly createGroupMedian: number[];
  readonly createGroupP99: number[];
  readonly createGroupCpuMs: number[];
  readonly dupMedian: number;
  readonly dupP99: number;
  readonly dupCpuMs: number;
  /** dup again, as the mean of a back-to-back loop with its frees (total time / iterations; docs/notebook/performance-2026-11.md §4.7) */
  readonly dupMean: number;
}

const { values } = parseArgs({
  options: {
    sweep: { type: 'boolean', default: false },
    np: { type: 'string', default: '4,8' },
    repeat: { type: 'string', default: '3' },
    iterations: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    out: { type: 'string', default: 'bench-results/comm-create' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  if (isLeadProcess()) console.log(USAGE);
  process.exit(0);
}
const iterations = Math.max(1, Number(values.iterations));
const warmup = Math.max(0, Number(values.warmup));

if (values.sweep) sweep();
else await job();

// ------------------------------------------------------------------ one job

async function job(): Promise<void> {
  await MPI.init();
  const world = MPI.COMM_WORLD;
  const { rank, size } = world;
  const worldGroup = world.group;

  /**
   * `op`'s mean, median and p99 per call at this rank (0 where it does not take part), then the
   * slowest rank's of each (µs), and the CPU per call (process.cpuUsage, the timed loop with its
   * frees) summed over the ranks (ms).
   */
  const time = async (takesPart: boolean, op: () => Promise<MPI.Comm | null>): Promise<{ mean: number; median: number; p99: number; cpuMs: number }> => {
    const samples = new Float64Array(iterations);
    const mine = new Float64Array(3);
    let cpuMs = 0;
    await world.barrier();
    if (takesPart) {
      for (let i = 0; i < warmup; i++) (await op())?.free();
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < iterations; i++) {
        const t0 = performance.now();
        const c = await op();
        samples[i] = (performance.now() - t0) / 1000;
        c?.free();
      }
      const cpu = process.cpuUsage(cpuBefore);
      cpuMs = (cpu.user + cpu.system) / 1000 / iterations;
      const f = summarizeCalls(samples);
      mine.set([f.meanMicros, f.medianMicros, f.p99Micros]);
    }
    const slowest = new Float64Array(3);
    await world.Allreduce(mine, slowest, MPI.MAX);
    return { mean: slowest[0]!, median: slowest[1]!, p99: slowest[2]!, cpuMs: await world.allreduce(cpuMs, MPI.SUM) };
  };

  const create: Awaited<ReturnType<typeof time>>[] = [];
  const createGroup: Awaited<ReturnType<typeof time>>[] = [];
  for (let k = 1; k <= size; k++) {
    const group = worldGroup.rangeIncl([[0, k - 1, 1]]);
    create.push(await time(true, () => world.create(group)));
    createGroup.push(await time(rank < k, () => world.createGroup(group, k)));
    group.free();
  }
  const dup = await time(true, () => world.dup());
  await world.barrier();
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) (await world.dup()).free();
  const dupMean = await world.allreduce(((performance.now() - t0) / iterations) * 1000, MPI.MAX);
  worldGroup.free();
  if (rank === 0) {
    const env = process.env;
    const result: JobResult = {
      np: size, algo: env['TSMPI_CTXID_ALGO'] ?? 'new', eager: env['TSMPI_CTXID_EAGER'] ?? '1', iterations,
      create: create.map((t) => t.mean), createGroup: createGroup.map((t) => t.mean), dup: dup.mean, dupMean,
      createMedian: create.map((t) => t.median), createP99: create.map((t) => t.p99), createCpuMs: create.map((t) => t.cpuMs),
      createGroupMedian: createGroup.map((t) => t.median), createGroupP99: createGroup.map((t) => t.p99), createGroupCpuMs: createGroup.map((t) => t.cpuMs),
      dupMedian: dup.median, dupP99: dup.p99, dupCpuMs: dup.cpuMs,
    };
    console.log(`comm-create ${JSON.stringify(result)}`);
  }
  await MPI.finalize();
}

// ------------------------------------------------------------------ the sweep

function sweep(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const mpiexec = path.join(root, 'node_modules/.bin/mpiexec');
  const self = fileURLToPath(import.meta.url);
  const nps = values.np!.split(',').map(Number);
  const repeat = Math.max(1, Number(values.repeat));
  const plan: { config: (typeof CONFIGS)[number]; np: number }[] = [];
  // Round robin, so slow drifts of a shared machine hit every configuration alike.
  for (let r = 0; r < repeat; r++) for (const np of nps) for (const config of CONFIGS) plan.push({ config, np });

  const runs: (JobResult & { config: string })[] = [];
  const bar = new ProgressBar({ total: plan.length, label: 'comm-create sweep' });
  for (const p of plan) {
    bar.tick(0, `${p.config.name}, np ${p.np}`);
    const env = Object.entries(p.config.env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    const argv = ['-n', String(p.np), '--timeout', '300', ...env, self, '--iterations', String(iterations), '--warmup', String(warmup)];
    const res = spawnSync(mpiexec, argv, { cwd: root, encoding: 'utf8', timeout: 330_000 });
    const line = /^comm-create (\{.*\})$/m.exec(res.stdout ?? '');
    if (line === null) process.stderr.write(`\nrun failed: mpiexec ${argv.join(' ')}\n${res.stdout}\n${res.stderr}\n`);
    else runs.push({ config: p.config.name, ...(JSON.parse(line[1]!) as JobResult) });
    bar.tick(1);
  }
  bar.finish();

  /** Median over the repeats of one configuration and P. */
  const med = (config: string, np: number, pick: (r: JobResult) => number): number => {
    const xs = runs.filter((r) => r.config === config && r.np === np).map(pick);
    return xs.length === 0 ? NaN : median(xs);
  };
  const summary = nps.map((np) => ({
    np,
    configs: CONFIGS.map((c) => ({
      config: c.name,
      dup: med(c.name, np, (r) => r.dup),
      dupMean: med(c.name, np, (r) => r.dupMean),
      create: Array.from({ length: np }, (_, i) => med(c.name, np, (r) => r.create[i]!)),
      createGroup: Array.from({ length: np }, (_, i) => med(c.name, np, (r) => r.createGroup[i]!)),
    })),
  }));

  const biggest = summary[summary.length - 1]!;
  const series: ChartSeries[] = biggest.configs.flatMap((c) => [
    { name: `create (${c.config})`, points: c.create.map((y, i) => ({ x: i + 1, y })) },
    { name: `createGroup (${c.config})`, points: c.createGroup.map((y, i) => ({ x: i + 1, y })) },
    { name: `dup (${c.config})`, points: [{ x: 1, y: c.dup }, { x: biggest.np, y: c.dup }] },
  ]);
  const out = path.resolve(root, values.out!);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(`${out}.json`, JSON.stringify({ date: new Date().toISOString(), repeat, iterations, warmup, runs, summary }, null, 2));
  fs.writeFileSync(`${out}.svg`, renderLineChart(series, {
    title: `Communicator creation, parent COMM_WORLD of ${biggest.np} processes (median of ${repeat} runs)`,
    xLabel: 'output group size k',
    yLabel: 'mean time per creation (µs)',
  }));

  const us = (x: number): string => `${x.toFixed(0)} us`;
  for (const s of summary) {
    console.log(`P = ${s.np}`);
    for (const c of s.configs) {
      console.log(`  ${c.config.padEnd(15)} dup ${us(c.dup)} (back-to-back with frees ${us(c.dupMean)})  create ${c.create.map(us).join(' ')}  createGroup ${c.createGroup.map(us).join(' ')}`);
    }
    const eager = s.configs[0]!;
    const base = s.configs[1]!;
    console.log(`  eager speed-up of dup: ${(base.dup / eager.dup).toFixed(2)}x mean per call, ${(base.dupMean / eager.dupMean).toFixed(2)}x back-to-back mean with frees; of create(P): ${(base.create[s.np - 1]! / eager.create[s.np - 1]!).toFixed(2)}x`);
  }
  for (const k of [1, 2, 4]) {
    const row = summary.filter((s) => k <= s.np).map((s) => `P=${s.np}: ${us(s.configs[0]!.createGroup[k - 1]!)}`);
    console.log(`createGroup (new, eager) at k = ${k}: ${row.join(', ')}`);
  }
  console.log(`wrote ${out}.json and ${out}.svg`);
}
