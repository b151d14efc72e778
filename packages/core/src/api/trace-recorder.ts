/**
 * The recorder of `mpiexec --trace FILE` (issue 41): profile.ts's instrumentation (a wrapper
 * per public call, beneath users' hook sets) that writes each outermost call of its thread, and each message end, into the float64 tables of
 * pmi/trace-format.ts. Nothing per event but a few stores: no object, no JSON; the tables grow by
 * chunks up to the setting traceEvents, after which events are counted as dropped.
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
 * Cost per event: two clock reads, a few stores into the tables, and for point-to-point posts one
 * atomic add (the post sequence is the process's, shared by its threads, so that sends and
 * receives posted at one endpoint by several threads pair in the order the device matched them).
 * The wrappers are made once per call name with its info (no lookup per call); the per-message
 * ones (#wrapSend, #wrapRecv: a source function each, so that each is optimized for one method)
 * take their three arguments as named parameters and write their rows in place, so no array,
 * arguments object, token, closure or closure context is made per call. Objects per event: the
 * Status a lower-case recv is given (an irecv waits in a list, PendingReceives, until it
 * completes), and for a call that returns a Promise the closures that see it settle (made in
 * methods of their own, #postSettled and #callSettled, so that the wrappers keep no context).
 *
 * Threads: every MPI thread of a traced process records its own calls (startTrace at its init).
 * The main thread hands its trace and its workers' to mpiexec at MPI.finalize; a worker thread
 * posts its trace to the main thread on a BroadcastChannel when its event loop empties (its end),
 * and finalize waits a moment for the traces of worker threads that started but have not posted.
 */
import { performance } from 'node:perf_hooks';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import type { TraceThread } from '../pmi/index.ts';
import { REQ_KIND } from '../device/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { PROC_NULL } from './constants.ts';
import { instrument, type Method } from './profile.ts';
import { Request, type RequestComm } from './request.ts';
import { PendingReceives } from './trace-pending-receives.ts';
import { bytesWord, CALL_ROW, CHUNK_ROWS, CompactRows, expandCalls, expandMsgs, MSG_ROW, ROW_WORDS, UNKNOWN_BYTES } from './trace-rows.ts';
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

/** What the recorder knows of a call name, made once per name. */
interface CallInfo {
  /** index in the thread's names table */
  readonly id: number;
  readonly shape: Shape | undefined;
  readonly isIrecv: boolean;
  /** a Request.* call: it may complete irecv requests */
  readonly isRequest: boolean;
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

/** One thread's recorder; `wrap` is what profile.ts's instrument() installs. */
export class TraceRecorder {
  readonly #max: number;
  readonly #calls = new CompactRows();
  #callCount = 0;
  readonly #msgs = new CompactRows();
  #msgCount = 0;
  #dropped = 0;
  /** takes numbers of the process's post sequence (sends and receives), for the non-overtaking pairing */
  readonly #takeOrder: (n: number) => number;
  /** performance.timeOrigin, read once (a getter) */
  readonly #origin: number;
  readonly #infos = new Map<string, CallInfo>();
  readonly #names: string[] = [];
  readonly #comms = new Map<number, string>();
  /** the context id last added to #comms (most calls are on the communicator of the one before) */
  #lastCtx = -1;
  /** irecv/Irecv requests not yet seen complete, with their post order (their communicator is the request's) */
  readonly #pending = new PendingReceives<Request<unknown>>();
  /** Traced calls in progress on this thread's stack (only the outermost is recorded, as profile.ts's hooks do). */
  #depth = 0;

  /**
   * @param maxEvents calls (and message ends) kept; later ones are counted as dropped
   * @param takeOrder the process's post sequence (SharedState.takeTraceOrder)
   */
  constructor(maxEvents: number, takeOrder: (n: number) => number) {
    this.#max = maxEvents;
    this.#takeOrder = takeOrder;
    this.#origin = performance.timeOrigin;
    CompactRows.warmGrowth();
  }

