/**
 * Sweep of the multithreaded neighbor message rate over threads per process,
 * one line per configuration, in the style of the paper's Figure 2 (aggregate
 * rate against threads; x = 0 is MPI_THREAD_SINGLE), with the references the
 * threads are measured against (issue 16): tsmpi single-threaded (one process
 * per side, a flat line), N single-threaded processes per side (what N
 * endpoints should match), and Open MPI's same layout (N pthreads per process
 * over TCP, reference/msgrate-threads.c; skipped with a line if mpicc.openmpi
 * is missing).
 *
 *   npx tsx packages/bench/src/msgrate-sweep.ts [--layout pair|paper] [--threads 1,2,4] [--repeat 3]
 *        [--iterations 10000] [--warmup 2000] [--configs a,b] [--out bench-results/msgrate-sweep]
 *
 * Runs every point as its own job (one at a time: the machine's cores are the
 * resource being measured), shows a progress bar, and writes OUT.json (every
 * run, and the median of each point) and OUT.svg (the chart). Open MPI's points
 * also keep the best of their repeats, and a collapsed one (reference-collapse.ts)
 * is flagged in the printed lines, the JSON and the chart's legend, and gets no
 * target ratio.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ProgressBar } from './progress-bar.ts';
import { formatReferencePoint, referenceLegend, referencePoints } from './reference-collapse.ts';
import { median } from './stats.ts';
import { renderLineChart, type ChartSeries } from './svg-chart.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const MPIEXEC = path.join(ROOT, 'node_modules/.bin/mpiexec');
const PROGRAM = path.join(ROOT, 'packages/bench/src/msgrate-threads.ts');
const REFERENCE = path.join(ROOT, 'packages/bench/reference');
const OMPI_BINARY = path.join(REFERENCE, 'build/msgrate-threads_ompi');

/**
 * The tsmpi configurations of the chart: mpiexec flags and layout per thread count N.
 *   defaults    no flags: what a program that asks for threadLevel 'multiple' gets (issue 16's target)
 *   threads     one engine per channel reads it; user threads send on their own connections (default)
 *   engines     as threads, and every send handed to the engines (the full hand-off)
 *   endpoints   threads progress, every thread on its own endpoint (COMM_ENDPOINTS), each thread
 *               reading its endpoint (endpointReceive's default for --endpoints >= 2, docs/adr/0021)
 *   endpoints-engine  the same with TSMPI_ENDPOINT_RECEIVE=engine: the channel engines read the
 *               endpoints and hand each receive to its thread (the default before docs/adr/0021)
 *   inline      the main thread reads every channel; workers send on their own connections
 *   global      one queue pair under one lock, one channel (the paper's baseline)
 */
const CONFIGS: readonly { name: string; key: string; layout?: string; env?: Record<string, string>; flags: (n: number) => string[] }[] = [
  { key: 'defaults', name: "threadLevel 'multiple' defaults", flags: () => [] },
  { key: 'threads', name: 'threads progress, C=N', flags: (n) => ['--channels', String(n), '--progress', 'threads'] },
  { key: 'engines', name: 'engines progress (hand-off), C=N', flags: (n) => ['--channels', String(n), '--progress', 'engines'] },
  { key: 'endpoints', name: 'endpoints, one per thread, C=N', layout: 'endpoints', flags: (n) => ['--channels', String(n), '--endpoints', String(n), '--progress', 'threads'] },
  {
    key: 'endpoints-engine', name: 'endpoints, engine receive, C=N', layout: 'endpoints', env: { TSMPI_ENDPOINT_RECEIVE: 'engine' },
    flags: (n) => ['--channels', String(n), '--endpoints', String(n), '--progress', 'threads'],
  },
  { key: 'inline', name: 'inline progress, C=N', flags: (n) => ['--channels', String(n), '--progress', 'inline'] },
  { key: 'global', name: 'global, C=1 (baseline)', flags: () => ['--channels', '1', '--matching', 'global', '--progress', 'threads'] },
];

