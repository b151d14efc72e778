/**
 * The recorder of `mpiexec --trace FILE` (issue 41): a profiling hook set (profile.ts) that
 * writes each reported call of its thread, and each message end, into the float64 tables of
 * pmi/trace-format.ts. Nothing per event but a few stores: no object, no JSON; the tables grow by
 * doubling up to the setting traceEvents, after which events are counted as dropped.
 *
 * What a row holds (mpiexec turns rows into Chrome trace events, trace-merge.ts):
 *   every call: start, duration, name, the communicator's context id, and for point-to-point
 *   calls the peer (rank in the communicator), the tag and the bytes (-1 where unknown: an
 *   object message's size is not known before it is encoded);
 *   a send (send, isend, Send, Isend, ssend, ..., the send half of sendrecv): a MSG row with
 *   (send context, own endpoint, destination endpoint, tag) and its post order;
 *   a receive: a MSG row where it completed (recv, Recv, the receive half of sendrecv, or the
 *   Request.wait/test/waitall/... that completed an irecv/Irecv) with (context, the source
 *   endpoint of its status, own endpoint, its tag) and the order of its post.
 * Under MPI's non-overtaking rule the n-th send from s to d on (context, tag) matches the n-th
 * receive at d, in post order, of a message from s with that tag: mpiexec pairs them so.
 * A lower-case recv or sendrecv called without a Status gets one from the recorder (its args).
 * Not traced as messages: persistent requests, matched probes (Message.mrecv), collectives'
 * internal messages (the collective is one call).
 *
 * The bootstrap loads this file only under --trace (startTrace at init, takeTrace at finalize),
 * on the main thread: worker threads are not traced yet.
 */
import { performance } from 'node:perf_hooks';
import { TRACE_CALL, TRACE_MSG, type TraceThread } from '../pmi/index.ts';
import { PROC_NULL } from './constants.ts';
import type { ProfileHooks } from './profile-hooks.ts';
import { use } from './profile.ts';
import { Request } from './request.ts';
import { Status } from './status.ts';

/** What the recorder reads of a communicator (Pt2ptComm's fields). */
interface TracedComm {
  readonly name: string;
  readonly rank: number;
  readonly _ctx: number;
  readonly _sendCtx: number;
  readonly _endpoints: Int32Array;
  readonly _peers: Int32Array;
}

/** How a point-to-point call's arguments are laid out. */
type Shape =
  | { kind: 'send'; dest: number; tag: number; buf: number }
  | { kind: 'recv'; source: number; tag: number; status: number }
  | { kind: 'irecv'; source: number; tag: number }
  | { kind: 'sendrecv'; dest: number; sendtag: number; source: number; recvtag: number; status: number; buf: number };

const SEND = (dest: number, tag: number, buf: number): Shape => ({ kind: 'send', dest, tag, buf });
/** Point-to-point calls by method name (a name not here is recorded as a call only). status -1: the result is the Status. */
const SHAPES: ReadonlyMap<string, Shape> = new Map<string, Shape>([
  ...['send', 'ssend', 'isend', 'issend', 'bsend', 'rsend', 'ibsend', 'irsend'].map((n) => [n, SEND(1, 2, -1)] as [string, Shape]),
  ...['Send', 'Ssend', 'Isend', 'Issend', 'Bsend', 'Rsend', 'Ibsend', 'Irsend'].map((n) => [n, SEND(1, 2, 0)] as [string, Shape]),
  ['recv', { kind: 'recv', source: 0, tag: 1, status: 2 }],
  ['Recv', { kind: 'recv', source: 1, tag: 2, status: -1 }],
  ['irecv', { kind: 'irecv', source: 0, tag: 1 }],
  ['Irecv', { kind: 'irecv', source: 1, tag: 2 }],
  ['sendrecv', { kind: 'sendrecv', dest: 1, sendtag: 2, source: 3, recvtag: 4, status: 5, buf: -1 }],
  ['Sendrecv', { kind: 'sendrecv', dest: 1, sendtag: 2, source: 4, recvtag: 5, status: -1, buf: 0 }],
]);

/** A receive request in flight: where and when it was posted. */
interface PendingRecv {
  readonly comm: TracedComm;
  readonly order: number;
}

const ANY = -1;

function bytesOf(buf: unknown): number {
  if (ArrayBuffer.isView(buf)) return buf.byteLength;
  if (Array.isArray(buf) && ArrayBuffer.isView(buf[0])) return (buf[0] as ArrayBufferView).byteLength;
  return -1;
}

function isComm(target: unknown): target is TracedComm {
  return typeof target === 'object' && target !== null && '_ctx' in target && '_peers' in target;
}

function intArg(args: unknown[], i: number, dflt: number): number {
  const v = args[i];
  return typeof v === 'number' ? v : dflt;
}