  /** This thread's trace so far (its rows copied into one table each). */
  dump(tid: number): TraceThread {
    return {
      tid,
      names: this.#names,
      comms: [...this.#comms],
      calls: expandCalls(this.#calls, this.#callCount),
      msgs: expandMsgs(this.#msgs, this.#msgCount),
      dropped: this.#dropped,
    };
  }

  #info(call: string): CallInfo {
    let info = this.#infos.get(call);
    if (info === undefined) {
      const method = call.slice(call.indexOf('.') + 1);
      info = { id: this.#names.length, shape: SHAPES.get(method), isIrecv: method === 'irecv' || method === 'Irecv', isRequest: call.startsWith('Request.') };
      this.#names.push(call);
      this.#infos.set(call, info);
    }
    return info;
  }

  /**
   * What profile.ts's instrument() puts in place of `method`, the public call `call`: a wrapper made
   * once per call name. Isend/Irecv-shaped calls (the per-message ones) get one that takes their
   * arguments as named parameters (no argument array or object, token or closure per call); the others one that keeps
   * the arguments in an array (a lower-case recv may be given a Status) and a closure only for a
   * call that returns a Promise (its end is when it settles). Two clock reads per call.
   */
  wrap(call: string, method: Method): Method {
    const info = this.#info(call);
    const shape = info.shape;
    if (shape?.kind === 'send') return this.#wrapSend(info, shape, method);
    if (shape?.kind === 'irecv') return this.#wrapRecv(info, shape, method);
    return this.#wrapCall(info, method);
  }

  /**
   * The wrapper of a send post (Isend, isend, Send, send...): see #wrapRecv. V8 keeps one feedback
   * vector per source function, so one wrapper for both kinds saw Isend and Irecv at its call of
   * `method` and was optimized inlining both (the largest compile of a traced run, 0.1-0.3 s on a
   * loaded machine, while the wrapper ran unoptimized); each of these sees one method.
   */
  #wrapSend(info: CallInfo, shape: Shape & { kind: 'send' }, method: Method): Method {
    const rec = this;
    const id = info.id;
    // Every send post takes at most three arguments, the peer and the tag the second and third,
    // and none reads `arguments`: they are forwarded as three named ones (a missing one as
    // undefined, which its default replaces), so no arguments object is made per call.
    const bufFirst = shape.buf === 0;
    return function tracedSend(this: unknown, a0: unknown, a1: unknown, a2: unknown): unknown {
      if (rec.#depth !== 0) return method.call(this, a0, a1, a2);
      if (rec.#callCount >= rec.#max) {
        // A full table drops the call's row and its message: no post order to take.
        rec.#dropped++;
        return method.call(this, a0, a1, a2);
      }
      const order = rec.#takeOrder(1);
      const t0 = performance.now();
      rec.#depth = 1;
      let out: unknown;
      try {
        out = method.call(this, a0, a1, a2);
      } catch (e) {
        rec.#depth = 0;
        rec.#call(id, rec.#origin + t0, performance.now() - t0, null, -1, -1, -1);
        throw e;
      }
      rec.#depth = 0;
      const buf = bufFirst ? a0 : undefined;
      // A blocking send (send, Send, ssend...): its slice ends when its promise settles.
      if (out instanceof Promise) return rec.#postSettled(out, id, true, t0, this, a1, a2, buf, order);
      // The call returned, so its arguments passed its checks (the peer and the tag, if given, are
      // integers) and `this` is a communicator (the post read its fields; one field read here
      // instead of isComm's two `in` tests guards against a method applied to another object).
      const target = this as TracedComm;
      if (target._peers === undefined) {
        rec.#call(id, rec.#origin + t0, performance.now() - t0, null, -1, -1, -1);
        return out;
      }
      const p = typeof a1 === 'number' ? a1 : -1;
      const g = typeof a2 === 'number' ? a2 : 0;
      const row = rec.#postRow(id, t0, target, p, g, buf instanceof Uint8Array ? buf.byteLength : bytesWord(bytesOf(buf)));
      // p < 0: PROC_NULL, no message.
      if (row >= 0 && p >= 0) rec.#msg(row, 0, target._sendCtx, ownEndpoint(), target._peers[p]!, g, order);
      return out;
    };
  }

  /**
   * The wrapper of a receive post (Irecv, irecv), in place of `method` (the public call `info`):
   * made once per call name, it takes the call's arguments as named parameters (no argument array
   * or object, token or closure per call), reads the clock twice (the slice's start and end) and
   * writes its CALL row in place; the request waits in #pending for the Request.* call that
   * completes it, where its MSG row is written.
   */
  #wrapRecv(info: CallInfo, shape: Shape & { kind: 'irecv' }, method: Method): Method {
    const rec = this;
    const id = info.id;
    // irecv(source, tag), Irecv(buf, source, tag): the source and tag are the first two or the last two.
    const sourceFirst = shape.source === 0;
    return function tracedRecv(this: unknown, a0: unknown, a1: unknown, a2: unknown): unknown {
      if (rec.#depth !== 0) return method.call(this, a0, a1, a2);
      if (rec.#callCount >= rec.#max) {
        rec.#dropped++;
        return method.call(this, a0, a1, a2);
      }
      const order = rec.#takeOrder(1);
      const t0 = performance.now();
      rec.#depth = 1;
      let out: unknown;
      try {
        out = method.call(this, a0, a1, a2);
      } catch (e) {
        rec.#depth = 0;
        rec.#call(id, rec.#origin + t0, performance.now() - t0, null, -1, -1, -1);
        throw e;
      }
      rec.#depth = 0;
      const source = sourceFirst ? a0 : a1;
      const tag = sourceFirst ? a1 : a2;
      const target = this as TracedComm;
      if (out instanceof Promise) return rec.#postSettled(out, id, false, t0, target, source, tag, undefined, order);
      if (target._peers === undefined) {
        rec.#call(id, rec.#origin + t0, performance.now() - t0, null, -1, -1, -1);
        return out;
      }
      const row = rec.#postRow(id, t0, target, typeof source === 'number' ? source : ANY, typeof tag === 'number' ? tag : ANY, UNKNOWN_BYTES);
      if (row >= 0) rec.#pending.add(out as Request<unknown>, order);
      return out;
    };
  }

  /**
   * `out`, the promise of a blocking send, with its rows written when it settles. Apart from the
   * post wrapper so that the closures' variables make no context on each post call.
   */
  #postSettled(out: Promise<unknown>, id: number, isSend: boolean, t0: number, target: unknown, peer: unknown, tag: unknown, buf: unknown, order: number): Promise<unknown> {
    return out.then(
      (v: unknown) => { this.#posted(id, isSend, t0, target, peer, tag, buf, order, v); return v; },
      (e: unknown) => { this.#call(id, this.#origin + t0, performance.now() - t0, null, -1, -1, -1); throw e; },
    );
  }

  /**
   * The rows of a blocking send whose promise resolved now (started at t0, posted as number `order`,
   * resolved with `result`).
   */
  #posted(id: number, isSend: boolean, t0: number, target: unknown, peer: unknown, tag: unknown, buf: unknown, order: number, result: unknown): void {
    const durMs = performance.now() - t0;
    if (!isComm(target)) {
      this.#call(id, this.#origin + t0, durMs, null, -1, -1, -1);
      return;
    }
    const p = typeof peer === 'number' ? peer : isSend ? -1 : ANY;
    const t = typeof tag === 'number' ? tag : isSend ? 0 : ANY;
    const row = this.#call(id, this.#origin + t0, durMs, target, p, t, isSend ? bytesOf(buf) : -1);
    if (row < 0) return;
    if (isSend) {
      if (p >= 0) this.#msg(row, 0, target._sendCtx, ownEndpoint(), target._peers[p]!, t, order);
    } else if (result instanceof Request) {
      this.#pending.add(result, order);
    }
  }

  #wrapCall(info: CallInfo, method: Method): Method {
    const rec = this;
    return function traced(this: unknown, ...args: unknown[]): unknown {
      if (rec.#depth !== 0) return method.apply(this, args);
      const order = rec.#before(info, args);
      const t0 = performance.now();
      rec.#depth++;
      let out: unknown;
      try {
        out = method.apply(this, args);
      } catch (e) {
        rec.#depth--;
        rec.#after(info, e, t0, this, args, order);
        throw e;
      }
      rec.#depth--;
      if (out instanceof Promise) return rec.#callSettled(out, info, t0, this, args, order);
      rec.#after(info, out, t0, this, args, order);
      return out;
    };
  }

  /** `out`, the promise of a call, with its row written when it settles (apart from the wrapper: see #postSettled). */
  #callSettled(out: Promise<unknown>, info: CallInfo, t0: number, target: unknown, args: unknown[], order: number): Promise<unknown> {
    return out.then(
      (v: unknown) => { this.#after(info, v, t0, target, args, order); return v; },
      (e: unknown) => { this.#after(info, e, t0, target, args, order); throw e; },
    );
  }

  /** Before a call of the general wrapper: its post order (-1 for a call that posts no message). */
  #before(info: CallInfo, args: unknown[]): number {
    const shape = info.shape;
    // A full table drops the call's row and its messages (#after): no post order to take, no Status to give.
    if (shape === undefined || this.#callCount >= this.#max) return -1;
    const order = this.#takeOrder(shape.kind === 'sendrecv' ? 2 : 1);
    // A lower-case receive tells its source and tag only through a Status: give it one.
    if ((shape.kind === 'recv' || shape.kind === 'sendrecv') && shape.status >= 0 && !(args[shape.status] instanceof Status)) {
      while (args.length < shape.status) args.push(undefined);
      args[shape.status] = new Status();
    }
    return order;
  }

  /** After a call of the general wrapper (started at t0) ended with `result` (its value or its error). */
  #after(info: CallInfo, result: unknown, t0: number, target: unknown, args: unknown[], order: number): void {
    if (this.#callCount >= this.#max) {
      // The row would be dropped (#call), and with it the call's messages: nothing more to work out.
      this.#dropped++;
      return;
    }
    const durMs = performance.now() - t0;
    const comm = isComm(target) ? target : null;
    const shape = comm !== null ? info.shape : undefined;
    const failed = result instanceof Error;
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
    const row = this.#call(info.id, this.#origin + t0, durMs, comm, peer, tag, bytes);
    if (row < 0) return;
    if (shape !== undefined && comm !== null && !failed) this.#messages(shape, comm, result, args, row, order);
    if (info.isIrecv) {
      if (!failed && result instanceof Request && comm !== null) this.#pending.add(result, order);
    } else if (this.#pending.size > 0 && info.isRequest) {
      this.#completed(target, args, row);
    }
  }

  /** The MSG rows of a point-to-point call that ended (CALL row `row`), posted as number `order`. */
  #messages(shape: Shape, comm: TracedComm, result: unknown, args: unknown[], row: number, order: number): void {
    if (shape.kind === 'send' || shape.kind === 'sendrecv') {
      const dest = intArg(args, shape.dest, PROC_NULL);
      const tag = intArg(args, shape.kind === 'send' ? shape.tag : shape.sendtag, 0);
      if (dest >= 0) this.#msg(row, 0, comm._sendCtx, ownEndpoint(), comm._peers[dest]!, tag, order);
    }
    if (shape.kind === 'recv' || shape.kind === 'sendrecv') {
      const st = statusOf(result, args, shape.status);
      if (st !== null && st.source >= 0 && !st.cancelled) {
        this.#msg(row, 1, comm._ctx, comm._peers[st.source]!, ownEndpoint(), st.tag, shape.kind === 'sendrecv' ? order + 1 : order);
      }
    }
  }

  /** Request.wait/test/waitall...: the receive requests among its target and args that are now complete. */
  #completed(target: unknown, args: unknown[], row: number): void {
    this.#check(target, target, row);
    const list = args[0];
    if (Array.isArray(list)) for (let i = 0; i < list.length; i++) this.#check(list[i], target, row);
  }

  /**
   * One request of a Request.* call: its MSG row if it is a receive request now complete. Read from
   * its DevRequest (source endpoint, tag, count), not its `status`, which would make a Status per
   * message (a waitall asks for none) and map the endpoint to a rank that the row maps back.
   */
  #check(r: unknown, target: unknown, row: number): void {
    // Only a receive reported complete can be pending and taken: a send (most of a waitall's list) costs no search.
    if (!(r instanceof Request) || !r._reported) return;
    const d = r._r;
    if (d === null || d.kind !== REQ_KIND.RECV) return;
    const order = this.#pending.take(r);
    if (order < 0 || !d.done || d.sourceEndpoint < 0 || d.cancelled) return;
    // The request's communicator is the one its irecv was called on (an irecv is only pending when that was a TracedComm).
    const comm = r._comm as unknown as TracedComm & RequestComm;
    this.#msg(row, 1, comm._ctx, d.sourceEndpoint, ownEndpoint(), d.tag, order);
    // Request.wait/test on one receive: its call row shows the message, as a Recv's does.
    if (r === target) this.#describe(row, comm, comm._rankOfEndpoint(d.sourceEndpoint), d.tag, d.count);
  }