const { values } = parseArgs({
  options: {
    layout: { type: 'string', default: 'pair' },
    threads: { type: 'string', default: '1,2,4' },
    repeat: { type: 'string', default: '3' },
    iterations: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '2000' },
    configs: { type: 'string', default: 'defaults,threads,engines,endpoints,endpoints-engine,inline' },
    out: { type: 'string', default: 'bench-results/msgrate-sweep' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(`usage: npx tsx packages/bench/src/msgrate-sweep.ts [--layout pair|paper] [--threads 1,2,4] [--repeat 3] [--iterations 10000] [--warmup 2000] [--configs ${CONFIGS.map((c) => c.key).join(',')}] [--out PREFIX]`);
  process.exit(0);
}
const layout = values.layout === 'paper' ? 'paper' : 'pair';
const threadCounts = values.threads!.split(',').map(Number);
const repeat = Number(values.repeat);
const chosen = CONFIGS.filter((c) => values.configs!.split(',').includes(c.key) && !(c.layout === 'endpoints' && layout === 'paper'));
const procs = (n: number): number => (layout === 'pair' ? 2 : n + 1);

/** Open MPI's binary of reference/msgrate-threads.c, built if missing; null (and a line saying why) when it cannot be. */
function openMpiBinary(): string | null {
  if (layout !== 'pair') return null;
  if (fs.existsSync(OMPI_BINARY)) return OMPI_BINARY;
  fs.mkdirSync(path.dirname(OMPI_BINARY), { recursive: true });
  const cc = spawnSync('mpicc.openmpi', ['-O2', '-pthread', '-o', OMPI_BINARY, path.join(REFERENCE, 'msgrate-threads.c')], { encoding: 'utf8' });
  if (cc.status === 0) return OMPI_BINARY;
  console.log(`Open MPI reference skipped: mpicc.openmpi failed or is missing (${cc.error?.message ?? cc.stderr.trim().split('\n')[0]})`);
  return null;
}
const ompi = openMpiBinary();

interface Run { config: string; threads: number; rate: number | null }
const runs: Run[] = [];
const plan: { config: string; threads: number; cmd: string; argv: string[]; env?: Record<string, string> }[] = [];
const SINGLE = 'tsmpi single-threaded, 1 process per side';
const SINGLE_N = 'tsmpi single-threaded, N processes per side';
const OMPI = 'Open MPI 4, N threads per process (TCP)';
for (let r = 0; r < repeat; r++) {
  // x = 0: the single-threaded point, shared by every configuration
  plan.push({ config: SINGLE, threads: 0, cmd: MPIEXEC, argv: ['-n', String(procs(1)), PROGRAM, '--thread-level', 'single', '--layout', layout] });
  for (const n of threadCounts) {
    for (const c of chosen) {
      plan.push({ config: c.name, threads: n, cmd: MPIEXEC, argv: ['-n', String(procs(n)), ...c.flags(n), PROGRAM, '--threads', String(n), '--layout', c.layout ?? layout], env: c.env ?? {} });
    }
    if (layout === 'pair' && n > 1) plan.push({ config: SINGLE_N, threads: n, cmd: MPIEXEC, argv: ['-n', String(2 * n), PROGRAM, '--thread-level', 'single'] });
    if (ompi !== null) {
      plan.push({ config: OMPI, threads: n, cmd: 'mpirun.openmpi', argv: ['--allow-run-as-root', '--oversubscribe', '--bind-to', 'none', '-n', '2', '--mca', 'pml', 'ob1', '--mca', 'btl', 'tcp,self', '--mca', 'btl_tcp_if_include', 'lo', ompi, '--threads', String(n)] });
    }
  }
}
const bar = new ProgressBar({ total: plan.length, label: `msgrate sweep (${layout})` });
for (const p of plan) {
  bar.tick(0, `${p.config.slice(0, 30)}, ${p.threads} threads`);
  const res = spawnSync(p.cmd, [...p.argv, '--iterations', values.iterations!, '--warmup', values.warmup!], { cwd: ROOT, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ...p.env } });
  const m = /msgrate-threads: ([0-9.]+) M/.exec(res.stdout ?? '');
  if (m === null) process.stderr.write(`\nrun failed: ${path.basename(p.cmd)} ${p.argv.join(' ')}\n${res.stderr}\n`);
  runs.push({ config: p.config, threads: p.threads, rate: m === null ? null : Number(m[1]) });
  bar.tick(1);
}
bar.finish();

const ratesOf = (config: string, threads: number): number[] =>
  runs.filter((r) => r.config === config && r.threads === threads && r.rate !== null).map((r) => r.rate!);
const point = (config: string, threads: number): number | null => {
  const rs = ratesOf(config, threads);
  return rs.length === 0 ? null : median(rs);
};
const reference = ompi === null ? [] : referencePoints(new Map(threadCounts.map((n) => [n, ratesOf(OMPI, n)])));
const single = point(SINGLE, 0);
const line = (name: string): ChartSeries => ({
  name,
  points: threadCounts.flatMap((n) => {
    const y = point(name, n);
    return y === null ? [] : [{ x: n, y }];
  }),
});
const series: ChartSeries[] = [
  ...chosen.map((c) => {
    const s = line(c.name);
    return { name: s.name, points: single === null ? s.points : [{ x: 0, y: single }, ...s.points] };
  }),
  // the single-threaded rate as a flat line: where threads must at least arrive
  ...(single === null ? [] : [{ name: SINGLE, points: [0, ...threadCounts].map((x) => ({ x, y: single })) }]),
  ...(layout === 'pair' ? [{ name: SINGLE_N, points: [...(single === null ? [] : [{ x: 1, y: single }]), ...line(SINGLE_N).points] }] : []),
  ...(ompi === null ? [] : [{ name: referenceLegend(OMPI, reference), points: line(OMPI).points }]),
  // the best of the repeats beside the median: a collapsed point shows as the gap between the two
  ...(ompi === null || repeat < 2 ? [] : [{ name: `${OMPI}, best of ${repeat}`, points: reference.map((p) => ({ x: p.threads, y: p.best })) }]),
].filter((s) => s.points.length > 0);
const out = path.resolve(ROOT, values.out!);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(`${out}.json`, JSON.stringify({
  date: new Date().toISOString(), layout, repeat, iterations: Number(values.iterations), warmup: Number(values.warmup), runs, series,
  // Open MPI's points: median, best of the repeats, and why a point counts as collapsed (null: it does not)
  reference: ompi === null ? null : { name: OMPI, points: reference },
}, null, 2));
fs.writeFileSync(`${out}.svg`, renderLineChart(series, {
  title: `Neighbor message rate, ${layout} layout (median of ${repeat})`,
  xLabel: 'threads per process (0 = MPI_THREAD_SINGLE)',
  yLabel: 'aggregate rate (M messages/s)',
}));
console.log(`single-threaded: ${single?.toFixed(3)} M/s`);
for (const c of chosen) for (const n of threadCounts) {
  const y = point(c.name, n);
  if (y !== null && single !== null) console.log(`${c.name}, N=${n}: ${(y / single).toFixed(2)}x single-threaded`);
}
for (const p of reference) console.log(formatReferencePoint(OMPI, p));
// Issue 16's targets, where the sweep has the points: defaults against Open MPI's same layout, endpoints against N processes per side.
for (const n of threadCounts) {
  const dflt = point(CONFIGS[0]!.name, n);
  const om = reference.find((p) => p.threads === n);
  const ep = point(CONFIGS.find((c) => c.key === 'endpoints')!.name, n);
  const epEngine = point(CONFIGS.find((c) => c.key === 'endpoints-engine')!.name, n);
  const procsN = n === 1 ? single : point(SINGLE_N, n);
  if (dflt !== null && om !== undefined) {
    console.log(om.collapsed === null
      ? `target, N=${n}: defaults / Open MPI = ${(dflt / om.median).toFixed(2)}x (>= 1.0)`
      : `target, N=${n}: defaults / Open MPI not given: Open MPI collapsed (${om.collapsed}); against its best run only: ${(dflt / om.best).toFixed(2)}x`);
  }
  if (ep !== null && procsN !== null) console.log(`target, N=${n}: endpoints / ${n} single-threaded processes per side = ${(ep / procsN).toFixed(2)}x (>= 1.0)`);
  if (epEngine !== null && procsN !== null) console.log(`N=${n}: endpoints with engine receive / ${n} single-threaded processes per side = ${(epEngine / procsN).toFixed(2)}x`);
  if (ep !== null && epEngine !== null) console.log(`N=${n}: endpoints, thread receive / engine receive = ${(ep / epEngine).toFixed(2)}x`);
}
for (const s of series) console.log(`${s.name}: ${s.points.map((p) => `${p.x}:${p.y.toFixed(3)}`).join('  ')}`);
console.log(`wrote ${out}.json and ${out}.svg`);
