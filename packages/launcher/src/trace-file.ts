/**
 * mpiexec --trace FILE: asks the ranks to record (setting traceEvents), then merges the traces the ranks hand over at finalize (@tsmpi/core/pmi's
 * trace-format) into one Chrome trace event file, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open (format: "Trace Event Format", Google, the JSON Array/Object form).
 *
 *   pid = rank, tid = the thread's id in its process (0: the main thread); a process_name and a
 *   thread_name metadata event ('M') each;
 *   one complete event ('X') per call: name `Comm.send`..., ts/dur in microseconds from the
 *   earliest event of the job, args { comm, peer, tag, bytes } where known;
 *   a flow ('s' in the send's slice, 'f' with bp 'e' in the slice that completed the receive)
 *   from every send to the receive that matched it. Flows are most of a trace's bytes (two per
 *   message), so they carry only what viewers key them by: Perfetto pairs 's' and 'f' by
 *   (id, cat, name), so they have no cat and a one-letter name (a name kept for chrome://tracing).
 *
 * Clocks: each rank's times are its own clock plus the offset it measured to mpiexec's at
 * wire-up (core's pmi/clock-offset.ts), so ranks on other hosts line up (to half a round trip).
 *
 * Pairing (MPI 4.0 3.5, non-overtaking): messages are named by (context id, source endpoint,
 * destination endpoint, tag); the n-th send of that name, in the sender's post order, is
 * received by the n-th receive of that name, in the receiver's post order. A send without a
 * receive (the job ended, or the receive was not traced) gets no arrow.
 *
 * Output streams: the file is written in chunks of about a megabyte as events are formatted, each
 * event one line of JSON built from the tables' numbers and the threads' interned names (escaped
 * once per name), with no object per event; message ends are paired through typed columns sorted by
 * (context, source, destination, tag, kind, order). Times have nanosecond precision (3 decimals of µs).
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '@tsmpi/core/pmi';
import { decodeTraceDump, TRACE_CALL, TRACE_MSG, type TraceDump } from '@tsmpi/core/pmi';
import type { LaunchOptions } from './options.ts';
import { findSetting } from './settings-flags.ts';

/** One thread's trace as mpiexec received it (a rank sends one per thread). */
export interface RankTrace {
  readonly rank: number;
  readonly host: string;
  readonly dump: TraceDump;
}

/** Traces kept per rank: one per MPI thread a process can have (core's MAX_THREADS), and a margin. */
const MAX_TRACES_PER_RANK = 128;

/** Adds a trace `rank` sent to `traces` (its list, one per thread); beyond MAX_TRACES_PER_RANK, false (left out). */
export function addRankTrace(traces: Map<number, Uint8Array[]>, rank: number, data: Uint8Array): boolean {
  let list = traces.get(rank);
  if (list === undefined) traces.set(rank, (list = []));
  if (list.length >= MAX_TRACES_PER_RANK) return false;
  list.push(data);
  return true;
}

/** Integer nanoseconds as the file's µs with 3 decimals, as short as JSON allows. */
function us(ns: number): string {
  return String(ns / 1000);
}

