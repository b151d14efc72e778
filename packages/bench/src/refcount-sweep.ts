/**
 * The reference-counting figures of papers/refcount-gc.txt §VI: the neighbor
 * message rate of N threads sharing one communicator (refcount-rate.ts) for
 * --refcount naive, predefined and gc, with predefined and derived objects.
 *   Figure 4: aggregate rate against threads, one line per (strategy, objects);
 *   Figure 5: each strategy's rate relative to naive with the same objects.
 *
 *   npx tsx packages/bench/src/refcount-sweep.ts [--threads 1,2,4] [--repeat 3]
 *        [--iterations 10000] [--objects derived,predefined] [--peer remote|self] [--out docs/figures/refcount]
 *
 * --peer remote (default): 2 processes, thread i of one with thread i of the other.
 * --peer self: one process with one endpoint per thread, every thread its own
 * neighbor (refcount-rate.ts): the threads share only the objects' records.
 *
 * Every point is its own mpiexec job, one at a time; the strategies are
 * interleaved inside each repetition, each repetition starting with the next
 * strategy, so that a change of machine load hits them alike. Writes OUT.json (every run, medians, ratios), OUT-rate.svg and
 * OUT-relative.svg.
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
const PROGRAM = path.join(ROOT, 'packages/bench/src/refcount-rate.ts');
const STRATEGIES = ['naive', 'predefined', 'gc'] as const;

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1,2,4' },
    repeat: { type: 'string', default: '3' },
    iterations: { type: 'string', default: '10000' },
    objects: { type: 'string', default: 'derived,predefined' },
    peer: { type: 'string', default: 'remote' },
    out: { type: 'string', default: 'bench-results/refcount' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('usage: npx tsx packages/bench/src/refcount-sweep.ts [--threads 1,2,4] [--repeat 3] [--iterations 10000] [--objects derived,predefined] [--peer remote|self] [--out PREFIX]');
  process.exit(0);
}
if (values.peer !== 'remote' && values.peer !== 'self') {
  console.error(`refcount-sweep: --peer must be remote or self, got ${values.peer}`);
  process.exit(2);
}
const peer = values.peer;
const threadCounts = values.threads!.split(',').map(Number);
const repeat = Number(values.repeat);
const objectKinds = values.objects!.split(',').filter((o) => o === 'derived' || o === 'predefined');

interface Run { strategy: string; objects: string; threads: number; rate: number | null }
const runs: Run[] = [];
const plan: { strategy: string; objects: string; threads: number }[] = [];
for (let r = 0; r < repeat; r++) {
  // Each repetition starts with another strategy, so a load that rises or falls within a repetition hits them alike.
  const order = STRATEGIES.map((_, i) => STRATEGIES[(i + r) % STRATEGIES.length]!);
  for (const n of threadCounts) for (const objects of objectKinds) for (const strategy of order) plan.push({ strategy, objects, threads: n });
}
const bar = new ProgressBar({ total: plan.length, label: 'refcount sweep' });
for (const p of plan) {
  bar.tick(0, `${p.strategy}, ${p.objects}, ${p.threads} threads`);
  const placement = peer === 'self' ? ['-n', '1', '--endpoints', String(p.threads)] : ['-n', '2'];
  const argv = [...placement, '--refcount', p.strategy, '--timeout', '600', PROGRAM, '--threads', String(p.threads), '--peer', peer, '--objects', p.objects, '--iterations', values.iterations!];
  const res = spawnSync(MPIEXEC, argv, { cwd: ROOT, encoding: 'utf8', timeout: 700_000 });
  const m = /refcount-rate: ([0-9.]+) M/.exec(res.stdout ?? '');
  if (m === null) process.stderr.write(`\nrun failed: mpiexec ${argv.join(' ')}\n${res.stderr}\n`);
  runs.push({ ...p, rate: m === null ? null : Number(m[1]) });
  bar.tick(1);
}
bar.finish();

const point = (strategy: string, objects: string, threads: number): number | null => {
  const rs = runs.filter((r) => r.strategy === strategy && r.objects === objects && r.threads === threads && r.rate !== null).map((r) => r.rate!);
  return rs.length === 0 ? null : median(rs);
};
const rate: ChartSeries[] = [];
const relative: ChartSeries[] = [];
for (const objects of objectKinds) {
  for (const strategy of STRATEGIES) {
    const pts = threadCounts.flatMap((n) => {
      const y = point(strategy, objects, n);
      return y === null ? [] : [{ x: n, y }];
    });
    rate.push({ name: `${strategy}, ${objects}`, points: pts });
    relative.push({
      name: `${strategy}, ${objects}`,
      points: threadCounts.flatMap((n) => {
        const y = point(strategy, objects, n);
        const base = point('naive', objects, n);
        return y === null || base === null ? [] : [{ x: n, y: y / base }];
      }),
    });
  }
}
const out = path.resolve(ROOT, values.out!);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(`${out}.json`, JSON.stringify({ date: new Date().toISOString(), peer, repeat, iterations: Number(values.iterations), runs, rate, relative }, null, 2));
fs.writeFileSync(`${out}-rate.svg`, renderLineChart(rate, {
  title: `Neighbor message rate, threads sharing one communicator, peer ${peer} (median of ${repeat})`,
  xLabel: 'threads per process',
  yLabel: 'aggregate rate (M messages/s)',
}));
fs.writeFileSync(`${out}-relative.svg`, renderLineChart(relative, {
  title: 'Rate relative to naive reference counting (same objects)',
  xLabel: 'threads per process',
  yLabel: 'rate / naive rate',
}));
for (const s of relative) console.log(`${s.name}: ${s.points.map((p) => `${p.x}:${p.y.toFixed(3)}`).join('  ')}`);
for (const s of rate) console.log(`${s.name} (M/s): ${s.points.map((p) => `${p.x}:${p.y.toFixed(4)}`).join('  ')}`);
console.log(`wrote ${out}.json, ${out}-rate.svg and ${out}-relative.svg`);
