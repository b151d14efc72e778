/**
 * The target side of one-sided communication (docs/adr/0036-one-sided.md): the device's one
 * extension point for windows. Every Device has an RmaTarget; the wiring hands it each RMA frame
 * (FRAME_KIND.RMA, device-wiring.ts) on whichever thread reads the channel — a channel engine
 * under --progress threads, the main thread under inline progress — and it applies the operation
 * to the window's memory at once and answers with a plain EAGER frame on the window's
 * point-to-point context, which the origin's posted receive matches like any message. So a target
 * whose user thread computes still serves Put, Get, accumulates, lock and unlock while its
 * channels are hosted by engines.
 *
 * State: a table of registered windows, by context id and member endpoint (a window may have
 * several members in one process: threads on their endpoints), per thread; the process's window
 * directory (rma-directory.ts) fills it on every thread that may apply. A window's memory is a
 * SharedArrayBuffer (or, on a thread that hosts its channels itself, any memory of that thread)
 * and a small control array in shared memory: word LOCK is the passive-target lock (0 free, -1
 * exclusive, n > 0 shared holders), word ACC the spin lock every accumulate holds while it reads
 * and writes, so accumulates to one element are atomic whichever thread applies them.
 *
 * Request frame (origin -> target): kind RMA, contextId the window's, tag the reply tag (the
 * origin's posted receive), aux = code << 16 | element kind << 8 | op, aux2 = bytes asked (GET,
 * GET_ACC's result) or the lock type; payload = f64 target byte displacement, then the data.
 * PUT and ACC (no reply tag, nothing asked) carry the displacement in the header instead (tag:
 * displacement / 2^32, aux2: its low 32 bits; rmaDispWords) and the data alone as payload, so the
 * origin hands its buffer to the transport without first copying it behind a prefix.
 * Reply (target -> origin): EAGER, same context, tag the reply tag; payload the fetched bytes, or
 * one status byte (RMA_STATUS). Frames of one origin reach one target in order (one channel per
 * pair), so an UNLOCK's or FLUSH's reply means every earlier operation has been applied.
 *
 * Lazy locks (win-passive.ts): an origin may send LOCK, its operations and UNLOCK (or FLUSH, at a
 * flush: the lock then stays held) at once, each with the RMA_BATCH bit in aux, before it knows the
 * lock is granted. A batch LOCK is not answered; when it is refused, this thread remembers the
 * origin for the window and drops the batch's operations until its UNLOCK or FLUSH, which answers
 * BUSY (granted: OK, after the release or with the lock held); a dropped fetch (GET, GET_ACC, CAS)
 * is answered with no bytes, which the origin, told BUSY after it, throws away. One
 * channel per endpoint pair brings the batch whole, in order, to one thread, so that memory is
 * this thread's alone.
 *
 * A lazy epoch of one Put or Accumulate that fits one frame travels as that one frame, marked
 * RMA_EPOCH (MPICH ch3's lock-op-unlock packet): tag the reply tag, aux2 the lock type, payload
 * the f64 displacement then the data. This thread tries the lock; granted, it applies the
 * operation, releases the lock and answers OK; refused, it applies nothing and answers BUSY (the
 * origin then locks the ordinary way). One frame each way: nothing is remembered between frames.
 *
 * Nothing here throws per frame: a frame for an unknown window or outside its memory is answered
 * with RMA_STATUS.ERROR, or no bytes where the answer is data (the origin turns either into an
 * MPIError naming the call).
 */
import { FRAME_KIND, fillAnswer, newFrameHeader, type FrameHeader } from '../transport/index.ts';
import { accumulate, ELEM_SIZE } from './rma-accumulate.ts';
import { WindowDirectory } from './rma-directory.ts';

/** What an RMA frame asks (aux >>> 16). */
export const RMA_CODE = {
  PUT: 1,
  GET: 2,
  ACC: 3,
  /** accumulate, and answer the values before it (GetAccumulate, FetchAndOp) */
  GET_ACC: 4,
  /** payload: origin value then compare value; answers the value before */
  CAS: 5,
  /** aux2 = RMA_LOCK_TYPE; answers GRANTED or BUSY (the origin retries) */
  LOCK: 6,
  /** aux2 = RMA_LOCK_TYPE; answers OK once released (every earlier operation applied) */
  UNLOCK: 7,
  /** answers OK: every earlier operation of this origin is applied */
  FLUSH: 8,
} as const;

