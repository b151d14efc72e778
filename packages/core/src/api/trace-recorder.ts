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
 * ones (#wrapSend, #wrapRecv: a source function each, so that each is optimized for one method;
 * #wrapRequest for Request.wait/test/waitall...) take their arguments as named parameters, so no
 * array, arguments object, apply, token, closure or closure context is made per call.
 *
 * What V8 compiles for a traced message (ADR 0038): the post wrappers and #requestEnded's loop
 * write their CALL and MSG rows in place rather than through #call/#msg/#check. A helper called
 * per message gets hot before its callers and is compiled on its own, then again inlined into each
 * of them; on 2 cores held by 2 polling ranks, that compile time is the job's. Objects per event: the
 * Status a lower-case recv is given (an irecv waits in a list, PendingReceives, until it
 * completes), and for a call that returns a Promise the closures that see it settle (made in
 * methods of their own, #postSettled and #callSettled, so that the wrappers keep no context).
 *
 * Threads: every MPI thread of a traced process records its own calls with a recorder of its own
 * (trace-threads.ts starts them and hands their traces to finalize).
 */
import { performance } from 'node:perf_hooks';
import type { TraceThread } from '../pmi/index.ts';
import { REQ_KIND } from '../device/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { PROC_NULL } from './constants.ts';
import type { Method } from './profile.ts';
import { Request, type RequestComm } from './request.ts';
import { PendingReceives } from './trace-pending-receives.ts';
import { bytesWord, CALL_ROW, CHUNK_ROWS, CompactRows, expandCalls, expandMsgs, MSG_ROW, ROW_WORDS, UNKNOWN_BYTES } from './trace-rows.ts';
import { Status } from './status.ts';
import { ANY, bytesOf, type CallInfo, intArg, isComm, SHAPES, type Shape, statusOf, type TracedComm } from './trace-calls.ts';

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
    if (info.isRequest) return this.#wrapRequest(info, method);
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
      // The CALL row, then (p >= 0: not PROC_NULL) the MSG row, written here rather than by
      // #call and #msg: see the file comment (what V8 compiles for a traced message).
      const durMs = performance.now() - t0;
      if (rec.#callCount >= rec.#max) {
        rec.#dropped++;
        return out;
      }
      const ctx = target._ctx;
      if (ctx !== rec.#lastCtx) rec.#noteComm(target);
      const row = rec.#callCount++;
      let o = rec.#calls.add();
      let c = rec.#calls.last;
      c.f64[(o >> 1) + CALL_ROW.START_F64] = rec.#origin + t0;
      c.f32[o + CALL_ROW.DURATION_F32] = durMs;
      let t = c.i32;
      t[o + CALL_ROW.NAME] = id;
      t[o + CALL_ROW.COMM] = ctx;
      t[o + CALL_ROW.PEER] = p;
      t[o + CALL_ROW.TAG] = g;
      c.u32[o + CALL_ROW.BYTES] = buf instanceof Uint8Array ? buf.byteLength : bytesWord(bytesOf(buf));
      if (p < 0) return out;
      if (rec.#msgCount >= rec.#max) {
        rec.#dropped++;
        return out;
      }
      rec.#msgCount++;
      o = rec.#msgs.add();
      c = rec.#msgs.last;
      c.f64[(o >> 1) + MSG_ROW.ORDER_F64] = order;
      t = c.i32;
      t[o + MSG_ROW.CALL] = row;
      t[o + MSG_ROW.IS_RECV] = 0;
      t[o + MSG_ROW.CTX] = target._sendCtx;
      t[o + MSG_ROW.SRC] = ownEndpoint();
      t[o + MSG_ROW.DST] = target._peers[p]!;
      t[o + MSG_ROW.TAG] = g;
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
      // The CALL row, written here (see tracedSend).
      const durMs = performance.now() - t0;
      if (rec.#callCount >= rec.#max) {
        rec.#dropped++;
        return out;
      }
      const ctx = target._ctx;
      if (ctx !== rec.#lastCtx) rec.#noteComm(target);
      rec.#callCount++;
      const o = rec.#calls.add();
      const c = rec.#calls.last;
      c.f64[(o >> 1) + CALL_ROW.START_F64] = rec.#origin + t0;
      c.f32[o + CALL_ROW.DURATION_F32] = durMs;
      const t = c.i32;
      t[o + CALL_ROW.NAME] = id;
      t[o + CALL_ROW.COMM] = ctx;
      t[o + CALL_ROW.PEER] = typeof source === 'number' ? source : ANY;
      t[o + CALL_ROW.TAG] = typeof tag === 'number' ? tag : ANY;
      c.u32[o + CALL_ROW.BYTES] = UNKNOWN_BYTES;
      rec.#pending.add(out as Request<unknown>, order);
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

  /**
   * The wrapper of a Request.* call (wait, test, waitall...: they may complete irecv requests),
   * made once per call name. Each takes at most one argument and none reads `arguments`, so the
   * first three are forwarded as named ones, as the post wrappers do: no argument array, no apply
   * (through which V8 compiled a waitall of its own instead of inlining it where it is called).
   */
  #wrapRequest(info: CallInfo, method: Method): Method {
    const rec = this;
    const id = info.id;
    return function tracedRequest(this: unknown, a0: unknown, a1: unknown, a2: unknown): unknown {
      if (rec.#depth !== 0) return method.call(this, a0, a1, a2);
      const t0 = performance.now();
      rec.#depth = 1;
      let out: unknown;
      try {
        out = method.call(this, a0, a1, a2);
      } catch (e) {
        rec.#depth = 0;
        rec.#requestEnded(id, t0, this, a0);
        throw e;
      }
      rec.#depth = 0;
      if (out instanceof Promise) return rec.#requestSettled(out, id, t0, this, a0);
      rec.#requestEnded(id, t0, this, a0);
      return out;
    };
  }

  /** `out`, the promise of a Request.* call, with its rows written when it settles (apart from the wrapper: see #postSettled). */
  #requestSettled(out: Promise<unknown>, id: number, t0: number, target: unknown, list: unknown): Promise<unknown> {
    return out.then(
      (v: unknown) => { this.#requestEnded(id, t0, target, list); return v; },
      (e: unknown) => { this.#requestEnded(id, t0, target, list); throw e; },
    );
  }

  /**
   * A Request.* call (started at t0) ended, returned or failed: its CALL row, and a MSG row for
   * each receive request among its target and `list` (its first argument) that is now complete.
   */
  #requestEnded(id: number, t0: number, target: unknown, list: unknown): void {
    if (this.#callCount >= this.#max) {
      // The row would be dropped, and with it the call's messages.
      this.#dropped++;
      return;
    }
    const row = this.#call(id, this.#origin + t0, performance.now() - t0, null, -1, -1, -1);
    if (row < 0 || this.#pending.size === 0) return;
    this.#check(target, target, row);
    if (!Array.isArray(list)) return;
    // A waitall's list: #check's work written out here, the one loop per message that V8 compiles
    // (#check and #msg on their own were each compiled for this path as well as inlined here).
    for (let i = 0; i < list.length; i++) {
      const r: unknown = list[i];
      if (!(r instanceof Request) || !r._reported) continue;
      const d = r._r;
      if (d === null || d.kind !== REQ_KIND.RECV) continue;
      const order = this.#pending.take(r);
      if (order < 0 || !d.done || d.sourceEndpoint < 0 || d.cancelled) continue;
      const comm = r._comm as unknown as TracedComm & RequestComm;
      if (this.#msgCount < this.#max) {
        this.#msgCount++;
        const o = this.#msgs.add();
        const c = this.#msgs.last;
        c.f64[(o >> 1) + MSG_ROW.ORDER_F64] = order;
        const t = c.i32;
        t[o + MSG_ROW.CALL] = row;
        t[o + MSG_ROW.IS_RECV] = 1;
        t[o + MSG_ROW.CTX] = comm._ctx;
        t[o + MSG_ROW.SRC] = d.sourceEndpoint;
        t[o + MSG_ROW.DST] = ownEndpoint();
        t[o + MSG_ROW.TAG] = d.tag;
      } else {
        this.#dropped++;
      }
      // A list that holds the call's own target (r.wait([r])): as #check does.
      if (r === target) this.#describe(row, comm, comm._rankOfEndpoint(d.sourceEndpoint), d.tag, d.count);
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
    if (info.isIrecv && !failed && result instanceof Request && comm !== null) this.#pending.add(result, order);
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

  /**
   * The target of a Request.* call (wait, test...: #requestEnded does a list's requests in its own
   * loop): its MSG row if it is a receive request now complete. Read from
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
