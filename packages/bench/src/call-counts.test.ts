/** call-counts.ts: the layer of a script, calls per message from two coverage runs, and the sums by layer. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { byLayer, layerOf, perMessage, readCounts } from './call-counts.ts';

describe('layerOf', () => {
  it('names core folders, other packages and Node', () => {
    expect(layerOf('file:///repo/packages/core/src/api/request.ts')).toBe('core/src/api');
    expect(layerOf('file:///repo/packages/core/src/index.ts')).toBe('core/src');
    expect(layerOf('file:///repo/packages/transport-tcp/src/frame-codec.ts')).toBe('transport-tcp');
    expect(layerOf('node:internal/timers')).toBe('node');
  });
});

/** A coverage directory with one file per isolate, as NODE_V8_COVERAGE writes it. */
function coverageDir(files: Record<string, { url: string; name: string; start: number; end: number; count: number }[]>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'call-counts-'));
  for (const [file, fns] of Object.entries(files)) {
    const result = fns.map((f) => ({ url: f.url, functions: [{ functionName: f.name, ranges: [{ startOffset: f.start, endOffset: f.end, count: f.count }] }] }));
    writeFileSync(path.join(dir, file), JSON.stringify({ result }));
  }
  return dir;
}

describe('perMessage and byLayer', () => {
  const api = 'file:///r/packages/core/src/api/comm.ts';
  const dirs: string[] = [];
  const make = (isend: number, timer: number, once: number): string => {
    const dir = coverageDir({
      'coverage-1-1-0.json': [
        { url: api, name: 'Isend', start: 10, end: 110, count: isend },
        { url: 'node:internal/timers', name: 'ref', start: 0, end: 50, count: timer },
        { url: api, name: 'init', start: 200, end: 260, count: once },
      ],
      'coverage-1-2-1.json': [{ url: api, name: 'Isend', start: 10, end: 110, count: isend }],
    });
    dirs.push(dir);
    return dir;
  };

  it('divides the extra calls by the extra messages, sums the isolates, and drops what did not grow', () => {
    const short = readCounts(make(100, 7, 1));
    const long = readCounts(make(1100, 507, 1));
    const rows = perMessage(short, long, 1000);
    expect(rows.map((r) => [r.name, r.calls])).toEqual([['comm.ts:Isend', 2], ['timers:ref', 0.5]]);
    expect(Object.fromEntries(byLayer(rows))).toEqual({ 'core/src/api': { calls: 2, functions: 1, chars: 100 }, node: { calls: 0.5, functions: 1, chars: 50 } });
    // One isolate only (--files=SUFFIX).
    expect(perMessage(readCounts(dirs[0]!, '-1.json'), readCounts(dirs[1]!, '-1.json'), 1000).map((r) => r.calls)).toEqual([1]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
});