  /**
   * The CALL row of a post call on `comm` that started at t0 (performance.now()) and ended now,
   * with its peer, tag and `bytes` (the BYTES word: bytesWord() or UNKNOWN_BYTES); its index, or -1 when dropped.
   */
  #postRow(id: number, t0: number, comm: TracedComm, peer: number, tag: number, bytes: number): number {
    const durMs = performance.now() - t0;
    if (this.#callCount >= this.#max) {
      this.#dropped++;
      return -1;
    }
    const ctx = comm._ctx;
    if (ctx !== this.#lastCtx) this.#noteComm(comm);
    const o = this.#calls.add();
    const c = this.#calls.last;
    c.f64[(o >> 1) + CALL_ROW.START_F64] = this.#origin + t0;
    c.f32[o + CALL_ROW.DURATION_F32] = durMs;
    const t = c.i32;
    t[o + CALL_ROW.NAME] = id;
    t[o + CALL_ROW.COMM] = ctx;
    t[o + CALL_ROW.PEER] = peer;
    t[o + CALL_ROW.TAG] = tag;
    c.u32[o + CALL_ROW.BYTES] = bytes;
    return this.#callCount++;
  }

  #call(id: number, startMs: number, durMs: number, comm: TracedComm | null, peer: number, tag: number, bytes: number): number {
    if (this.#callCount >= this.#max) {
      this.#dropped++;
      return -1;
    }
    let ctx = -1;
    if (comm !== null) {
      ctx = comm._ctx;
      if (ctx !== this.#lastCtx) this.#noteComm(comm);
    }
    const o = this.#calls.add();
    const c = this.#calls.last;
    c.f64[(o >> 1) + CALL_ROW.START_F64] = startMs;
    c.f32[o + CALL_ROW.DURATION_F32] = durMs;
    const t = c.i32;
    t[o + CALL_ROW.NAME] = id;
    t[o + CALL_ROW.COMM] = ctx;
    t[o + CALL_ROW.PEER] = peer;
    t[o + CALL_ROW.TAG] = tag;
    c.u32[o + CALL_ROW.BYTES] = bytesWord(bytes);
    return this.#callCount++;
  }