export const RMA_LOCK_TYPE = { EXCLUSIVE: 1, SHARED: 2 } as const;

/**
 * A bit of a request's aux: the frame belongs to a lazily locked epoch sent at once (LOCK,
 * operations, UNLOCK; see the file comment): applied only if its LOCK was granted.
 */
export const RMA_BATCH = 1 << 24;

/**
 * A bit of a PUT or ACC request's aux: the frame is a whole lazily locked epoch (lock, this one
 * operation, unlock; see the file comment), answered OK once applied and released, or BUSY.
 */
export const RMA_EPOCH = 1 << 25;

/** One-byte answers to LOCK, UNLOCK, FLUSH, PUT-less requests, or an error. */
export const RMA_STATUS = { OK: 1, GRANTED: 2, BUSY: 3, ERROR: 4 } as const;

/** Words of a window's control array: SEQ counts attach/detach calls of a dynamic window (see RmaTarget.attach). */
export const RMA_CONTROL = { LOCK: 0, ACC: 1, SEQ: 2, WORDS: 3 } as const;

/** A PUT or ACC frame's displacement in its header: [tag, aux2] = [disp / 2^32, disp mod 2^32] (disp < 2^53; tag below 2^21). */
export function rmaDispWords(disp: number): [tag: number, aux2: number] {
  const high = Math.floor(disp / 2 ** 32);
  return [high, disp - high * 2 ** 32];
}

/** A dynamic window's address: region index * RMA_REGION_SPAN + offset in the region (an exact f64). */
export const RMA_REGION_SPAN = 2 ** 32;

/** Bytes of the request payload's prefix (the f64 displacement). */
export const RMA_PREFIX_BYTES = 8;

/** A window as its target sees it. */
export interface RmaWindowRecord {
  /** the window's context id (its communicator's point-to-point context) */
  readonly contextId: number;
  /** the member's endpoint: frames to it (their dstEndpoint) apply here */
  readonly endpoint: number;
  /** this creation's number (random, told to every member): a later window on the same context and endpoint is another record */
  readonly serial: number;
  /** the window's memory (a SharedArrayBuffer's bytes wherever another thread may apply) */
  readonly memory: Uint8Array;
  /** RMA_CONTROL words, in shared memory */
  readonly control: Int32Array;
  /** a dynamic window's attached regions by index (memory is then empty), else undefined */
  readonly regions?: Map<number, Uint8Array>;
}

/** What this thread knows of a dynamic window: the attach/detach calls it has applied (RMA_CONTROL.SEQ), frames held until it knows all. */
interface DynamicState {
  seen: number;
  held: Held[];
}

/** A held remote frame, or an operation of an origin on this thread (applyLocal) with what to call with its answer. */
type Held =
  | { srcProcess: number; h: FrameHeader; payload: Uint8Array }
  | { local: { code: number; elem: number; op: number; aux2: number; disp: number; data: Uint8Array; done: (answer: Uint8Array | null) => void } };

/** What one-sided frames travel on: the device's send path (SendPath.out) and its layout. */
export interface RmaOut {
  /** Sends frame `h` to process `proc` on the channel's usual path; `call` names it in errors. */
  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call: string): void;
  /** The largest eager payload between endpoints `src` and `dst` on this path. */
  eagerMax(src: number, dst: number): number;
  /** The process that hosts `endpoint`. */
  processOf(endpoint: number): number;
}

export class RmaTarget {
  /** by windowKey(contextId, endpoint) */
  readonly #windows = new Map<number, RmaWindowRecord>();
  readonly #dynamic = new Map<number, DynamicState>();
  readonly #out: RmaOut;
  readonly #reply: FrameHeader = newFrameHeader();
  readonly #request: FrameHeader = newFrameHeader();
  readonly #status = new Uint8Array(1);
  /** by windowKey: origin endpoints whose batch LOCK was refused (their batch is dropped until its UNLOCK) */
  readonly #refused = new Map<number, Set<number>>();

  /** The process's window directory on this thread (rma-directory.ts): opened at init by every thread of a multithreaded process. */
  directory: WindowDirectory | null = null;

  /**
   * Called for every frame from another process that this thread serves as a target (bootstrap.ts:
   * the thread's blocking wait polls on, WaitPoll.renew): a target in a long wait would otherwise
   * sleep in epoll and be woken for each epoch of an origin's lock/Put/unlock loop.
   */
  onServe: (() => void) | null = null;

  constructor(out: RmaOut) {
    this.#out = out;
  }

