import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { decodeTraceDump, encodeTraceDump, type TraceThread } from '@tsmpi/core/pmi';
import { addRankTrace, traceEventLines, traceFileChunks, withTraceSetting, writeTraceFile, type RankTrace } from './trace-file.ts';
import { parseArgs, type LaunchOptions } from './options.ts';

type Call = [start: number, dur: number, name: number, ctx: number, peer: number, tag: number, bytes: number];
type Msg = [call: number, isRecv: number, ctx: number, src: number, dst: number, tag: number, order: number];

function thread(names: string[], calls: Call[], msgs: Msg[]): TraceThread {
  return { tid: 0, names, comms: [[0, 'COMM_WORLD']], calls: Float64Array.from(calls.flat()), msgs: Float64Array.from(msgs.flat()), dropped: 0 };
}

interface Ev { name: string; ph: string; pid: number; tid: number; ts?: number; dur?: number; id?: number; args?: Record<string, unknown> }

/** The events of a job's traces, each line parsed (each must be JSON of its own). */
function mergeTraces(traces: RankTrace[]): Ev[] {
  return [...traceEventLines(traces)].map((l) => JSON.parse(l) as Ev);
}

function flows(events: Ev[]): { from: [number, number]; to: [number, number] }[] {
  const s = new Map<number, [number, number]>();
  const out: { from: [number, number]; to: [number, number] }[] = [];
  for (const e of events) if (e.ph === 's') s.set(e.id!, [e.pid, e.ts!]);
  for (const e of events) if (e.ph === 'f') out.push({ from: s.get(e.id!)!, to: [e.pid, e.ts!] });
  return out;
}

describe('trace format', () => {
  it('round-trips a dump and refuses malformed bytes', () => {
    const t = thread(['Comm.send'], [[1, 2, 0, 0, 1, 5, 8]], [[0, 0, 0, 0, 1, 5, 0]]);
    const back = decodeTraceDump(encodeTraceDump({ offsetMs: -3.5, threads: [t] }))!;
    expect(back.offsetMs).toBe(-3.5);
    expect([...back.threads[0]!.calls]).toEqual([1, 2, 0, 0, 1, 5, 8]);
    expect([...back.threads[0]!.msgs]).toEqual([0, 0, 0, 0, 1, 5, 0]);
    expect(back.threads[0]!.comms).toEqual([[0, 'COMM_WORLD']]);
    expect(decodeTraceDump(Uint8Array.of(1, 2, 3))).toBeNull();
    expect(decodeTraceDump(encodeTraceDump({ offsetMs: 0, threads: [{ ...t, calls: new Float64Array(3) }] }))).toBeNull();
  });
});