  #describe(row: number, comm: TracedComm, peer: number, tag: number, bytes: number): void {
    const c = this.#calls.chunkOf(row);
    const o = (row % CHUNK_ROWS) * ROW_WORDS;
    c.i32[o + CALL_ROW.COMM] = comm._ctx;
    c.i32[o + CALL_ROW.PEER] = peer;
    c.i32[o + CALL_ROW.TAG] = tag;
    c.u32[o + CALL_ROW.BYTES] = bytesWord(bytes);
    if (comm._ctx !== this.#lastCtx) this.#noteComm(comm);
  }

  /** Names the communicator of a context id in the trace (the first name seen). */
  #noteComm(comm: TracedComm): void {
    this.#lastCtx = comm._ctx;
    if (!this.#comms.has(comm._ctx)) this.#comms.set(comm._ctx, comm.name);
  }

  #msg(call: number, isRecv: number, ctx: number, src: number, dst: number, tag: number, order: number): void {
    if (this.#msgCount >= this.#max) {
      this.#dropped++;
      return;
    }
    this.#msgCount++;
    const o = this.#msgs.add();
    const c = this.#msgs.last;
    c.f64[(o >> 1) + MSG_ROW.ORDER_F64] = order;
    const t = c.i32;
    t[o + MSG_ROW.CALL] = call;
    t[o + MSG_ROW.IS_RECV] = isRecv;
    t[o + MSG_ROW.CTX] = ctx;
    t[o + MSG_ROW.SRC] = src;
    t[o + MSG_ROW.DST] = dst;
    t[o + MSG_ROW.TAG] = tag;
  }
}