/** One thread's recorder; `hooks` is what MPI.profile.use installs. */
export class TraceRecorder {
  readonly #max: number;
  #calls: Float64Array;
  #callCount = 0;
  #msgs: Float64Array;
  #msgCount = 0;
  #dropped = 0;
  /** the thread's post sequence (sends and receives), for the non-overtaking pairing */
  #order = 0;
  readonly #nameIds = new Map<string, number>();
  readonly #names: string[] = [];
  readonly #comms = new Map<number, string>();
  /** post order of a call in progress, by its args array (the same array reaches before and after) */
  readonly #posted = new WeakMap<unknown[], number>();
  /** irecv/Irecv requests not yet seen complete */
  readonly #pending = new Map<Request<unknown>, PendingRecv>();
  readonly hooks: ProfileHooks;

  /** @param maxEvents calls (and message ends) kept; later ones are counted as dropped */
  constructor(maxEvents: number) {
    this.#max = maxEvents;
    const initial = Math.min(maxEvents, 4096);
    this.#calls = new Float64Array(initial * TRACE_CALL.WORDS);
    this.#msgs = new Float64Array(initial * TRACE_MSG.WORDS);
    this.hooks = {
      before: (call, args) => this.#before(call, args),
      after: (call, result, ns, target, args) => this.#after(call, result, ns, target, args),
    };
  }

  /** This thread's trace so far (views of the tables: take it once, at the end). */
  dump(tid: number): TraceThread {
    return {
      tid,
      names: this.#names,
      comms: [...this.#comms],
      calls: this.#calls.subarray(0, this.#callCount * TRACE_CALL.WORDS),
      msgs: this.#msgs.subarray(0, this.#msgCount * TRACE_MSG.WORDS),
      dropped: this.#dropped,
    };
  }

  #before(call: string, args: unknown[]): void {
    const shape = SHAPES.get(call.slice(call.indexOf('.') + 1));
    if (shape === undefined) return;
    if (shape.kind === 'sendrecv') {
      this.#posted.set(args, this.#order);
      this.#order += 2;
    } else {
      this.#posted.set(args, this.#order++);
    }
    // A lower-case receive tells its source and tag only through a Status: give it one.
    if ((shape.kind === 'recv' || shape.kind === 'sendrecv') && shape.status >= 0 && !(args[shape.status] instanceof Status)) {
      while (args.length < shape.status) args.push(undefined);
      args[shape.status] = new Status();
    }
  }