describe('mergeTraces', () => {
  it('aligns clocks by each rank\'s offset and starts at the earliest event', () => {
    // rank 1's clock is 1000 ms behind mpiexec's: its call at 1005 (own) is at 2005, 5 ms after rank 0's
    const r0 = { rank: 0, host: 'a', dump: { offsetMs: 0, threads: [thread(['Comm.barrier'], [[2000, 1, 0, 0, -1, -1, -1]], [])] } };
    const r1 = { rank: 1, host: 'b', dump: { offsetMs: 1000, threads: [thread(['Comm.barrier'], [[1005, 1, 0, 0, -1, -1, -1]], [])] } };
    const x = mergeTraces([r1, r0]).filter((e) => e.ph === 'X');
    expect(x.map((e) => [e.pid, e.ts, e.dur])).toEqual([[0, 0, 1000], [1, 5000, 1000]]);
    expect(x[0]!.args).toEqual({ comm: 'COMM_WORLD' });
  });

  it('pairs the n-th send of (ctx, src, dst, tag) with the n-th receive in post order, whatever order receives completed in', () => {
    // rank 0 sends tag 7 twice then tag 8 to rank 1; rank 1 posted receives: tag 8 (order 0), then two tag 7 (orders 1, 2),
    // and the second tag-7 receive completed first (its row comes first).
    const s = thread(['Comm.send'], [[0, 1, 0, 0, 1, 7, -1], [10, 1, 0, 0, 1, 7, -1], [20, 1, 0, 0, 1, 8, -1]],
      [[0, 0, 0, 0, 1, 7, 0], [1, 0, 0, 0, 1, 7, 1], [2, 0, 0, 0, 1, 8, 2]]);
    const r = thread(['Request.wait'], [[100, 1, 0, 0, 0, 7, -1], [200, 1, 0, 0, 0, 7, -1], [300, 1, 0, 0, 0, 8, -1]],
      [[0, 1, 0, 0, 1, 7, 2], [1, 1, 0, 0, 1, 7, 1], [2, 1, 0, 0, 1, 8, 0]]);
    const f = flows(mergeTraces([{ rank: 0, host: 'h', dump: { offsetMs: 0, threads: [s] } }, { rank: 1, host: 'h', dump: { offsetMs: 0, threads: [r] } }]));
    const byFrom = new Map(f.map((p) => [p.from[1], p.to[1]]));
    // first send (t=0) -> the receive posted first among tag 7 (order 1: completed at 200 ms); second -> order 2 (100 ms); tag 8 -> 300 ms
    expect(Math.round(byFrom.get(0)! / 1000)).toBe(201);
    expect(Math.round(byFrom.get(10_000)! / 1000)).toBe(101);
    expect(Math.round(byFrom.get(20_000)! / 1000)).toBe(301);
    expect(f).toHaveLength(3);
  });

  it('ends each arrow strictly inside the slice that completed its receive, as the file writes them', () => {
    // A receive completed by a waitall of 22.7486724 ms at 3009.7194824 ms after the first event (a
    // msgrate trace's): written as ts 3009719.482 and dur 22748.672 µs, whose floating-point sum falls
    // short of 3032468.154; the arrow once ended there, outside the slice for a reader that adds them.
    const s = thread(['Comm.Isend'], [[0, 0.001, 0, 0, 1, 0, 0]], [[0, 0, 0, 0, 1, 0, 0]]);
    const r = thread(['Request.waitall'], [[3009.7194824, 22.7486724, 0, 0, -1, -1, -1]], [[0, 1, 0, 0, 1, 0, 0]]);
    const ev = mergeTraces([{ rank: 0, host: 'h', dump: { offsetMs: 0, threads: [s] } }, { rank: 1, host: 'h', dump: { offsetMs: 0, threads: [r] } }]);
    const slice = ev.find((e) => e.ph === 'X' && e.pid === 1)!;
    expect([slice.ts, slice.dur]).toEqual([3009719.482, 22748.672]);
    const [arrow] = flows(ev);
    expect(arrow!.to[1]).toBe(3032468.153);
    expect(arrow!.to[1]).toBeLessThan(slice.ts! + slice.dur!);
    expect(arrow!.to[1]).toBeGreaterThan(slice.ts!);
    // a slice shorter than a nanosecond of rounding: the arrow ends at its start
    const tiny = thread(['Request.wait'], [[5, 0.0000004, 0, 0, -1, -1, -1]], [[0, 1, 0, 0, 1, 0, 0]]);
    const [end] = flows(mergeTraces([{ rank: 0, host: 'h', dump: { offsetMs: 0, threads: [s] } }, { rank: 1, host: 'h', dump: { offsetMs: 0, threads: [tiny] } }]));
    expect(end!.to[1]).toBe(5000);
  });

  it('draws no arrow for a send without a receive, nor across contexts or tags', () => {
    const s = thread(['Comm.send'], [[0, 1, 0, 0, 1, 7, -1]], [[0, 0, 0, 0, 1, 7, 0]]);
    const r = thread(['Comm.recv'], [[5, 1, 0, 2, 0, 7, -1]], [[0, 1, 2, 0, 1, 7, 0]]);
    expect(flows(mergeTraces([{ rank: 0, host: 'h', dump: { offsetMs: 0, threads: [s] } }, { rank: 1, host: 'h', dump: { offsetMs: 0, threads: [r] } }]))).toEqual([]);
  });

  it('writes valid JSON that names ranks without a trace', () => {
    const text = [...traceFileChunks([{ rank: 0, host: 'h', dump: { offsetMs: 0, threads: [thread(['Comm.barrier'], [[0, 1, 0, 0, -1, -1, -1]], [])] } }], [1])].join('');
    const doc = JSON.parse(text) as { traceEvents: { ph: string }[]; otherData: { ranksWithoutTrace: number[] } };
    expect(doc.otherData.ranksWithoutTrace).toEqual([1]);
    expect(doc.traceEvents.filter((e) => e.ph === 'X')).toHaveLength(1);
  });
});