/**
 * The calling thread's endpoint: what `comm._endpoints[comm.rank]` is for a communicator it is a
 * member of, without the rank getter's lookup and its map back (a traced call ran, so MPI is active).
 */
function ownEndpoint(): number {
  return runtimeOrNull()?.endpoint ?? -1;
}

function statusOf(result: unknown, args: unknown[], statusArg: number): Status | null {
  if (statusArg < 0) return result instanceof Status ? result : null;
  const st = args[statusArg];
  return st instanceof Status ? st : null;
}

/** The channel worker threads' traces reach the main thread on (one per process: BroadcastChannel is per process). */
const CHANNEL = 'tsmpi:trace';
/** What a worker thread posts on CHANNEL: that it records, then its trace. */
type ThreadNote = { readonly kind: 'started'; readonly tid: number } | { readonly kind: 'trace'; readonly thread: TraceThread };
/** How long finalize waits for the traces of worker threads that started recording and have not posted. */
const WORKER_TRACE_WAIT_MS = 2000;

/** This thread's recorder while tracing, and how to remove its instrumentation. */
let current: { recorder: TraceRecorder; remove: () => void } | null = null;
/** Main thread: the traces worker threads posted, and the threads that said they record. */
let fromWorkers: { channel: BroadcastChannel; traces: Map<number, TraceThread>; started: Set<number>; arrived: (() => void) | null } | null = null;