  #after(call: string, result: unknown, ns: number, target: unknown, args: unknown[]): void {
    const endMs = performance.timeOrigin + performance.now();
    const durMs = ns / 1e6;
    const method = call.slice(call.indexOf('.') + 1);
    const shape = isComm(target) ? SHAPES.get(method) : undefined;
    const failed = result instanceof Error;
    const comm = isComm(target) ? target : null;
    let peer = -1, tag = -1, bytes = -1;
    if (shape !== undefined && !failed) {
      if (shape.kind === 'send') {
        peer = intArg(args, shape.dest, -1);
        tag = intArg(args, shape.tag, 0);
        if (shape.buf >= 0) bytes = bytesOf(args[shape.buf]);
      } else if (shape.kind === 'sendrecv') {
        peer = intArg(args, shape.dest, -1);
        tag = intArg(args, shape.sendtag, 0);
        if (shape.buf >= 0) bytes = bytesOf(args[shape.buf]);
      } else {
        const st = shape.kind === 'recv' ? statusOf(result, args, shape.status) : null;
        peer = st !== null ? st.source : intArg(args, shape.source, ANY);
        tag = st !== null ? st.tag : intArg(args, shape.tag, ANY);
        if (st !== null) bytes = st.getCount();
      }
    }
    const row = this.#call(call, endMs - durMs, durMs, comm, peer, tag, bytes);
    if (row < 0) return;
    if (shape !== undefined && comm !== null && !failed) this.#messages(shape, comm, result, args, row);
    if (method === 'irecv' || method === 'Irecv') {
      if (!failed && result instanceof Request) this.#pending.set(result, { comm: comm!, order: this.#posted.get(args) ?? -1 });
    } else if (this.#pending.size > 0 && call.startsWith('Request.')) {
      this.#completed(target, args, row);
    }
  }

  /** The MSG rows of a point-to-point call that ended (CALL row `row`). */
  #messages(shape: Shape, comm: TracedComm, result: unknown, args: unknown[], row: number): void {
    const order = this.#posted.get(args) ?? -1;
    if (shape.kind === 'send' || shape.kind === 'sendrecv') {
      const dest = intArg(args, shape.dest, PROC_NULL);
      const tag = intArg(args, shape.kind === 'send' ? shape.tag : shape.sendtag, 0);
      if (dest >= 0) this.#msg(row, 0, comm._sendCtx, comm._endpoints[comm.rank]!, comm._peers[dest]!, tag, order);
    }
    if (shape.kind === 'recv' || shape.kind === 'sendrecv') {
      const st = statusOf(result, args, shape.status);
      if (st !== null && st.source >= 0 && !st.cancelled) {
        this.#msg(row, 1, comm._ctx, comm._peers[st.source]!, comm._endpoints[comm.rank]!, st.tag, shape.kind === 'sendrecv' ? order + 1 : order);
      }
    }
  }

  /** Request.wait/test/waitall...: the receive requests among its target and args that are now complete. */
  #completed(target: unknown, args: unknown[], row: number): void {
    const check = (r: unknown): void => {
      if (!(r instanceof Request)) return;
      const p = this.#pending.get(r);
      if (p === undefined || !r._reported) return;
      this.#pending.delete(r);
      const st = r.status;
      if (st === null || st.source < 0 || st.cancelled) return;
      this.#msg(row, 1, p.comm._ctx, p.comm._peers[st.source]!, p.comm._endpoints[p.comm.rank]!, st.tag, p.order);
      // Request.wait/test on one receive: its call row shows the message, as a Recv's does.
      if (r === target) this.#describe(row, p.comm, st.source, st.tag, st.getCount());
    };
    check(target);
    if (Array.isArray(args[0])) for (const r of args[0]) check(r);
  }

  #call(name: string, startMs: number, durMs: number, comm: TracedComm | null, peer: number, tag: number, bytes: number): number {
    if (this.#callCount >= this.#max) {
      this.#dropped++;
      return -1;
    }
    const W = TRACE_CALL.WORDS;
    if ((this.#callCount + 1) * W > this.#calls.length) this.#calls = grow(this.#calls, this.#max * W);
    let id = this.#nameIds.get(name);
    if (id === undefined) {
      id = this.#names.length;
      this.#names.push(name);
      this.#nameIds.set(name, id);
    }
    let ctx = -1;
    if (comm !== null) {
      ctx = comm._ctx;
      if (!this.#comms.has(ctx)) this.#comms.set(ctx, comm.name);
    }
    const t = this.#calls;
    const o = this.#callCount * W;
    t[o + TRACE_CALL.START_MS] = startMs;
    t[o + TRACE_CALL.DURATION_MS] = durMs;
    t[o + TRACE_CALL.NAME] = id;
    t[o + TRACE_CALL.COMM] = ctx;
    t[o + TRACE_CALL.PEER] = peer;
    t[o + TRACE_CALL.TAG] = tag;
    t[o + TRACE_CALL.BYTES] = bytes;
    return this.#callCount++;
  }

  #describe(row: number, comm: TracedComm, peer: number, tag: number, bytes: number): void {
    const o = row * TRACE_CALL.WORDS;
    const t = this.#calls;
    t[o + TRACE_CALL.COMM] = comm._ctx;
    t[o + TRACE_CALL.PEER] = peer;
    t[o + TRACE_CALL.TAG] = tag;
    t[o + TRACE_CALL.BYTES] = bytes;
    if (!this.#comms.has(comm._ctx)) this.#comms.set(comm._ctx, comm.name);
  }

  #msg(call: number, isRecv: number, ctx: number, src: number, dst: number, tag: number, order: number): void {
    if (this.#msgCount >= this.#max) {
      this.#dropped++;
      return;
    }
    const W = TRACE_MSG.WORDS;
    if ((this.#msgCount + 1) * W > this.#msgs.length) this.#msgs = grow(this.#msgs, this.#max * W);
    const t = this.#msgs;
    const o = this.#msgCount++ * W;
    t[o + TRACE_MSG.CALL] = call;
    t[o + TRACE_MSG.IS_RECV] = isRecv;
    t[o + TRACE_MSG.CTX] = ctx;
    t[o + TRACE_MSG.SRC] = src;
    t[o + TRACE_MSG.DST] = dst;
    t[o + TRACE_MSG.TAG] = tag;
    t[o + TRACE_MSG.ORDER] = order;
  }
}

function statusOf(result: unknown, args: unknown[], statusArg: number): Status | null {
  if (statusArg < 0) return result instanceof Status ? result : null;
  const st = args[statusArg];
  return st instanceof Status ? st : null;
}

function grow(t: Float64Array, maxWords: number): Float64Array {
  const next = new Float64Array(Math.min(maxWords, t.length * 2));
  next.set(t);
  return next;
}

/** The main thread's recorder while tracing, and how to remove its hooks. */
let current: { recorder: TraceRecorder; remove: () => void } | null = null;

/** Starts recording this thread's calls (runtime/bootstrap.ts, at init under --trace). */
export function startTrace(maxEvents: number): void {
  const recorder = new TraceRecorder(maxEvents);
  current = { recorder, remove: use(recorder.hooks) };
}

/** Stops recording and returns this thread's trace (at finalize); null when not tracing. */
export function takeTrace(tid: number): TraceThread | null {
  if (current === null) return null;
  const { recorder, remove } = current;
  current = null;
  remove();
  return recorder.dump(tid);
}
