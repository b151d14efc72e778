/**
 * Issue 15's targets checked from the rounds of reference/headline.sh: each
 * round runs compare.sh once per comparison (--repeat 1 --json), so every
 * implementation of a comparison shares the round's minutes and load. The
 * table gives, per target, each implementation's median over the rounds (of
 * compare.sh's metric: for a time, the mean per call, compare-extract.sh), the
 * ratio of the medians, and in how many rounds the target held on that
 * round's own ratio: a target that holds on the medians but in only 2 of 5
 * rounds sits in this machine's noise and is reported as such.
 *
 *   npx tsx packages/bench/src/headline-table.ts DIR [DIR...]
 *
 * DIR holds headline.sh's files, named STEP-ROUND.json (msgrate-1.json,
 * allreduce8-1.json, ...), each compare.sh's --json document. Given several
 * DIRs (headline.sh runs on different days or machines), it prints each one's
 * table and then, per target, in how many of the runs it was met on that run's
 * medians: a headline figure counts only when it holds on at least two runs of
 * different days or machines and on every run measured (issue 40).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CompareResult } from './compare-chart.ts';
import { median } from './stats.ts';

/** One of issue 15's targets: tsmpi's figure against another implementation's. */
export interface Target {
  /** Which headline.sh step measured it (the file prefix). */
  readonly step: string;
  /** compare.sh's metric name, e.g. msgrate@1000. */
  readonly metric: string;
  /** The implementation tsmpi is held against. */
  readonly versus: 'openmpi' | 'node' | 'node-poll';
  /** Whether a larger figure is better (a rate) or worse (a time). */
  readonly higherIsBetter: boolean;
  /** The target on tsmpi / versus: at least this for a rate, at most this for a time. */
  readonly bound: number;
  /** What the table calls it. */
  readonly label: string;
}

/** Issue 15, "Performance to reach". */
export const ISSUE_15_TARGETS: readonly Target[] = [
  { step: 'msgrate', metric: 'msgrate@1000', versus: 'openmpi', higherIsBetter: true, bound: 1.0, label: 'neighbor rate, 1,000 iterations (M msgs/s)' },
  { step: 'msgrate', metric: 'msgrate@10000', versus: 'openmpi', higherIsBetter: true, bound: 1.3, label: 'neighbor rate, 10,000 iterations (M msgs/s)' },
  { step: 'allreduce8', metric: '8-byte@1000', versus: 'openmpi', higherIsBetter: false, bound: 1.5, label: 'allreduce 8 B, 4 processes, 1,000 calls (mean µs per call)' },
  { step: 'allreduce8', metric: '8-byte@10000', versus: 'openmpi', higherIsBetter: false, bound: 1.5, label: 'allreduce 8 B, 4 processes, 10,000 calls (mean µs per call)' },
  { step: 'allreduce8m', metric: '8388608-byte', versus: 'openmpi', higherIsBetter: false, bound: 1.0, label: 'allreduce 8 MiB, 4 processes (mean µs per call)' },
  { step: 'pingpong', metric: '0-byte@1000', versus: 'node', higherIsBetter: false, bound: 1.3, label: 'ping-pong 0 B, 1,000 iterations (mean µs per round trip)' },
  // The same bound against plain Node sockets that poll the event loop as tsmpi's blocking calls wait (reference/raw-node.ts --poll):
  // the floor of tsmpi's way of waiting, where the row above is the floor of Node's own (epoll).
  { step: 'pingpong', metric: '0-byte@1000', versus: 'node-poll', higherIsBetter: false, bound: 1.3, label: 'ping-pong 0 B, 1,000 iterations, against polling Node (mean µs per round trip)' },
];

/** One target's outcome over the rounds. */
export interface TargetRow {
  readonly target: Target;
  /** tsmpi's median over the rounds, or NaN when no round measured it. */
  readonly ours: number;
  /** The other implementation's median over the rounds, or NaN. */
  readonly theirs: number;
  /** ours / theirs. */
  readonly ratio: number;
  /** Rounds that measured both. */
  readonly rounds: number;
  /** Of those, the rounds whose own ratio met the bound. */
  readonly heldIn: number;
}

function figure(result: CompareResult, impl: string, metric: string): number | undefined {
  const r = result.results.find((x) => x.impl === impl && x.metric === metric);
  return r === undefined || !Number.isFinite(r.median) ? undefined : r.median;
}

function meets(target: Target, ratio: number): boolean {
  return target.higherIsBetter ? ratio >= target.bound : ratio <= target.bound;
}

/**
 * Each target's medians, ratio and rounds held.
 * @param rounds - per headline step, that step's compare.sh documents, one per round
 * @param targets - what to check (default: issue 15's)
 */
export function targetRows(rounds: ReadonlyMap<string, readonly CompareResult[]>, targets: readonly Target[] = ISSUE_15_TARGETS): TargetRow[] {
  return targets.map((target) => {
    const ours: number[] = [];
    const theirs: number[] = [];
    let heldIn = 0;
    for (const result of rounds.get(target.step) ?? []) {
      const a = figure(result, 'tsmpi', target.metric);
      const b = figure(result, target.versus, target.metric);
      if (a === undefined || b === undefined) continue;
      ours.push(a);
      theirs.push(b);
      if (meets(target, a / b)) heldIn++;
    }
    const mOurs = median(ours);
    const mTheirs = median(theirs);
    return { target, ours: mOurs, theirs: mTheirs, ratio: mOurs / mTheirs, rounds: ours.length, heldIn };
  });
}