/**
 * Starts recording this thread's calls (runtime/bootstrap.ts, at init under --trace, in every MPI
 * thread). `takeOrder`: the process's post sequence (SharedState.takeTraceOrder). A worker thread
 * says so to the main thread and posts its trace when its event loop empties.
 */
export function startTrace(maxEvents: number, takeOrder: (n: number) => number): void {
  const recorder = new TraceRecorder(maxEvents, takeOrder);
  current = { recorder, remove: instrument((call, method) => recorder.wrap(call, method)) };
  if (isMainThread) {
    const state = { channel: new BroadcastChannel(CHANNEL), traces: new Map<number, TraceThread>(), started: new Set<number>(), arrived: null as (() => void) | null };
    state.channel.onmessage = (e: unknown) => {
      const note = (e as { data: ThreadNote }).data;
      if (note.kind === 'started') state.started.add(note.tid);
      else state.traces.set(note.thread.tid, note.thread);
      state.arrived?.();
    };
    // The channel must not keep the process alive.
    (state.channel as unknown as { unref(): void }).unref();
    fromWorkers = state;
    return;
  }
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage({ kind: 'started', tid: threadId } satisfies ThreadNote);
  // Nor a worker alive: its trace leaves when its loop empties (beforeExit).
  (channel as unknown as { unref(): void }).unref();
  process.once('beforeExit', () => {
    const thread = takeOwn(threadId);
    if (thread !== null) channel.postMessage({ kind: 'trace', thread } satisfies ThreadNote);
    channel.close();
  });
}

function takeOwn(tid: number): TraceThread | null {
  if (current === null) return null;
  const { recorder, remove } = current;
  current = null;
  remove();
  return recorder.dump(tid);
}

/**
 * Main thread, at finalize: stops recording and returns the traces of this thread (tid 0) and of
 * the worker threads (tid: their Node thread id), waiting up to WORKER_TRACE_WAIT_MS for workers
 * that started recording and have not posted (a worker still running, or one that was terminated,
 * is left out). Null when not tracing.
 */
export async function takeTraces(): Promise<TraceThread[] | null> {
  const own = takeOwn(0);
  if (own === null) return null;
  const state = fromWorkers;
  fromWorkers = null;
  if (state === null) return [own];
  const giveUp = Date.now() + WORKER_TRACE_WAIT_MS;
  while ([...state.started].some((t) => !state.traces.has(t)) && Date.now() < giveUp) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(1, giveUp - Date.now()));
      state.arrived = () => { clearTimeout(timer); resolve(); };
    });
    state.arrived = null;
  }
  state.channel.close();
  return [own, ...[...state.traces.values()].sort((a, b) => a.tid - b.tid)];
}
