/**
 * The run-length chart of issue 15: what reference/compare.sh measured with
 * --lengths, drawn as rate (or time) against the number of timed iterations,
 * one line per implementation, on a log x axis (1,000 / 10,000 / 100,000).
 *
 *   npx tsx packages/bench/src/compare-chart.ts RESULT.json OUT.svg [--metric msgrate] [--title TEXT]
 *
 * RESULT.json is compare.sh's --json output; its metrics are named
 * "METRIC@ITERATIONS" (msgrate@1000, 8-byte@10000, 8-byte-cpu@1000, ...).
 * --metric picks one (default: the first in the file: for the ping-pong and
 * the allreduce, SIZE-byte, the mean per call, which is what ratios between the
 * lines are read on; SIZE-byte-median, -p99 and -cpu are there too). The subtitle-like
 * title says which machine, when and under what load the figures were taken.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { renderLineChart, type ChartSeries } from './svg-chart.ts';

/** What compare.sh --json writes, as far as used here. */
export interface CompareResult {
  readonly bench: string;
  readonly date: string;
  readonly host: string;
  readonly cores?: number;
  readonly loadavg?: string;
  readonly unit: string;
  readonly results: readonly { impl: string; metric: string; median: number }[];
}

const LABELS: Readonly<Record<string, string>> = {
  tsmpi: 'tsmpi', openmpi: 'Open MPI (defaults)', 'openmpi-nobind': 'Open MPI --bind-to none', mpich: 'MPICH', node: 'plain Node sockets (unix)',
  'node-poll': 'plain Node sockets, polling (unix)',
};

/**
 * One series per implementation: x = timed iterations, y = the median of `metric` at that length.
 * @param result - compare.sh's JSON document
 * @param metric - metric name without the "@N" suffix
 * @returns the series, in compare.sh's implementation order; metrics without a length are ignored
 */
export function lengthSeries(result: CompareResult, metric: string): ChartSeries[] {
  const byImpl = new Map<string, { x: number; y: number }[]>();
  for (const r of result.results) {
    const at = r.metric.lastIndexOf('@');
    if (at < 0 || r.metric.slice(0, at) !== metric) continue;
    const x = Number(r.metric.slice(at + 1));
    if (!Number.isFinite(x) || !Number.isFinite(r.median)) continue;
    const points = byImpl.get(r.impl) ?? [];
    points.push({ x, y: r.median });
    byImpl.set(r.impl, points);
  }
  return [...byImpl].map(([impl, points]) => ({ name: LABELS[impl] ?? impl, points }));
}

/** The metric names (without "@N") in the order they first appear. */
export function lengthMetrics(result: CompareResult): string[] {
  const names: string[] = [];
  for (const r of result.results) {
    const at = r.metric.lastIndexOf('@');
    if (at > 0 && !names.includes(r.metric.slice(0, at))) names.push(r.metric.slice(0, at));
  }
  return names;
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { metric: { type: 'string' }, title: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true || positionals.length !== 2) {
    console.error('usage: npx tsx packages/bench/src/compare-chart.ts RESULT.json OUT.svg [--metric NAME] [--title TEXT]');
    process.exitCode = values.help === true ? 0 : 2;
    return;
  }
  const [input, output] = positionals as [string, string];
  const result = JSON.parse(fs.readFileSync(input, 'utf8')) as CompareResult;
  const metrics = lengthMetrics(result);
  const metric = values.metric ?? metrics[0];
  if (metric === undefined || !metrics.includes(metric)) {
    console.error(`compare-chart: ${input} has no per-length metric ${metric ?? ''} (has: ${metrics.join(', ') || 'none; run compare.sh with --lengths'})`);
    process.exitCode = 2;
    return;
  }
  const title = values.title ?? `${result.bench} ${metric}: ${result.host}, ${result.cores ?? '?'} cores, ${result.date}${result.loadavg === undefined ? '' : `, load ${result.loadavg.split(' ')[0]}`}`;
  fs.writeFileSync(output, renderLineChart(lengthSeries(result, metric), {
    title, xLabel: 'timed iterations (after the benchmark\'s warm-up)', yLabel: result.unit.split(',')[0]!, xScale: 'log',
  }));
  console.log(`wrote ${output}`);
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) main();