  /** Opens this thread's end of its process's window directory (`jobKey`, `process`); `name`: directoryName's. */
  openDirectory(jobKey: string, process: number, name: string): WindowDirectory {
    this.directory ??= new WindowDirectory(`tsmpi-rma:${jobKey}:${process}`, name, this);
    return this.directory;
  }

  /**
   * The origin's side: sends a one-sided request frame (FRAME_KIND.RMA) from local endpoint `src`
   * to remote endpoint `dst`; `call` names it in errors.
   */
  send(src: number, dst: number, ctx: number, tag: number, aux: number, aux2: number, payload: Uint8Array, call: string): void {
    this.#out.out(this.#out.processOf(dst), this.#header(FRAME_KIND.RMA, src, dst, ctx, tag, aux, aux2, payload.length), payload, call);
  }

  /**
   * The origin's side: a zero-byte EAGER message from local endpoint `src` to remote endpoint `dst`
   * on context `ctx` with `tag`, sent on the path this pair's RMA frames take (not a reader's route,
   * Device's first frame), so it arrives after every request sent before it: a fence's notice
   * (win-origin.ts noticeExchange), matched by an ordinary receive.
   */
  notify(src: number, dst: number, ctx: number, tag: number, call: string): void {
    this.#out.out(this.#out.processOf(dst), this.#header(FRAME_KIND.EAGER, src, dst, ctx, tag, 0, 0, 0), null, call);
  }

