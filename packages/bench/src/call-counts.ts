/**
 * Calls per message of every function on the path of a message, counted
 * exactly from V8's coverage: run a benchmark twice under NODE_V8_COVERAGE
 * (Node then writes each isolate's precise coverage, with call counts, at
 * exit), once short and once longer, and this script divides the difference of
 * each function's count by the extra messages. ADR 0020
 * (docs/adr/0020-lean-common-path.md) traced the path of one message with it.
 *
 *   NODE_V8_COVERAGE=/tmp/short pnpm exec mpiexec -n 2 --wait block packages/bench/src/msgrate-curve.ts --blocks 1 --block 100
 *   NODE_V8_COVERAGE=/tmp/long  pnpm exec mpiexec -n 2 --wait block packages/bench/src/msgrate-curve.ts --blocks 1 --block 1100
 *   npx tsx packages/bench/src/call-counts.ts /tmp/short /tmp/long --messages 24000 [--files=SUFFIX] [--top N]
 *
 * --messages: how many more messages the long run handled than the short one,
 * counted as the unit of the table (msgrate-curve: 1,000 more iterations x 12
 * messages x 2 ranks = 24,000 message pairs of a send, a receive and an
 * arrival). --files=SUFFIX: only coverage files whose name ends in SUFFIX (one
 * isolate per file: e.g. `-0.json` is each process's main thread). Prints
 * the functions run at least 0.005 times per message, most called first, then
 * calls, distinct functions and their source characters (as loaded: a proxy
 * for bytecode) by layer: the package folder for tsmpi, "node" for Node's
 * internals. Functions whose source is longer than 20,000 characters (module
 * bodies) are left out of the character sums.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

/** A function of one script, as V8's coverage names it. */
export interface FunctionKey {
  readonly layer: string;
  readonly name: string;
}

/** One function's call count in one run, and the length of its source. */
export interface FunctionCount extends FunctionKey {
  readonly id: string;
  readonly calls: number;
  readonly chars: number;
}

/** The layer of a script URL: `core/src/api` style for tsmpi's packages, `bench`, `transport-tcp`, else `node`. */
export function layerOf(url: string): string {
  const m = /\/packages\/([^/]+)\/(?:src\/([^/]+)\/)?/.exec(url);
  if (m === null) return 'node';
  if (m[1] === 'core' && m[2] !== undefined && !m[2].includes('.')) return `core/src/${m[2]}`;
  return m[1] === 'core' ? 'core/src' : m[1]!;
}

interface CoverageFile {
  result: { url: string; functions: { functionName: string; ranges: { startOffset: number; endOffset: number; count: number }[] }[] }[];
}

/** Every function's calls, summed over the coverage files of `dir` (those ending in `suffix`). */
export function readCounts(dir: string, suffix = '.json'): Map<string, FunctionCount> {
  const out = new Map<string, FunctionCount>();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith(suffix) || !file.endsWith('.json')) continue;
    const cov = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CoverageFile;
    for (const script of cov.result) {
      const layer = layerOf(script.url);
      const shortUrl = script.url.replace(/^.*\/packages\//, '');
      for (const fn of script.functions) {
        const r = fn.ranges[0];
        if (r === undefined) continue;
        const id = `${shortUrl}:${fn.functionName}:${r.startOffset}`;
        const prev = out.get(id);
        out.set(id, { id, layer, name: `${shortUrl.replace(/^.*\//, '')}:${fn.functionName || '(anonymous)'}`, calls: (prev?.calls ?? 0) + r.count, chars: r.endOffset - r.startOffset });
      }
    }
  }
  return out;
}

/** Calls per message of each function: (long - short) / messages, those at or above `min`, most called first. */
export function perMessage(short: ReadonlyMap<string, FunctionCount>, long: ReadonlyMap<string, FunctionCount>, messages: number, min = 0.005): FunctionCount[] {
  const rows: FunctionCount[] = [];
  for (const [id, l] of long) {
    const calls = (l.calls - (short.get(id)?.calls ?? 0)) / messages;
    if (calls >= min) rows.push({ ...l, calls });
  }
  return rows.sort((a, b) => b.calls - a.calls || a.name.localeCompare(b.name));
}

/** Sums by layer: calls per message, distinct functions, their source characters (module bodies left out). */
export function byLayer(rows: readonly FunctionCount[]): Map<string, { calls: number; functions: number; chars: number }> {
  const out = new Map<string, { calls: number; functions: number; chars: number }>();
  for (const r of rows) {
    const s = out.get(r.layer) ?? { calls: 0, functions: 0, chars: 0 };
    s.calls += r.calls;
    s.functions++;
    if (r.chars <= 20_000) s.chars += r.chars;
    out.set(r.layer, s);
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { messages: { type: 'string' }, files: { type: 'string', default: '.json' }, top: { type: 'string', default: '200' } },
  });
  const messages = Number(values.messages);
  const top = Number(values.top);
  if (positionals.length !== 2 || !(messages > 0) || !Number.isInteger(top) || top < 0) {
    console.error('usage: call-counts.ts SHORT_COVERAGE_DIR LONG_COVERAGE_DIR --messages N [--files SUFFIX] [--top N] (N > 0)');
    process.exit(2);
  }
  const rows = perMessage(readCounts(positionals[0]!, values.files), readCounts(positionals[1]!, values.files), messages);
  for (const r of rows.slice(0, top)) console.log(`${r.calls.toFixed(3).padStart(9)}  ${r.layer.padEnd(22)} ${r.name}`);
  console.log('\nlayer                   calls/msg  functions  source chars');
  let calls = 0;
  let functions = 0;
  let chars = 0;
  for (const [layer, s] of [...byLayer(rows)].sort((a, b) => b[1].calls - a[1].calls)) {
    console.log(`${layer.padEnd(22)} ${s.calls.toFixed(2).padStart(10)} ${String(s.functions).padStart(10)} ${String(s.chars).padStart(13)}`);
    calls += s.calls;
    functions += s.functions;
    chars += s.chars;
  }
  console.log(`${'total'.padEnd(22)} ${calls.toFixed(2).padStart(10)} ${String(functions).padStart(10)} ${String(chars).padStart(13)}`);
}