/** Message ends of the whole job in columns (no object per end), to be paired by sorting. */
class MsgEnds {
  n = 0;
  key: Float64Array[] = [];
  /** integer ns from the job's first event */
  readonly ts: Float64Array;
  readonly pid: Int32Array;
  readonly tid: Int32Array;
  constructor(capacity: number) {
    // ctx, src, dst, tag, isRecv, order
    for (let k = 0; k < 6; k++) this.key.push(new Float64Array(capacity));
    this.ts = new Float64Array(capacity);
    this.pid = new Int32Array(capacity);
    this.tid = new Int32Array(capacity);
  }
  add(ctx: number, src: number, dst: number, tag: number, isRecv: number, order: number, ts: number, pid: number, tid: number): void {
    const i = this.n++;
    const k = this.key;
    k[0]![i] = ctx; k[1]![i] = src; k[2]![i] = dst; k[3]![i] = tag; k[4]![i] = isRecv; k[5]![i] = order;
    this.ts[i] = ts; this.pid[i] = pid; this.tid[i] = tid;
  }
  /** Pairs (send end, receive end) by the non-overtaking rule (see the file comment). */
  pairs(): [number, number][] {
    const idx = Uint32Array.from({ length: this.n }, (_, i) => i);
    const k = this.key;
    idx.sort((a, b) => {
      for (let c = 0; c < 6; c++) {
        const d = k[c]![a]! - k[c]![b]!;
        if (d !== 0) return d;
      }
      return 0;
    });
    const out: [number, number][] = [];
    const sameName = (a: number, b: number): boolean => k[0]![a] === k[0]![b] && k[1]![a] === k[1]![b] && k[2]![a] === k[2]![b] && k[3]![a] === k[3]![b];
    let i = 0;
    while (i < idx.length) {
      let j = i;
      while (j < idx.length && sameName(idx[i]!, idx[j]!)) j++;
      // [i, j): one message name; its sends (kind 0) come first, then its receives, each in post order.
      let r = i;
      while (r < j && k[4]![idx[r]!] === 0) r++;
      for (let s = i, q = r; s < r && q < j; s++, q++) out.push([idx[s]!, idx[q]!]);
      i = j;
    }
    return out;
  }
}

/** The lines of the traceEvents array (one JSON event each), times from the earliest event (µs). */
export function* traceEventLines(traces: readonly RankTrace[]): Generator<string> {
  let t0 = Infinity;
  let msgCount = 0;
  for (const { dump } of traces) {
    for (const t of dump.threads) {
      for (let o = 0; o < t.calls.length; o += TRACE_CALL.WORDS) t0 = Math.min(t0, t.calls[o + TRACE_CALL.START_MS]! + dump.offsetMs);
      msgCount += t.msgs.length / TRACE_MSG.WORDS;
    }
  }
  if (t0 === Infinity) t0 = 0;
  const ends = new MsgEnds(msgCount);
  const named = new Set<number>();
  for (const { rank, host, dump } of [...traces].sort((a, b) => a.rank - b.rank)) {
    if (!named.has(rank)) {
      named.add(rank);
      yield `{"name":"process_name","ph":"M","pid":${rank},"tid":0,"args":{"name":${JSON.stringify(`rank ${rank} (${host})`)}}}`;
      yield `{"name":"process_sort_index","ph":"M","pid":${rank},"tid":0,"args":{"sort_index":${rank}}}`;
    }
    for (const t of dump.threads) {
      yield `{"name":"thread_name","ph":"M","pid":${rank},"tid":${t.tid},"args":{"name":"${t.tid === 0 ? 'main' : `thread ${t.tid}`}"}}`;
      const names = t.names.map((n) => JSON.stringify(n));
      const comms = new Map(t.comms.map(([ctx, name]) => [ctx, JSON.stringify(name)]));
      const head = `,"ph":"X","pid":${rank},"tid":${t.tid},"ts":`;
      const W = TRACE_CALL.WORDS;
      const n = t.calls.length / W;
      // Times in integer ns, the file's precision, so that an arrow's end is placed against the slice as written.
      const ts = new Float64Array(n);
      const end = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const o = i * W;
        const c = t.calls;
        ts[i] = Math.round((c[o + TRACE_CALL.START_MS]! + dump.offsetMs - t0) * 1e6);
        const dur = Math.round(c[o + TRACE_CALL.DURATION_MS]! * 1e6);
        // A receive's arrow ends 1 ns before the end of the slice that completed it (where the data was
        // there): inside it as written, whatever rounding a reader's ts + dur makes. At the end itself,
        // ts + dur summed in floating point fell short of it for ~0.6% of the arrows of a msgrate run.
        end[i] = ts[i]! + Math.max(0, dur - 1);
        let args = '';
        const ctx = c[o + TRACE_CALL.COMM]!;
        if (ctx >= 0) args += `,"comm":${comms.get(ctx) ?? `"context ${ctx}"`}`;
        const peer = c[o + TRACE_CALL.PEER]!;
        if (peer !== -1) args += `,"peer":${peer}`;
        const tag = c[o + TRACE_CALL.TAG]!;
        if (tag !== -1) args += `,"tag":${tag}`;
        const bytes = c[o + TRACE_CALL.BYTES]!;
        if (bytes >= 0) args += `,"bytes":${bytes}`;
        yield `{"name":${names[c[o + TRACE_CALL.NAME]!] ?? '"?"'}${head}${us(ts[i]!)},"dur":${us(dur)}${args === '' ? '' : `,"args":{${args.slice(1)}}`}}`;
      }
      if (t.dropped > 0) yield `{"name":"trace_dropped","ph":"M","pid":${rank},"tid":${t.tid},"args":{"dropped":${t.dropped}}}`;
      const m = t.msgs;
      for (let o = 0; o < m.length; o += TRACE_MSG.WORDS) {
        const call = m[o + TRACE_MSG.CALL]!;
        if (call < 0 || call >= n) continue;
        const isRecv = m[o + TRACE_MSG.IS_RECV] === 1 ? 1 : 0;
        ends.add(m[o + TRACE_MSG.CTX]!, m[o + TRACE_MSG.SRC]!, m[o + TRACE_MSG.DST]!, m[o + TRACE_MSG.TAG]!, isRecv, m[o + TRACE_MSG.ORDER]!,
          isRecv === 1 ? end[call]! : ts[call]!, rank, t.tid);
      }
    }
  }
  let id = 0;
  for (const [s, r] of ends.pairs()) {
    id++;
    yield `{"ph":"s","name":"m","id":${id},"pid":${ends.pid[s]},"tid":${ends.tid[s]},"ts":${us(ends.ts[s]!)}}`;
    yield `{"ph":"f","bp":"e","name":"m","id":${id},"pid":${ends.pid[r]},"tid":${ends.tid[r]},"ts":${us(ends.ts[r]!)}}`;
  }
}

