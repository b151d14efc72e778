/**
 * How a window's origin operations travel and complete (win.ts is the API over it): RMA frames
 * through RmaTarget.send (Device.rma), in pieces a channel takes eagerly (a Put from the thread
 * that hosts the channels: one frame, read into the window; #wholePut); answers received with ordinary
 * receives on the window's communicator, one reply tag each; and what is still outstanding per
 * target — fetches whose answers are awaited, targets with Puts or Accumulates not yet confirmed by
 * a FLUSH or UNLOCK answer (device/rma-target.ts gives the frame layout and the answers).
 * An operation on the caller's own rank, or on another member in this process (threads on other
 * endpoints: their records come from the process's window directory, device/rma-directory.ts), is
 * applied at once, in this thread, to the target's shared memory: it is complete when it returns
 * (of a dynamic window, once this thread has applied every attach and detach the target has
 * counted: RmaTarget.applyLocal holds it until then, and the flushes wait for it).
 */
import { RMA_CODE, RMA_EPOCH, RMA_PREFIX_BYTES, RMA_STATUS, rmaDispWords, type RmaWindowRecord } from '../device/index.ts';
import { ERR_RMA_RANGE, ERR_WIN, mpiError, RankTable } from '../util/index.ts';
import { runtime, type ThreadRuntime } from '../runtime/index.ts';
import type { Comm } from './comm.ts';
import type { TargetSpec } from './win-args.ts';

/** Tags on the window's context: PSCW notices (win.ts), then answers, which cycle above REPLY_TAG_FIRST. */
export const TAG_POST = 1;
export const TAG_DONE = 2;
/** A fence's notice between the two members of a window (WinOrigin.noticeExchange). */
const TAG_FENCE = 3;
const NO_BYTES = new Uint8Array(0);
/** The largest Put frame of WinOrigin.#wholePut (a frame's length is a u32). */
const WHOLE_PUT_BYTES = 1 << 30;
const REPLY_TAG_FIRST = 16;
/** Scratch for a one-frame epoch's displacement (little-endian f64, as RmaTarget reads it): written then copied, so no DataView per epoch. */
const DISP = new DataView(new ArrayBuffer(RMA_PREFIX_BYTES));
const DISP_BYTES = new Uint8Array(DISP.buffer);
const REPLY_TAG_LAST = 1 << 28;

export class WinOrigin {
  readonly #comm: Comm;
  readonly #record: RmaWindowRecord;
  readonly #me: number;
  /** the records of the members in this process (other threads' endpoints), by rank: applied here */
  readonly #local: ReadonlyMap<number, RmaWindowRecord>;
  readonly #label: () => string;
  #tag = REPLY_TAG_FIRST;
  /** per target rank: fetches whose answers are awaited */
  readonly #pending = new Map<number, Promise<void>[]>();
  /** target ranks with Puts or Accumulates not yet confirmed by a flush */
  readonly #dirty = new RankTable<true>();

  constructor(comm: Comm, record: RmaWindowRecord, me: number, local: ReadonlyMap<number, RmaWindowRecord>, label: () => string) {
    this.#comm = comm;
    this.#record = record;
    this.#me = me;
    this.#local = local;
    this.#label = label;
  }

  /** Forgets that `rank` has unconfirmed Puts (its UNLOCK answer confirms them). */
  forget(rank: number): void {
    this.#dirty.delete(rank);
  }

