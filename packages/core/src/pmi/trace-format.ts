/**
 * The trace a process hands to mpiexec at finalize under `mpiexec --trace FILE` (issue 41): its
 * layout, and its encoding into the bytes of the wire-up `trace` message (protocol.ts; MessagePack by
 * wire-codec.ts, as the messages themselves).
 *
 * A thread's recorder (api/trace-recorder.ts) keeps two tables of float64 words, grown in place
 * and never turned into objects per event: CALL rows (one per reported MPI call) and MSG rows (one
 * per message end: a send, or a receive where it completed). mpiexec (packages/launcher's
 * trace-merge.ts) turns them into Chrome trace events, pairs each send with its receive and
 * shifts every process's clock by the offset it measured at wire-up.
 *
 * Times are milliseconds of the process's own clock (performance.timeOrigin + performance.now());
 * `offsetMs` is what to add to them for mpiexec's clock. Ranks are endpoints (COMM_ENDPOINTS
 * ranks, COMM_WORLD's when there is one endpoint per process), so a message is named by
 * (context id, source endpoint, destination endpoint, tag) whatever communicator it is on.
 */
import { packWire, unpackWire } from './wire-codec.ts';

/** The words of a CALL row. COMM: context id, or -1; PEER, TAG, BYTES: -1 when none or unknown. */
export const TRACE_CALL = { START_MS: 0, DURATION_MS: 1, NAME: 2, COMM: 3, PEER: 4, TAG: 5, BYTES: 6, WORDS: 7 } as const;
/**
 * The words of a MSG row. CALL: the CALL row (of the same thread) it happened in: the send, or
 * the call that completed the receive. ORDER: the thread's sequence number of the post (send
 * call, or receive call), which orders sends and receives for the non-overtaking rule.
 */
export const TRACE_MSG = { CALL: 0, IS_RECV: 1, CTX: 2, SRC: 3, DST: 4, TAG: 5, ORDER: 6, WORDS: 7 } as const;

/** One thread's trace. */
export interface TraceThread {
  readonly tid: number;
  /** call names, indexed by CALL rows' NAME */
  readonly names: readonly string[];
  /** context id -> communicator name, for the events' args */
  readonly comms: readonly (readonly [number, string])[];
  /** CALL rows, exactly callCount * TRACE_CALL.WORDS words */
  readonly calls: Float64Array;
  /** MSG rows, exactly msgCount * TRACE_MSG.WORDS words */
  readonly msgs: Float64Array;
  /** events not recorded because the buffer was full (setting traceEvents) */
  readonly dropped: number;
}

/** One process's trace. */
export interface TraceDump {
  /** add to this process's times to get mpiexec's clock */
  readonly offsetMs: number;
  readonly threads: readonly TraceThread[];
}

function bytesOf(words: Float64Array): Uint8Array {
  return new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
}

/** Encodes a dump into a fresh buffer (the tables travel as their bytes, not as numbers). */
export function encodeTraceDump(dump: TraceDump): Uint8Array {
  return packWire({
    offsetMs: dump.offsetMs,
    threads: dump.threads.map((t) => ({ tid: t.tid, names: t.names, comms: t.comms, calls: bytesOf(t.calls), msgs: bytesOf(t.msgs), dropped: t.dropped })),
  });
}

function wordsOf(v: unknown, rowWords: number): Float64Array | null {
  if (!(v instanceof Uint8Array) || v.byteLength % (rowWords * 8) !== 0) return null;
  // Copied: a decoded binary is a view of the message at any alignment.
  return new Float64Array(Uint8Array.from(v).buffer);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

function isCommPairs(v: unknown): v is [number, string][] {
  return Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && Number.isInteger(p[0]) && typeof p[1] === 'string');
}

/** Decodes a dump; null for anything malformed (a rank's bytes are checked like any wire input). */
export function decodeTraceDump(data: Uint8Array): TraceDump | null {
  let v: unknown;
  try {
    v = unpackWire(data);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (typeof o['offsetMs'] !== 'number' || !Number.isFinite(o['offsetMs']) || !Array.isArray(o['threads'])) return null;
  const threads: TraceThread[] = [];
  for (const t of o['threads'] as unknown[]) {
    if (typeof t !== 'object' || t === null) return null;
    const r = t as Record<string, unknown>;
    const calls = wordsOf(r['calls'], TRACE_CALL.WORDS);
    const msgs = wordsOf(r['msgs'], TRACE_MSG.WORDS);
    if (!Number.isInteger(r['tid']) || !isStringArray(r['names']) || !isCommPairs(r['comms']) || calls === null || msgs === null ||
        !Number.isInteger(r['dropped'])) return null;
    threads.push({ tid: r['tid'] as number, names: r['names'], comms: r['comms'], calls, msgs, dropped: r['dropped'] as number });
  }
  return { offsetMs: o['offsetMs'], threads };
}