/** The rows as a Markdown table, ready for docs/PERFORMANCE.md. */
export function markdownTable(rows: readonly TargetRow[]): string {
  const versusName = { openmpi: 'Open MPI', node: 'plain Node', 'node-poll': 'polling Node' } as const;
  const fmt = (x: number): string => (Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
  const lines = [
    '| target | tsmpi | against | ratio | bound | met on the medians | rounds it held |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const bound = `${r.target.higherIsBetter ? '>=' : '<='} ${r.target.bound.toFixed(1)}x`;
    const met = Number.isNaN(r.ratio) ? 'not measured' : meets(r.target, r.ratio) ? 'yes' : '**no**';
    lines.push(`| ${r.target.label} | ${fmt(r.ours)} | ${versusName[r.target.versus]} ${fmt(r.theirs)} | ${Number.isNaN(r.ratio) ? '-' : `${r.ratio.toFixed(2)}x`} | ${bound} | ${met} | ${r.heldIn} of ${r.rounds} |`);
  }
  return lines.join('\n');
}

/** One target over several headline.sh runs (directories). */
export interface AcrossRow {
  readonly target: Target;
  /** Runs that measured the target. */
  readonly measuredIn: number;
  /** Of those, the runs whose ratio of the medians met the bound. */
  readonly metIn: number;
  /** Measured in at least two runs and met in every one of them. */
  readonly holds: boolean;
}

/**
 * Each target's outcome across runs: `runs[i]` is targetRows() of run i, every run over the same targets.
 * @example heldAcrossRuns([targetRows(readRounds(dayOne)), targetRows(readRounds(dayTwo))]);
 */
export function heldAcrossRuns(runs: readonly (readonly TargetRow[])[]): AcrossRow[] {
  const first = runs[0] ?? [];
  return first.map((row, i) => {
    let measuredIn = 0;
    let metIn = 0;
    for (const run of runs) {
      const r = run[i];
      if (r === undefined || Number.isNaN(r.ratio) || r.rounds === 0) continue;
      measuredIn++;
      if (meets(r.target, r.ratio)) metIn++;
    }
    return { target: row.target, measuredIn, metIn, holds: measuredIn >= 2 && metIn === measuredIn };
  });
}

/** The across-runs rows as a Markdown table. */
export function markdownAcrossTable(rows: readonly AcrossRow[]): string {
  const lines = ['| target | bound | met on the medians | holds on every run (two at least) |', '|---|---|---|---|'];
  for (const r of rows) {
    const bound = `${r.target.higherIsBetter ? '>=' : '<='} ${r.target.bound.toFixed(1)}x`;
    lines.push(`| ${r.target.label} | ${bound} | ${r.metIn} of ${r.measuredIn} runs | ${r.holds ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}

/** headline.sh's documents in `dir`, grouped by step (file name STEP-ROUND.json), rounds in order. */
export function readRounds(dir: string): Map<string, CompareResult[]> {
  const byStep = new Map<string, { round: number; result: CompareResult }[]>();
  for (const name of fs.readdirSync(dir)) {
    const m = /^(.+)-(\d+)\.json$/.exec(name);
    if (m === null) continue;
    const list = byStep.get(m[1]!) ?? [];
    list.push({ round: Number(m[2]), result: JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CompareResult });
    byStep.set(m[1]!, list);
  }
  return new Map([...byStep].map(([step, list]) => [step, list.sort((a, b) => a.round - b.round).map((x) => x.result)]));
}

function main(): void {
  const dirs = process.argv.slice(2);
  if (dirs.length === 0 || dirs[0] === '-h' || dirs[0] === '--help') {
    console.error('usage: npx tsx packages/bench/src/headline-table.ts DIR [DIR...]   (DIR: packages/bench/reference/headline.sh --out DIR)');
    process.exitCode = dirs.length === 0 ? 2 : 0;
    return;
  }
  const runs: TargetRow[][] = [];
  for (const dir of dirs) {
    const rounds = readRounds(dir);
    if (rounds.size === 0) {
      console.error(`headline-table: ${dir} holds no STEP-ROUND.json file of headline.sh`);
      process.exitCode = 2;
      return;
    }
    const first = [...rounds.values()][0]![0]!;
    if (runs.length > 0) console.log('');
    console.log(`issue 15's targets: ${first.host}, ${first.cores ?? '?'} cores, rounds from ${first.date}; medians over the rounds, ratio tsmpi / other`);
    const rows = targetRows(rounds);
    console.log(markdownTable(rows));
    runs.push(rows);
  }
  if (runs.length > 1) {
    console.log(`\nacross the ${runs.length} runs (${dirs.join(', ')}):`);
    console.log(markdownAcrossTable(heldAcrossRuns(runs)));
  }
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) main();
