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
 *   from every send to the receive that matched it.
 *
 * Clocks: each rank's times are its own clock plus the offset it measured to mpiexec's at
 * wire-up (core's pmi/clock-offset.ts), so ranks on other hosts line up (to half a round trip).
 *
 * Pairing (MPI 4.0 3.5, non-overtaking): messages are named by (context id, source endpoint,
 * destination endpoint, tag); the n-th send of that name, in the sender's post order, is
 * received by the n-th receive of that name, in the receiver's post order. A send without a
 * receive (the job ended, or the receive was not traced) gets no arrow.
 *
 * Output is written as one JSON text built from per-event strings (the file may be large, but it
 * is made once, at the end of the job, in mpiexec, off the ranks' paths).
 */
import { writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { decodeTraceDump, TRACE_CALL, TRACE_MSG, type TraceDump } from '@tsmpi/core/pmi';
import type { LaunchOptions } from './options.ts';
import { findSetting } from './settings-flags.ts';

/** One rank's trace as mpiexec received it. */
export interface RankTrace {
  readonly rank: number;
  readonly host: string;
  readonly dump: TraceDump;
}

/** A Chrome trace event (only the fields used here). */
export interface TraceEvent {
  readonly name: string;
  readonly ph: 'X' | 's' | 'f' | 'M';
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly id?: number;
  readonly cat?: string;
  readonly bp?: 'e';
  readonly args?: Record<string, unknown>;
}

/** One end of a message, located in the merged timeline. */
interface MsgEnd {
  readonly pid: number;
  readonly tid: number;
  /** start and duration (µs, merged clock) of the call it belongs to */
  readonly ts: number;
  readonly dur: number;
  readonly order: number;
}

/** The pairs of send and receive ends, by the non-overtaking rule (see the file comment). */
export function pairMessages(sends: ReadonlyMap<string, MsgEnd[]>, recvs: ReadonlyMap<string, MsgEnd[]>): [MsgEnd, MsgEnd][] {
  const pairs: [MsgEnd, MsgEnd][] = [];
  for (const [key, s] of sends) {
    const r = recvs.get(key);
    if (r === undefined) continue;
    const so = [...s].sort((a, b) => a.order - b.order);
    const ro = [...r].sort((a, b) => a.order - b.order);
    for (let i = 0; i < Math.min(so.length, ro.length); i++) pairs.push([so[i]!, ro[i]!]);
  }
  return pairs;
}

/** The merged events of a job's traces, times from the earliest event (µs). */
export function mergeTraces(traces: readonly RankTrace[]): TraceEvent[] {
  let t0 = Infinity;
  for (const { dump } of traces) {
    for (const t of dump.threads) {
      for (let o = 0; o < t.calls.length; o += TRACE_CALL.WORDS) t0 = Math.min(t0, t.calls[o + TRACE_CALL.START_MS]! + dump.offsetMs);
    }
  }
  if (t0 === Infinity) t0 = 0;
  const events: TraceEvent[] = [];
  const sends = new Map<string, MsgEnd[]>();
  const recvs = new Map<string, MsgEnd[]>();
  for (const { rank, host, dump } of [...traces].sort((a, b) => a.rank - b.rank)) {
    events.push({ name: 'process_name', ph: 'M', pid: rank, tid: 0, args: { name: `rank ${rank} (${host})` } });
    events.push({ name: 'process_sort_index', ph: 'M', pid: rank, tid: 0, args: { sort_index: rank } });
    for (const t of dump.threads) {
      events.push({ name: 'thread_name', ph: 'M', pid: rank, tid: t.tid, args: { name: t.tid === 0 ? 'main' : `thread ${t.tid}` } });
      const comms = new Map(t.comms);
      const W = TRACE_CALL.WORDS;
      const n = t.calls.length / W;
      const ts = new Float64Array(n);
      const dur = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const o = i * W;
        ts[i] = (t.calls[o + TRACE_CALL.START_MS]! + dump.offsetMs - t0) * 1000;
        dur[i] = t.calls[o + TRACE_CALL.DURATION_MS]! * 1000;
        const args: Record<string, unknown> = {};
        const ctx = t.calls[o + TRACE_CALL.COMM]!;
        if (ctx >= 0) args['comm'] = comms.get(ctx) ?? `context ${ctx}`;
        const peer = t.calls[o + TRACE_CALL.PEER]!;
        if (peer !== -1) args['peer'] = peer;
        const tag = t.calls[o + TRACE_CALL.TAG]!;
        if (tag !== -1) args['tag'] = tag;
        const bytes = t.calls[o + TRACE_CALL.BYTES]!;
        if (bytes >= 0) args['bytes'] = bytes;
        events.push({ name: t.names[t.calls[o + TRACE_CALL.NAME]!] ?? '?', ph: 'X', pid: rank, tid: t.tid, ts: ts[i]!, dur: dur[i]!, args });
      }
      if (t.dropped > 0) events.push({ name: 'trace_dropped', ph: 'M', pid: rank, tid: t.tid, args: { dropped: t.dropped } });
      for (let o = 0; o < t.msgs.length; o += TRACE_MSG.WORDS) {
        const call = t.msgs[o + TRACE_MSG.CALL]!;
        if (call < 0 || call >= n) continue;
        const key = `${t.msgs[o + TRACE_MSG.CTX]}:${t.msgs[o + TRACE_MSG.SRC]}:${t.msgs[o + TRACE_MSG.DST]}:${t.msgs[o + TRACE_MSG.TAG]}`;
        const end: MsgEnd = { pid: rank, tid: t.tid, ts: ts[call]!, dur: dur[call]!, order: t.msgs[o + TRACE_MSG.ORDER]! };
        const table = t.msgs[o + TRACE_MSG.IS_RECV] === 1 ? recvs : sends;
        let list = table.get(key);
        if (list === undefined) table.set(key, (list = []));
        list.push(end);
      }
    }
  }
  let id = 0;
  for (const [s, r] of pairMessages(sends, recvs)) {
    id++;
    events.push({ name: 'message', cat: 'message', ph: 's', id, pid: s.pid, tid: s.tid, ts: s.ts });
    // Bound to the slice that completed the receive, at its end (where the data was there).
    events.push({ name: 'message', cat: 'message', ph: 'f', bp: 'e', id, pid: r.pid, tid: r.tid, ts: r.ts + Math.max(0, r.dur - 0.001) });
  }
  return events;
}

/** The trace file's text: a JSON object with traceEvents, one event per line. */
export function traceFileText(events: readonly TraceEvent[], ranksMissing: readonly number[]): string {
  const lines = events.map((e) => JSON.stringify(e));
  const meta = JSON.stringify({ tool: 'tsmpi mpiexec --trace', ranksWithoutTrace: ranksMissing });
  return `{"displayTimeUnit":"ns","otherData":${meta},"traceEvents":[\n${lines.join(',\n')}\n]}\n`;
}

/** Writes FILE from the traces the ranks sent (still encoded, by rank); a rank without a valid one is named in the file. */
export async function writeTraceFile(file: string, ranks: readonly { readonly rank: number; readonly host: string }[], sent: ReadonlyMap<number, Uint8Array>, log: Logger): Promise<void> {
  const traces: RankTrace[] = [];
  const missing: number[] = [];
  for (const { rank, host } of ranks) {
    const data = sent.get(rank);
    const dump = data === undefined ? null : decodeTraceDump(data);
    if (data !== undefined && dump === null) log.warn({ rank }, 'malformed trace from a rank: left out');
    if (dump === null) missing.push(rank);
    else traces.push({ rank, host, dump });
  }
  await writeFile(file, traceFileText(mergeTraces(traces), missing));
}

/** The number of calls each rank's thread records under --trace when TSMPI_TRACE_EVENTS is not given. */
const DEFAULT_TRACE_EVENTS = 200_000;

/** With --trace, the ranks record (setting traceEvents) unless told otherwise. */
export function withTraceSetting(options: LaunchOptions, env: NodeJS.ProcessEnv): LaunchOptions {
  const row = findSetting('traceEvents');
  if (options.traceFile === null || row === undefined || options.settings.has(row.name) || env[row.env] !== undefined) return options;
  return { ...options, settings: new Map([...options.settings, [row.name, DEFAULT_TRACE_EVENTS]]) };
}