/** The trace file's text in chunks: a JSON object with traceEvents, one event per line. */
export function* traceFileChunks(traces: readonly RankTrace[], ranksMissing: readonly number[]): Generator<string> {
  const meta = JSON.stringify({ tool: 'tsmpi mpiexec --trace', ranksWithoutTrace: ranksMissing });
  let chunk = `{"displayTimeUnit":"ns","otherData":${meta},"traceEvents":[\n`;
  let first = true;
  for (const line of traceEventLines(traces)) {
    chunk += first ? line : `,\n${line}`;
    first = false;
    if (chunk.length >= 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}\n]}\n`;
}

/** Writes FILE from the traces the ranks sent (still encoded, by rank, one per thread); a rank without a valid one is named in the file. */
export async function writeTraceFile(file: string, ranks: readonly { readonly rank: number; readonly host: string }[], sent: ReadonlyMap<number, readonly Uint8Array[]>, log: Logger): Promise<void> {
  const traces: RankTrace[] = [];
  const missing: number[] = [];
  for (const { rank, host } of ranks) {
    let any = false;
    for (const data of sent.get(rank) ?? []) {
      const dump = decodeTraceDump(data);
      if (dump === null) log.warn({ rank }, 'malformed trace from a rank: left out');
      else {
        traces.push({ rank, host, dump });
        any = true;
      }
    }
    if (!any) missing.push(rank);
  }
  // pipeline waits for each drain and removes its listeners (one 'error' listener per chunk
  // overflowed the stream's limit and printed a warning on a large trace).
  await pipeline(Readable.from(traceFileChunks(traces, missing)), createWriteStream(file));
}

/** The number of calls each rank's thread records under --trace when TSMPI_TRACE_EVENTS is not given. */
const DEFAULT_TRACE_EVENTS = 200_000;

/** With --trace, the ranks record (setting traceEvents) unless told otherwise. */
export function withTraceSetting(options: LaunchOptions, env: NodeJS.ProcessEnv): LaunchOptions {
  const row = findSetting('traceEvents');
  if (options.traceFile === null || row === undefined || options.settings.has(row.name) || env[row.env] !== undefined) return options;
  return { ...options, settings: new Map([...options.settings, [row.name, DEFAULT_TRACE_EVENTS]]) };
}