describe('the trace file', () => {
  it('is written whole from many chunks without a warning (each drain wait used to leave an error listener)', async () => {
    const n = 120_000; // about 15 MB of JSON: more than ten 1 MB chunks
    const calls = new Float64Array(n * 7);
    for (let i = 0; i < n; i++) calls.set([i, 0.5, 0, 0, -1, -1, -1], i * 7);
    const dump = encodeTraceDump({ offsetMs: 0, threads: [{ tid: 0, names: ['Comm.barrier'], comms: [[0, 'COMM_WORLD']], calls, msgs: new Float64Array(0), dropped: 0 }] });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'trace-file-'));
    const warnings: string[] = [];
    const onWarning = (w: Error): void => { warnings.push(w.message); };
    process.on('warning', onWarning);
    try {
      const file = path.join(dir, 'trace.json');
      await writeTraceFile(file, [{ rank: 0, host: 'h' }], new Map([[0, [dump]]]), pino({ level: 'silent' }));
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: { ph: string }[] };
      expect(doc.traceEvents.filter((e) => e.ph === 'X')).toHaveLength(n);
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a rank\'s several traces', () => {
  it('come one per thread: every thread is a track of its rank, named once', () => {
    const main = thread(['Comm.send'], [[0, 1, 0, 0, 1, 7, -1]], [[0, 0, 0, 0, 1, 7, 0]]);
    const worker = { ...thread(['Comm.recv'], [[5, 1, 0, 0, 0, 7, 4]], [[0, 1, 0, 0, 1, 7, 1]]), tid: 3 };
    const ev = mergeTraces([{ rank: 0, host: 'h', dump: { offsetMs: 0, threads: [main] } }, { rank: 0, host: 'h', dump: { offsetMs: 0, threads: [worker] } }]);
    expect(ev.filter((e) => e.name === 'process_name')).toHaveLength(1);
    expect(ev.filter((e) => e.name === 'thread_name').map((e) => e.args!['name'])).toEqual(['main', 'thread 3']);
    // endpoint 0 sends to endpoint 1 (main) and endpoint 1 receives it (thread 3): one arrow between the tracks
    const s = ev.find((e) => e.ph === 's')!;
    const f = ev.find((e) => e.ph === 'f')!;
    expect([s.tid, f.tid]).toEqual([0, 3]);
  });

  it('are kept up to a bound per rank', () => {
    const m = new Map<number, Uint8Array[]>();
    for (let i = 0; i < 128; i++) expect(addRankTrace(m, 2, new Uint8Array(1))).toBe(true);
    expect(addRankTrace(m, 2, new Uint8Array(1))).toBe(false);
    expect(m.get(2)).toHaveLength(128);
  });
});

describe('withTraceSetting', () => {
  const opts = (argv: string[]): LaunchOptions => {
    const p = parseArgs(argv);
    if (p.kind !== 'run') throw new Error(p.kind);
    return p.options;
  };
  it('asks the ranks to record under --trace unless the environment sets traceEvents', () => {
    expect(withTraceSetting(opts(['--trace', 't.json', 'a.js']), {}).settings.get('traceEvents')).toBe(200_000);
    expect(withTraceSetting(opts(['--trace', 't.json', 'a.js']), { TSMPI_TRACE_EVENTS: '10' }).settings.has('traceEvents')).toBe(false);
    expect(withTraceSetting(opts(['a.js']), {}).settings.has('traceEvents')).toBe(false);
  });
});