  /** Sends PUT or ACC frames for `data` (in pieces the channel takes eagerly, whole elements each, or one whole Put: #wholePut); `flags`: RMA_BATCH or 0. */
  send(call: string, rank: number, code: number, t: TargetSpec, op: number, data: Uint8Array, flags = 0): void {
    if (data.length === 0) return;
    const rt = runtime(call);
    const local = this.#localTarget(rank);
    if (local !== null) {
      const applied = applyLocal(rt, local, code, t.elem, op, 0, t.byteDisp, data);
      if (applied instanceof Promise) this.track(rank, applied.then(() => undefined));
      return;
    }
    const dst = this.#comm._endpoints[rank]!;
    // No prefix in these frames: the target's transport reads them straight into the window (RmaTarget.payloadTarget).
    const piece = this.#wholePut(rt, code, flags) ? WHOLE_PUT_BYTES : Math.max(8, (rt.device.rma.maxPayload(this.#record.endpoint, dst) >> 3) << 3);
    for (let off = 0; off < data.length; off += piece) {
      const part = data.subarray(off, Math.min(data.length, off + piece));
      const [high, low] = rmaDispWords(t.byteDisp + off);
      rt.device.rma.send(this.#record.endpoint, dst, this.#record.contextId, high, flags | (code << 16) | (t.elem << 8) | op, low, part, call);
    }
    this.#dirty.set(rank, true);
  }

  /**
   * Sends a whole lazy epoch of one Put or Accumulate to remote `rank` as one frame (RMA_EPOCH,
   * device/rma-target.ts): `framed` is RMA_PREFIX_BYTES of room, then the data (the epoch's kept
   * copy; the displacement is written into the room). Resolves to the answer: OK (applied, the
   * lock released) or BUSY (the lock is taken: nothing applied). Null, and nothing sent, when the
   * data does not fit one frame to `rank`.
   */
  epochOp(call: string, rank: number, code: number, t: TargetSpec, op: number, lockType: number, framed: Uint8Array): Promise<number> | null {
    const rt = runtime(call);
    const dst = this.#comm._endpoints[rank]!;
    const bytes = framed.length - RMA_PREFIX_BYTES;
    if (bytes <= 0 || bytes > this.#piece(rt, dst)) return null;
    DISP.setFloat64(0, t.byteDisp, true);
    framed.set(DISP_BYTES);
    const answer = new Uint8Array(1);
    const tag = this.#nextTag();
    const recv = this.#comm.Irecv(answer, rank, tag);
    rt.device.rma.send(this.#record.endpoint, dst, this.#record.contextId, tag, RMA_EPOCH | (code << 16) | (t.elem << 8) | op, lockType, framed, call);
    return recv.wait().then(() => {
      if (answer[0] === RMA_STATUS.ERROR) throw mpiError(ERR_WIN, call, `rank ${rank} does not serve window ${this.#label()}`);
      return answer[0]!;
    });
  }

  /**
   * Whether a Put goes as one frame however large (up to WHOLE_PUT_BYTES) rather than in eager
   * pieces: a PUT outside a lazy batch, to a window that is not dynamic, from the thread that
   * hosts the channels (inline progress's main thread: no injection ring bounds its frames). Its
   * target is then sure to take the frame into the window's memory (RmaTarget.payloadTarget), as
   * a transport accepts a payload above the eager limit only into such an array: the transport
   * reads its rest straight from the socket into the window, where 64 KiB pieces were each read
   * into the transport's buffer and copied (and the frames' headers and hand-offs are one, not 16
   * per MiB). (A Put to a window its target no longer serves, which only a program that frees a
   * window inside an epoch sends, then ends the connection rather than being dropped.)
   */
  #wholePut(rt: ThreadRuntime, code: number, flags: number): boolean {
    return code === RMA_CODE.PUT && flags === 0 && this.#record.regions === undefined && rt.progress === 'inline' && rt.device.opts.threadId === 0;
  }

  /**
   * Sends GET, GET_ACC or CAS frames and receives their answers into `into` (pieces as #send;
   * CAS is one piece); resolves once every answer is in. `flags`: RMA_BATCH for a lazy epoch's
   * batch (win-passive.ts), whose refused frames are answered with no bytes (then this rejects
   * with ERR_RMA_RANGE, which the batch drops), else 0.
   */
  fetch(call: string, rank: number, code: number, elem: number, op: number, byteDisp: number, data: Uint8Array | null, into: Uint8Array, flags = 0): Promise<void> {
    const rt = runtime(call);
    const aux = flags | (code << 16) | (elem << 8) | op;
    const local = this.#localTarget(rank);
    if (local !== null) {
      const finish = (answer: Uint8Array | null): void => {
        if (answer === null || answer.length < into.length) {
          throw mpiError(ERR_RMA_RANGE, call, `rank ${rank} could not apply the operation at byte ${byteDisp} of its window ${this.#label()} (${into.length} bytes): it does not serve this window there`);
        }
        into.set(answer.subarray(0, into.length));
      };
      const applied = applyLocal(rt, local, code, elem, op, into.length, byteDisp, data ?? NO_BYTES);
      if (applied instanceof Promise) return applied.then(finish);
      try {
        finish(applied);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const dst = this.#comm._endpoints[rank]!;
    const piece = code === RMA_CODE.CAS ? into.length : this.#piece(rt, dst);
    const waits: Promise<void>[] = [];
    for (let off = 0; off < into.length || off === 0; off += piece) {
      const end = Math.min(into.length, off + piece);
      const part = into.subarray(off, end);
      const tag = this.#nextTag();
      const recv = this.#comm.Irecv(part, rank, tag);
      const sent = code === RMA_CODE.CAS ? data! : data === null ? NO_BYTES : data.subarray(off, end);
      rt.device.rma.send(this.#record.endpoint, dst, this.#record.contextId, tag, aux, part.length, withPrefix(byteDisp + off, sent), call);
      waits.push(recv.wait().then(() => {
        if (recv.status!.getCount() !== part.length) {
          throw mpiError(ERR_RMA_RANGE, call, `rank ${rank} could not apply the operation at byte ${byteDisp + off} of its window ${this.#label()} (${part.length} bytes): it does not serve this window there`);
        }
      }));
      if (end >= into.length) break;
    }
    return Promise.all(waits).then(() => undefined);
  }

  /** The record of `rank`'s window when it is in this process (applied here, at once), else null. */
  #localTarget(rank: number): RmaWindowRecord | null {
    return rank === this.#me ? this.#record : this.#local.get(rank) ?? null;
  }

  /** The largest piece of data in one frame to `dst`: the channel's eager maximum less the prefix, in whole 8-byte elements. */
  #piece(rt: ThreadRuntime, dst: number): number {
    return Math.max(8, ((rt.device.rma.maxPayload(this.#record.endpoint, dst) - RMA_PREFIX_BYTES - 64) >> 3) << 3);
  }

  #nextTag(): number {
    const t = this.#tag;
    this.#tag = t >= REPLY_TAG_LAST ? REPLY_TAG_FIRST : t + 1;
    return t;
  }

  /** Remembers a fetch until a flush of its target; a failure waits for that flush (or the caller's own wait). */
  track(rank: number, p: Promise<void>): Promise<void> {
    let list = this.#pending.get(rank);
    if (list === undefined) this.#pending.set(rank, (list = []));
    list.push(p);
    p.catch(() => undefined);
    return p;
  }

  /** Asks `rank` for its lock until granted (a taken lock answers BUSY; the origin asks again after a pause). */
  async acquire(call: string, rank: number, lt: number): Promise<void> {
    for (let pauseMs = 0; ; pauseMs = Math.min(2 * pauseMs + 1, 10)) {
      if ((await this.control(call, rank, RMA_CODE.LOCK, lt)) === RMA_STATUS.GRANTED) return;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  /** Sends LOCK, UNLOCK or FLUSH to `rank` and resolves to its answer (RMA_STATUS); `flags`: RMA_BATCH or 0. */
  async control(call: string, rank: number, code: number, aux2: number, flags = 0): Promise<number> {
    const rt = runtime(call);
    const aux = flags | (code << 16);
    const local = this.#localTarget(rank);
    if (local !== null) return (await applyLocal(rt, local, code, 0, 0, aux2, 0, NO_BYTES))![0]!;
    const answer = new Uint8Array(1);
    const tag = this.#nextTag();
    const recv = this.#comm.Irecv(answer, rank, tag);
    rt.device.rma.send(this.#record.endpoint, this.#comm._endpoints[rank]!, this.#record.contextId, tag, aux, aux2, NO_BYTES, call);
    await recv.wait();
    if (answer[0] === RMA_STATUS.ERROR) throw mpiError(ERR_WIN, call, `rank ${rank} does not serve window ${this.#label()}`);
    return answer[0]!;
  }

  /** Sends a request that is not answered (a batch's LOCK, win-passive.ts) to remote `rank`. */
  post(call: string, rank: number, code: number, aux2: number, flags: number): void {
    runtime(call).device.rma.send(this.#record.endpoint, this.#comm._endpoints[rank]!, this.#record.contextId, 0, flags | (code << 16), aux2, NO_BYTES, call);
  }

  /** Whether `rank`'s window is in this process (operations on it are applied here, at once). */
  isLocal(rank: number): boolean {
    return this.#localTarget(rank) !== null;
  }

  /**
   * The answers of `rank`'s outstanding fetches, or null when none is outstanding. Null, not a
   * resolved promise: a caller that would await nothing must not await, for an await lets the
   * transport's flush (a microtask, ADR 0061) write the frames queued so far apart from those the
   * caller queues next (a fence's notice: two writes per epoch instead of one).
   */
  awaitFetches(rank: number): Promise<unknown> | null {
    const list = this.#pending.get(rank);
    if (list === undefined) return null;
    this.#pending.delete(rank);
    return Promise.all(list);
  }

  /** awaitFetches for every target with fetches outstanding; null when there are none. */
  awaitAllFetches(): Promise<unknown> | null {
    if (this.#pending.size === 0) return null;
    const all = [...this.#pending.values()].flat();
    this.#pending.clear();
    return Promise.all(all);
  }

  /** Every operation to `rank` complete at origin and target. */
  async complete(call: string, rank: number): Promise<void> {
    const fetches = this.awaitFetches(rank);
    if (fetches !== null) await fetches;
    if (this.#dirty.delete(rank)) await this.control(call, rank, RMA_CODE.FLUSH, 0);
  }

  /**
   * A fence of a window of two members in one exchange (Win.fence): this origin's fetches answered,
   * then a zero-byte notice to the other member on the path of this origin's RMA frames
   * (RmaTarget.notify; a member in this process, whose operations were applied at once, gets an
   * ordinary message), and the other member's notice received. One channel per endpoint pair
   * brings a notice after every Put and Accumulate sent before it, applied by then: so when this
   * returns, the other member has entered the fence and every operation of this epoch on either
   * side is applied. That is all a fence of two members must do: no third member can observe
   * either's memory before the notices are in, so no FLUSH round trip and no barrier is needed
   * (but for a dynamic window's: see below).
   */
  async noticeExchange(call: string): Promise<void> {
    const other = 1 - this.#me;
    // Fetches to either member (its own rank's too: a dynamic window's held operation) complete first.
    const fetches = this.awaitAllFetches();
    if (fetches !== null) await fetches;
    const arrived = this.#comm.Irecv(NO_BYTES, other, TAG_FENCE);
    if (this.#localTarget(other) !== null) {
      this.#dirty.delete(other);
      await Promise.all([this.#comm.Isend(NO_BYTES, other, TAG_FENCE).wait(), arrived.wait()]);
      return;
    }
    // A dynamic window's frames may be held at the target until an attach or detach reaches the
    // thread that applies them (RmaTarget.arrive): the notice, no RMA frame, would pass them; a
    // FLUSH, held in order with them, is answered once they are applied.
    if (this.#record.regions !== undefined) await this.complete(call, other);
    this.#dirty.delete(other);
    runtime(call).device.rma.notify(this.#record.endpoint, this.#comm._endpoints[other]!, this.#record.contextId, TAG_FENCE, call);
    await arrived.wait();
  }

  async completeAll(): Promise<void> {
    const ranks = new Set([...this.#pending.keys(), ...this.#dirty.keys()]);
    await Promise.all([...ranks].map((r) => this.complete('Win.flush', r)));
  }
}

const HELD = Symbol('held');

/**
 * Applies a request to member `local` of this process on this thread (RmaTarget.applyLocal): its
 * answer at once, or a promise of it when a dynamic window's attach or detach has not reached this
 * thread yet (the request waits, in order, for the directory's message).
 */
function applyLocal(rt: ThreadRuntime, local: RmaWindowRecord, code: number, elem: number, op: number, aux2: number, disp: number, data: Uint8Array): Uint8Array | null | Promise<Uint8Array | null> {
  let answer: Uint8Array | null | typeof HELD = HELD;
  let later: ((a: Uint8Array | null) => void) | undefined;
  rt.device.rma.applyLocal(local, code, elem, op, aux2, disp, data, (a) => {
    if (later === undefined) answer = a;
    else later(a);
  });
  if (answer !== HELD) return answer;
  return new Promise((resolve) => (later = resolve));
}

function withPrefix(byteDisp: number, data: Uint8Array): Uint8Array {
  const p = new Uint8Array(RMA_PREFIX_BYTES + data.length);
  new DataView(p.buffer).setFloat64(0, byteDisp, true);
  p.set(data, RMA_PREFIX_BYTES);
  return p;
}

