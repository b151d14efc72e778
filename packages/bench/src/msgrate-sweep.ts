/**
 * Sweep of the multithreaded neighbor message rate over threads per process,
 * one line per configuration, in the style of the paper's Figure 2 (aggregate
 * rate against threads; x = 0 is MPI_THREAD_SINGLE).
 *
 *   npx tsx packages/bench/src/msgrate-sweep.ts [--layout pair|paper] [--threads 1,2,4] [--repeat 3]
 *        [--iterations 10000] [--out bench-results/msgrate-sweep]
 *
 * Runs every point as its own mpiexec job (one at a time: the machine's cores
 * are the resource being measured), shows a progress bar, and writes
 * OUT.json (every run, and the median of each point) and OUT.svg (the chart).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ProgressBar } from './progress-bar.ts';
import { median } from './stats.ts';
import { renderLineChart, type ChartSeries } from './svg-chart.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MPIEXEC = path.join(ROOT, 'node_modules/.bin/mpiexec');
const PROGRAM = path.join(ROOT, 'packages/bench/src/msgrate-threads.ts');

/**
 * The configurations of the chart: mpiexec flags per thread count N.
 *   parallel, C=N, threads   per-source matching queues, N channels, one engine worker per channel
 *   global, C=1 (baseline)   one queue pair under one lock, one channel
 *   endpoints, C=N, threads  as the first, and every thread on its own endpoint (COMM_ENDPOINTS)
 *   parallel, C=N, inline    as the first, with the main thread running every channel
 */
const CONFIGS: readonly { name: string; flags: (n: number) => string[] }[] = [
  { name: 'parallel, C=N, threads', flags: (n) => ['--channels', String(Math.max(1, n)), '--matching', 'parallel', '--progress', 'threads'] },
  { name: 'global, C=1 (baseline)', flags: () => ['--channels', '1', '--matching', 'global', '--progress', 'threads'] },
  { name: 'endpoints, C=N, threads', flags: (n) => ['--channels', String(Math.max(1, n)), '--endpoints', String(n), '--progress', 'threads'] },
  { name: 'parallel, C=N, inline', flags: (n) => ['--channels', String(Math.max(1, n)), '--progress', 'inline'] },
];

const { values } = parseArgs({
  options: {
    layout: { type: 'string', default: 'pair' },
    threads: { type: 'string', default: '1,2,4' },
    repeat: { type: 'string', default: '3' },
    iterations: { type: 'string', default: '10000' },
    out: { type: 'string', default: 'bench-results/msgrate-sweep' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('usage: npx tsx packages/bench/src/msgrate-sweep.ts [--layout pair|paper] [--threads 1,2,4] [--repeat 3] [--iterations 10000] [--out PREFIX]');
  process.exit(0);
}
const layout = values.layout === 'paper' ? 'paper' : 'pair';
const threadCounts = values.threads!.split(',').map(Number);
const repeat = Number(values.repeat);
const procs = (n: number): number => (layout === 'pair' ? 2 : n + 1);

interface Run { config: string; threads: number; rate: number | null }
const runs: Run[] = [];
const plan: { config: string; threads: number; argv: string[] }[] = [];
for (let r = 0; r < repeat; r++) {
  // x = 0: the single-threaded point, shared by every configuration
  plan.push({ config: 'single', threads: 0, argv: ['-n', String(procs(1)), PROGRAM, '--thread-level', 'single', '--layout', layout] });
  for (const c of CONFIGS) {
    for (const n of threadCounts) {
      if (c.name.includes('endpoint') && layout === 'paper') continue;
      plan.push({ config: c.name, threads: n, argv: ['-n', String(procs(n)), ...c.flags(n), PROGRAM, '--threads', String(n), '--layout', layout] });
    }
  }
}
const bar = new ProgressBar({ total: plan.length, label: `msgrate sweep (${layout})` });
for (const p of plan) {
  bar.tick(0, `${p.config.slice(0, 30)}, ${p.threads} threads`);
  const res = spawnSync(MPIEXEC, [...p.argv, '--iterations', values.iterations!], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  const m = /msgrate-threads: ([0-9.]+) M/.exec(res.stdout ?? '');
  if (m === null) process.stderr.write(`\nrun failed: mpiexec ${p.argv.join(' ')}\n${res.stderr}\n`);
  runs.push({ config: p.config, threads: p.threads, rate: m === null ? null : Number(m[1]) });
  bar.tick(1);
}
bar.finish();

const point = (config: string, threads: number): number | null => {
  const rs = runs.filter((r) => r.config === config && r.threads === threads && r.rate !== null).map((r) => r.rate!);
  return rs.length === 0 ? null : median(rs);
};
const single = point('single', 0);
const series: ChartSeries[] = CONFIGS.filter((c) => !(c.name.includes('endpoint') && layout === 'paper')).map((c) => ({
  name: c.name,
  points: [
    ...(single === null ? [] : [{ x: 0, y: single }]),
    ...threadCounts.flatMap((n) => {
      const y = point(c.name, n);
      return y === null ? [] : [{ x: n, y }];
    }),
  ],
}));
const out = path.resolve(ROOT, values.out!);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(`${out}.json`, JSON.stringify({ date: new Date().toISOString(), layout, repeat, iterations: Number(values.iterations), runs, series }, null, 2));
fs.writeFileSync(`${out}.svg`, renderLineChart(series, {
  title: `Neighbor message rate, ${layout} layout (median of ${repeat})`,
  xLabel: 'threads per process (0 = MPI_THREAD_SINGLE)',
  yLabel: 'aggregate rate (M messages/s)',
}));
console.log(`single-threaded: ${single?.toFixed(3)} M/s`);
for (const s of series) console.log(`${s.name}: ${s.points.map((p) => `${p.x}:${p.y.toFixed(3)}`).join('  ')}`);
console.log(`wrote ${out}.json and ${out}.svg`);