  /** The origin's one header object, filled for a frame (the transport takes its fields before `out` returns). */
  #header(kind: number, src: number, dst: number, ctx: number, tag: number, aux: number, aux2: number, payloadLength: number): FrameHeader {
    const h = this.#request;
    h.kind = kind;
    h.flags = 0;
    h.contextId = ctx;
    h.srcEndpoint = src;
    h.dstEndpoint = dst;
    h.tag = tag;
    h.seq = 0;
    h.aux = aux;
    h.aux2 = aux2;
    h.payloadLength = payloadLength;
    return h;
  }

  /** The largest RMA frame payload between `src` and `dst` (the channel's eager maximum on this path). */
  maxPayload(src: number, dst: number): number {
    return this.#out.eagerMax(src, dst);
  }

  /**
   * Serves window member `w` on this thread from now on (Win creation, before its closing barrier).
   * A dynamic member's record comes with no region and this thread has applied none of its attach
   * and detach calls (seen 0), whatever SEQ says now: the record is registered and announced at
   * creation, before its Win exists to attach, and every call's message follows the record's from
   * the same thread, in order. A thread that takes the record late (descheduled while the target
   * created, attached and sent the address) finds SEQ already counting an attach whose message is
   * still queued behind the record's; counting it as seen would refuse the address as unattached.
   */
  register(w: RmaWindowRecord): void {
    const k = windowKey(w.contextId, w.endpoint);
    this.#windows.set(k, w);
    if (w.regions !== undefined) this.#dynamic.set(k, { seen: 0, held: [] });
  }

  /** Stops serving the member; `serial`: only that creation's record (a later window may reuse the context). */
  unregister(contextId: number, endpoint: number, serial?: number): void {
    const k = windowKey(contextId, endpoint);
    if (serial !== undefined && this.#windows.get(k)?.serial !== serial) return;
    this.#windows.delete(k);
    this.#dynamic.delete(k);
    this.#refused.delete(k);
  }

  /** The member of window `contextId` at `endpoint`, if this thread serves it. */
  recordOf(contextId: number, endpoint: number): RmaWindowRecord | undefined {
    return this.#windows.get(windowKey(contextId, endpoint));
  }

  /**
   * Applies attach (memory) or detach (null) number `seq` of a dynamic window's region. The
   * creating thread counts each call in RMA_CONTROL.SEQ before telling the engines, so an engine
   * that sees a frame while SEQ is ahead of what it has applied holds the window's frames (in
   * order) until the calls reach it: an origin that learnt an address never finds it missing.
   */
  attach(contextId: number, endpoint: number, region: number, memory: Uint8Array | null, seq: number): void {
    const k = windowKey(contextId, endpoint);
    const w = this.#windows.get(k);
    const d = this.#dynamic.get(k);
    if (w === undefined || d === undefined) return;
    if (memory === null) w.regions!.delete(region);
    else w.regions!.set(region, memory);
    if (seq > d.seen) d.seen = seq;
    if (d.seen < Atomics.load(w.control, RMA_CONTROL.SEQ) || d.held.length === 0) return;
    const held = d.held;
    d.held = [];
    for (const f of held) {
      if ('local' in f) this.applyLocal(w, f.local.code, f.local.elem, f.local.op, f.local.aux2, f.local.disp, f.local.data, f.local.done);
      else this.arrive(f.srcProcess, f.h, f.payload);
    }
  }

  /**
   * An origin on this thread applies one request to member `w` of its own process (WinOrigin's
   * local target). Of a dynamic window whose attach or detach this thread has not applied yet
   * (RMA_CONTROL.SEQ ahead of it: the target's thread counted the call, the directory's message
   * is on its way), the request is held in order with the window's other held frames, exactly as
   * arrive holds a remote origin's, and applied when the message comes: an origin that learnt an
   * address by any message finds the region. `disp` is the target byte displacement apart from
   * `data` (no prefix to build: the data is copied only when held). `done` gets the answer (a copy)
   * now or then.
   */
  applyLocal(w: RmaWindowRecord, code: number, elem: number, op: number, aux2: number, disp: number, data: Uint8Array, done: (answer: Uint8Array | null) => void): void {
    const k = windowKey(w.contextId, w.endpoint);
    const d = w.regions !== undefined && this.#windows.get(k) === w ? this.#dynamic.get(k) : undefined;
    if (d !== undefined && (d.held.length > 0 || d.seen < Atomics.load(w.control, RMA_CONTROL.SEQ))) {
      // The directory's message releases it: keep its channel ref'd till then, or a worker thread
      // that awaits nothing else (its flush on this operation) exits before the message comes.
      const release = this.directory?.hold();
      const answered = release === undefined ? done : (answer: Uint8Array | null): void => {
        release();
        done(answer);
      };
      d.held.push({ local: { code, elem, op, aux2, disp, data: data.slice(), done: answered } });
      return;
    }
    const control = code === RMA_CODE.LOCK || code === RMA_CODE.UNLOCK || code === RMA_CODE.FLUSH;
    const answer = control ? this.apply(w, code, elem, op, aux2, data, this.#status) : this.applyAt(w, code, elem, op, aux2, disp, data, this.#status);
    done(answer === this.#status ? answer.slice() : answer);
  }

  /**
   * Where the transport may read a large RMA frame's payload (TransportHandlers.payloadTarget): a
   * PUT outside a batch lands straight in the window's memory, the one copy at the target (arrive
   * then finds it in place). Null for everything else (read as usual): batches (their lock may be
   * refused), dynamic windows (an attach may not have reached this thread), anything out of range.
   * A PUT frame above the eager limit (an origin's whole Put, win-origin.ts) is accepted only into
   * this array, so an origin sends one only where this answers (a non-dynamic window, no batch).
   */
  payloadTarget(h: FrameHeader): Uint8Array | null {
    if (h.aux >>> 16 !== RMA_CODE.PUT) return null;
    const w = this.#windows.get(windowKey(h.contextId, h.dstEndpoint));
    if (w === undefined || w.regions !== undefined) return null;
    const disp = (h.tag >>> 0) * 2 ** 32 + (h.aux2 >>> 0);
    if (disp + h.payloadLength > w.memory.length) return null;
    return w.memory.subarray(disp, disp + h.payloadLength);
  }

  /** An RMA frame from process `srcProcess` (device-wiring.ts): applied now, answered if asked. */
  arrive(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    this.onServe?.();
    const k = windowKey(h.contextId, h.dstEndpoint);
    const w = this.#windows.get(k);
    if (w?.regions !== undefined) {
      const d = this.#dynamic.get(k)!;
      if (d.held.length > 0 || d.seen < Atomics.load(w.control, RMA_CONTROL.SEQ)) {
        // An attach or detach has not reached this thread yet: keep the frame (the payload is valid only now) and its order.
        d.held.push({ srcProcess, h: { ...h }, payload: payload.slice() });
        return;
      }
    }
    const code = (h.aux >>> 16) & 0xff;
    let answer: Uint8Array | null;
    if ((h.aux & RMA_EPOCH) !== 0) answer = this.#epoch(w, code, h, payload);
    else if ((h.aux & RMA_BATCH) !== 0) answer = this.#batch(w, k, code, h, payload);
    else answer = w === undefined ? refusal(code, this.#status) : this.#applyFrame(w, code, h, payload);
    if (answer === null) return;
    const r = fillAnswer(this.#reply, h, FRAME_KIND.EAGER, h.tag, 0, answer.length);
    r.seq = 0;
    // The transport may keep the payload until its flush: answers that alias shared scratch are copied.
    this.#out.out(srcProcess, r, answer === this.#status ? answer.slice() : answer, 'progress');
    // (NOTHING is never written to.)
  }

  /** A frame of a lazily locked epoch's batch (RMA_BATCH): its fetches are answered (no bytes when its LOCK was refused), and its last, UNLOCK or FLUSH (OK, or BUSY when refused). */
  #batch(w: RmaWindowRecord | undefined, k: number, code: number, h: FrameHeader, payload: Uint8Array): Uint8Array | null {
    // Not answered: LOCK, PUT and ACC; answered: the fetches (their data) and the last (the status).
    if (w === undefined) return code === RMA_CODE.LOCK ? null : refusal(code, this.#status);
    const src = h.srcEndpoint;
    if (code === RMA_CODE.LOCK) {
      if (!tryLock(w.control, h.aux2)) {
        let origins = this.#refused.get(k);
        if (origins === undefined) this.#refused.set(k, (origins = new Set()));
        origins.add(src);
      }
      return null;
    }
    const origins = this.#refused.get(k);
    if (origins !== undefined && origins.has(src)) {
      // Refused: a fetch is answered with no bytes (the origin drops it and asks again once it holds the lock).
      if (code !== RMA_CODE.UNLOCK && code !== RMA_CODE.FLUSH) return refusal(code, this.#status);
      origins.delete(src);
      if (origins.size === 0) this.#refused.delete(k);
      return statusBytes(this.#status, RMA_STATUS.BUSY);
    }
    return this.#applyFrame(w, code, h, payload);
  }

  /** A whole epoch in one frame (RMA_EPOCH): under the lock of type aux2, if free, the operation is applied and the lock released (OK); else BUSY. */
  #epoch(w: RmaWindowRecord | undefined, code: number, h: FrameHeader, payload: Uint8Array): Uint8Array {
    if (w === undefined || (code !== RMA_CODE.PUT && code !== RMA_CODE.ACC)) return statusBytes(this.#status, RMA_STATUS.ERROR);
    if (!tryLock(w.control, h.aux2)) return statusBytes(this.#status, RMA_STATUS.BUSY);
    // Out of range is dropped as a batch's operation is (only a peer that skipped the origin's checks sends it).
    this.apply(w, code, (h.aux >>> 8) & 0xff, h.aux & 0xff, 0, payload, this.#status);
    unlock(w.control, h.aux2);
    return statusBytes(this.#status, RMA_STATUS.OK);
  }

  /** Applies request frame `h` to `w`: PUT and ACC with the displacement in the header, the others with it in the payload. */
  #applyFrame(w: RmaWindowRecord, code: number, h: FrameHeader, payload: Uint8Array): Uint8Array | null {
    const elem = (h.aux >>> 8) & 0xff;
    if (code === RMA_CODE.PUT || code === RMA_CODE.ACC) return this.applyAt(w, code, elem, h.aux & 0xff, 0, (h.tag >>> 0) * 2 ** 32 + (h.aux2 >>> 0), payload, this.#status);
    return this.apply(w, code, elem, h.aux & 0xff, h.aux2, payload, this.#status);
  }

  /**
   * Applies one request to window `w` (also the origin's own call when it targets itself);
   * returns the answer's bytes, or null for an operation that is not answered (PUT, ACC).
   */
  apply(w: RmaWindowRecord, code: number, elem: number, op: number, aux2: number, payload: Uint8Array, status: Uint8Array): Uint8Array | null {
    const control = w.control;
    if (code === RMA_CODE.LOCK) return statusBytes(status, tryLock(control, aux2) ? RMA_STATUS.GRANTED : RMA_STATUS.BUSY);
    if (code === RMA_CODE.UNLOCK) {
      unlock(control, aux2);
      return statusBytes(status, RMA_STATUS.OK);
    }
    if (code === RMA_CODE.FLUSH) return statusBytes(status, RMA_STATUS.OK);
    if (payload.length < RMA_PREFIX_BYTES) return refusal(code, status);
    const disp = new DataView(payload.buffer, payload.byteOffset, RMA_PREFIX_BYTES).getFloat64(0, true);
    return this.applyAt(w, code, elem, op, aux2, disp, payload.subarray(RMA_PREFIX_BYTES), status);
  }

  /** As apply, with the target byte displacement `disp` apart from the data (PUT and ACC frames; an origin's own Puts). */
  applyAt(w: RmaWindowRecord, code: number, elem: number, op: number, aux2: number, disp: number, data: Uint8Array, status: Uint8Array): Uint8Array | null {
    const control = w.control;
    let mem = w.memory;
    if (w.regions !== undefined) {
      const region = Math.floor(disp / RMA_REGION_SPAN);
      const m = w.regions.get(region);
      if (m === undefined) return refusal(code, status);
      mem = m;
      disp -= region * RMA_REGION_SPAN;
    }
    const asked = code === RMA_CODE.GET || code === RMA_CODE.GET_ACC ? aux2 : code === RMA_CODE.CAS ? data.length >>> 1 : data.length;
    if (!Number.isInteger(disp) || disp < 0 || disp + asked > mem.length || (code !== RMA_CODE.PUT && code !== RMA_CODE.GET && ELEM_SIZE[elem] === undefined)) {
      // Only a peer that skipped the origin's checks gets here.
      return refusal(code, status);
    }
    switch (code) {
      case RMA_CODE.PUT:
        // The transport may have read the data in place already (payloadTarget).
        if (data.buffer !== mem.buffer || data.byteOffset !== mem.byteOffset + disp) mem.set(data, disp);
        return null;
      case RMA_CODE.GET:
        return mem.slice(disp, disp + asked);
      case RMA_CODE.ACC:
        withAccLock(control, () => accumulate(mem, disp, data, elem, op));
        return null;
      case RMA_CODE.GET_ACC:
        return withAccLock(control, () => {
          const before = mem.slice(disp, disp + asked);
          if (data.length > 0) accumulate(mem, disp, data, elem, op);
          return before;
        });
      case RMA_CODE.CAS:
        return withAccLock(control, () => {
          const n = asked;
          const before = mem.slice(disp, disp + n);
          let same = true;
          for (let i = 0; i < n; i++) if (before[i] !== data[n + i]) same = false;
          if (same) mem.set(data.subarray(0, n), disp);
          return before;
        });
      default:
        return refusal(code, status);
    }
  }
}

const NOTHING = new Uint8Array(0);

/** One number per window member: a u32 context id and an endpoint of this process's job (below 2^21), an exact f64. */
function windowKey(contextId: number, endpoint: number): number {
  return endpoint * 2 ** 32 + contextId;
}

/**
 * The answer to a request that cannot be applied (no such window here, outside its memory):
 * none for PUT and ACC, no bytes for the fetching codes (whose answers are data), else ERROR.
 */
function refusal(code: number, status: Uint8Array): Uint8Array | null {
  if (code === RMA_CODE.PUT || code === RMA_CODE.ACC) return null;
  if (code === RMA_CODE.GET || code === RMA_CODE.GET_ACC || code === RMA_CODE.CAS) return NOTHING;
  return statusBytes(status, RMA_STATUS.ERROR);
}

function statusBytes(status: Uint8Array, s: number): Uint8Array {
  status[0] = s;
  return status;
}

/** Takes the passive-target lock if it is free for `type` (no waiting: a BUSY origin asks again). */
function tryLock(control: Int32Array, type: number): boolean {
  if (type === RMA_LOCK_TYPE.EXCLUSIVE) return Atomics.compareExchange(control, RMA_CONTROL.LOCK, 0, -1) === 0;
  for (;;) {
    const v = Atomics.load(control, RMA_CONTROL.LOCK);
    if (v < 0) return false;
    if (Atomics.compareExchange(control, RMA_CONTROL.LOCK, v, v + 1) === v) return true;
  }
}

function unlock(control: Int32Array, type: number): void {
  if (type === RMA_LOCK_TYPE.EXCLUSIVE) Atomics.compareExchange(control, RMA_CONTROL.LOCK, -1, 0);
  else if (Atomics.load(control, RMA_CONTROL.LOCK) > 0) Atomics.sub(control, RMA_CONTROL.LOCK, 1);
}

/**
 * Runs `f` holding the window's accumulate lock. Holders are channel engines and main threads
 * applying one operation (no waiting inside), so a short spin is the whole wait.
 */
function withAccLock<T>(control: Int32Array, f: () => T): T {
  while (Atomics.compareExchange(control, RMA_CONTROL.ACC, 0, 1) !== 0) {
    /* another thread applies one accumulate: spin */
  }
  try {
    return f();
  } finally {
    Atomics.store(control, RMA_CONTROL.ACC, 0);
  }
}
