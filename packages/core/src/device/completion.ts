/**
 * Slots and completion of one thread's requests (the device's bookkeeping, device.ts).
 *
 * Every request slot has an OWNER, the thread whose JavaScript request it backs. Any thread may
 * match and complete any slot: the owner completes its own directly (complete, fill); for another
 * thread's slot the status goes into the slot's words, the data into shared memory (payload pool,
 * or the big arena for large payloads), and the slot number into the owner's completion ring
 * (finishSlot), which the owner drains on its event loop or in poll().
 *
 * The event loop: the transport holds no reference to it; this thread's requests do while one is in
 * flight (hold / release), so a program that returns without finalize exits. In a multithreaded
 * process the first hold also starts serving the completion ring.
 */
import type { PayloadPool, Ring } from '../shm/index.ts';
import { ERR_NO_MEM, ERR_OTHER, ERR_TRUNCATE, MPIError, decodeObject, mpiError } from '../util/index.ts';
import { REQ_KIND, type DevRequest } from './dev-request.ts';
import { FLAG, NIL, SLOT, SLOT_WORDS, STATE, type SlotPool } from './request-table.ts';
import { COMM_STAT, STAT, type SharedState } from './shared-state.ts';
import type { Lifetime } from './lifetime.ts';
import type { ThreadBridge } from './thread-bridge.ts';

/**
 * Entries `reqs` starts with. It grows by doubling to the slot table's capacity (requestSlots,
 * 65,536 by default) when a slot beyond it is taken: preallocated whole, it held 512 KiB in every
 * thread that calls MPI, though a hello takes a few slots (issue 38, idle memory).
 */
const INITIAL_REQ_ENTRIES = 1024;

export class Completion {
  /** the JavaScript side of each slot this thread owns (undefined beyond its length); set by attach */
  reqs: (DevRequest | undefined)[];
  readonly #pool: SlotPool;
  readonly #w: Int32Array;
  readonly #me: number;
  readonly #stat: Float64Array;
  readonly #payloads: PayloadPool;
  readonly #big: PayloadPool | null;
  readonly #lifetime: Lifetime;
  readonly #bridge: ThreadBridge;
  readonly #capacity: number;
  /** this thread's completion ring (multithreaded processes), or null */
  readonly ring: Ring | null;
  /** operations of this thread in flight; while > 0 #keepAlive holds the event loop */
  #active = 0;
  #keepAlive: NodeJS.Timeout | null = null;

  constructor(shared: SharedState, pool: SlotPool, lifetime: Lifetime, bridge: ThreadBridge, threadId: number, stat: Float64Array, ring: Ring | null) {
    this.#pool = pool;
    this.#w = shared.table.words;
    this.#capacity = shared.table.capacity;
    this.reqs = new Array(Math.min(this.#capacity, INITIAL_REQ_ENTRIES));
    this.#me = threadId;
    this.#stat = stat;
    this.#payloads = shared.payloads;
    this.#big = shared.big;
    this.#lifetime = lifetime;
    this.#bridge = bridge;
    this.ring = ring;
  }

  /** Operations of this thread holding the event loop (a lane with posted receives counts once). */
  get active(): number {
    return this.#active;
  }

  /**
   * Holds the event loop for one more operation of this thread. The transport holds no event-loop
   * reference; a program that returns without finalize exits once nothing is held. In a
   * multithreaded process the first hold also listens to the completion ring.
   */
  hold(): void {
    if (this.#active++ === 0) {
      if (this.#keepAlive === null) this.#keepAlive = setInterval(noop, 1 << 30);
      else this.#keepAlive.ref();
      if (this.ring !== null) this.#bridge.serveCompletions(this.ring, this.#onCompletionRecord, this.#isActive);
    }
  }

  release(): void {
    if (--this.#active === 0) this.#keepAlive?.unref();
  }

  /** The device is closing or destroyed: nothing holds the event loop any more. */
  stop(): void {
    if (this.#keepAlive !== null) clearInterval(this.#keepAlive);
  }

  /**
   * A slot owned by this thread for request r (the request holds the event loop until it completes).
   * `hold` false: the caller (send) already holds it for r. On ERR_NO_MEM r is abandoned (abandon).
   */
  ownSlot(r: DevRequest, kind: number, hold = true): number {
    const slot = this.#pool.alloc(kind);
    if (slot === NIL) {
      this.abandon(r, !hold);
      throw slotsExhausted(r.call, this.#capacity);
    }
    if (hold) this.hold();
    this.#w[slot * SLOT_WORDS + SLOT.OWNER] = this.#me;
    this.attach(r, slot);
    return slot;
  }

  /** Makes `slot` request r's (r.slot, reqs[slot]), growing reqs when the slot is beyond it. */
  attach(r: DevRequest, slot: number): void {
    r.slot = slot;
    if (slot >= this.reqs.length) this.#grow(slot);
    this.reqs[slot] = r;
  }

  #grow(slot: number): void {
    let n = this.reqs.length * 2;
    while (n <= slot) n *= 2;
    const grown = new Array<DevRequest | undefined>(Math.min(n, this.#capacity));
    for (let i = 0; i < this.reqs.length; i++) grown[i] = this.reqs[i];
    this.reqs = grown;
  }

  /**
   * Undoes request r, which failed to start (ERR_NO_MEM) and will never complete: its slot, the
   * references the API layer took for it (lifetime.ts), and, when `held`, the caller's hold of the
   * event loop go back, so that a failed call leaves nothing live behind.
   */
  abandon(r: DevRequest, held: boolean): void {
    if (held) this.release();
    if (r.slot !== NIL) {
      this.reqs[r.slot] = undefined;
      this.#pool.free(r.slot);
      r.slot = NIL;
    }
    if (r.refMode !== 0) this.#lifetime.releaseRequest(r);
  }

  /**
   * Completes r: its slot and references go back, its finish and onComplete run. `held` false: r never
   * held the event loop (a generalized request, Device.completeNow), so there is no hold to release,
   * and completing it does not take and drop one, which toggles the loop's reference (a timer's ref and
   * unref) whenever nothing else of this thread is in flight (issue 36: once per persistent start).
   */
  complete(r: DevRequest, held = true): void {
    if (held) this.release();
    r.done = true;
    if (r.slot !== NIL) {
      this.reqs[r.slot] = undefined;
      this.#pool.free(r.slot);
      r.slot = NIL;
    }
    if (r.refMode !== 0) this.#lifetime.releaseRequest(r);
    if (r.finish !== null) r.finish(r);
    const cb = r.onComplete;
    if (cb !== null) {
      r.onComplete = null;
      cb(r);
    }
  }

  /** A send of `len` bytes on context `ctx` that completed without error: MPI.stats and comm.stats count it (a failed one never is). */
  /** This thread's message and byte totals (its statistics row). */
  stats(): { messagesSent: number; messagesReceived: number; bytesSent: number; bytesReceived: number } {
    const s = this.#stat;
    return { messagesSent: s[STAT.SENT]!, messagesReceived: s[STAT.RECEIVED]!, bytesSent: s[STAT.BYTES_SENT]!, bytesReceived: s[STAT.BYTES_RECEIVED]! };
  }

  countSent(len: number, ctx: number): void {
    const st = this.#stat;
    st[STAT.SENT]!++;
    st[STAT.BYTES_SENT]! += len;
    const c = STAT.WORDS + (ctx >>> 2) * COMM_STAT.WORDS;
    st[c + COMM_STAT.SENT]!++;
    st[c + COMM_STAT.BYTES_SENT]! += len;
  }

  /** Completes slot `slot` (its status and payload already in shared memory) wherever its owner is. */
  finishSlot(slot: number): void {
    const owner = this.#w[slot * SLOT_WORDS + SLOT.OWNER]!;
    if (owner === this.#me) {
      const r = this.reqs[slot];
      if (r !== undefined) this.#completeFromSlot(r, slot);
      return;
    }
    Atomics.store(this.#w, slot * SLOT_WORDS + SLOT.STATE, STATE.COMPLETE);
    this.#bridge.complete(owner, slot);
  }

  /** Completes this thread's requests that other threads finished (drains the completion ring). */
  poll(): void {
    if (this.ring !== null) this.#bridge.drainCompletions(this.ring, this.#onCompletionRecord);
  }

  /** Completes receive slot `recv` (status words set) with `data`, wherever its owner is. */
  fillSlot(recv: number, data: Uint8Array): void {
    const w = this.#w;
    const rb = recv * SLOT_WORDS;
    if (w[rb + SLOT.OWNER] === this.#me) {
      const r = this.reqs[recv]!;
      r.sourceEndpoint = w[rb + SLOT.ST_SOURCE]!;
      r.tag = w[rb + SLOT.ST_TAG]!;
      this.fill(r, data, (w[rb + SLOT.FLAGS]! & FLAG.OBJECT) !== 0);
      return;
    }
    const len = data.length;
    let off = NIL;
    if (len > 0) {
      off = this.#payloads.alloc(len);
      if (off !== NIL) {
        this.#payloads.bytes.set(data, off);
      } else {
        off = this.#big!.alloc(len);
        if (off === NIL) {
          w[rb + SLOT.ST_ERROR] = ERR_NO_MEM;
          this.finishSlot(recv);
          return;
        }
        this.#big!.bytes.set(data, off);
        w[rb + SLOT.FLAGS] |= FLAG.BIG;
      }
    }
    w[rb + SLOT.PAYLOAD] = off;
    w[rb + SLOT.ST_COUNT] = len;
    this.finishSlot(recv);
  }

  /** Completes receive r (this thread's) with message bytes `data`. */
  fill(r: DevRequest, data: Uint8Array, isObject: boolean): void {
    const n = data.length;
    r.count = n;
    if (r.objectMode) {
      // decodeObject reads shared memory's bytes through a private copy of its own (util/decode-stage.ts).
      // A value this process cannot make (a class it did not register) fails this receive, not the device.
      try {
        r.value = isObject ? decodeObject(data, r.call) : data.slice();
      } catch (e) {
        r.error = e instanceof MPIError ? e : mpiError(ERR_OTHER, r.call, `the message could not be decoded: ${String(e)}`);
      }
    } else {
      const buf = r.buf!;
      if (n > buf.length) {
        buf.set(data.subarray(0, buf.length));
        r.count = buf.length;
        r.error = truncated(r, n, buf.length);
      } else if (n > 0) {
        buf.set(data);
      }
    }
    this.complete(r);
  }

  readonly #isActive = (): boolean => this.#active > 0;

  readonly #onCompletionRecord = (offset: number): void => {
    const slot = this.ring!.words[offset >>> 2]!;
    const r = this.reqs[slot];
    if (r !== undefined) this.#completeFromSlot(r, slot);
  };

  /** Completes this thread's request r from what another thread left in its slot. */
  #completeFromSlot(r: DevRequest, slot: number): void {
    const w = this.#w;
    const b = slot * SLOT_WORDS;
    const err = w[b + SLOT.ST_ERROR]!;
    if (err !== 0) {
      r.error = err === ERR_NO_MEM
        ? mpiError(err, r.call, 'the message did not fit the shared large-payload arena on its way from the channel\'s thread (at most 1 GiB per message crosses threads)')
        : mpiError(err, r.call, 'the operation failed in another thread (see the job output)');
      this.complete(r);
      return;
    }
    if (r.kind !== REQ_KIND.RECV) {
      // A sync send matched, or a rendezvous send's data left; or its message was cancelled (Protocol.cancelSend), which sent nothing.
      if ((w[b + SLOT.FLAGS]! & FLAG.CANCELLED) !== 0) r.cancelled = true;
      else this.countSent(w[b + SLOT.LENGTH]! >>> 0, w[b + SLOT.CTX]!);
      this.complete(r);
      return;
    }
    r.sourceEndpoint = w[b + SLOT.ST_SOURCE]!;
    r.tag = w[b + SLOT.ST_TAG]!;
    const count = w[b + SLOT.ST_COUNT]! >>> 0; // lengths above 2^31 wrap in the Int32 words
    const off = w[b + SLOT.PAYLOAD]!;
    const flags = w[b + SLOT.FLAGS]!;
    const arena = (flags & FLAG.BIG) !== 0 ? this.#big! : this.#payloads;
    const data = off === NIL || count === 0 ? EMPTY : arena.bytes.subarray(off, off + count);
    this.fill(r, data, (flags & FLAG.OBJECT) !== 0);
    if (off !== NIL) arena.free(off);
  }
}

export const EMPTY = new Uint8Array(0);
const noop = (): void => undefined;

/**
 * The environment variable of the settings table's requestSlots row (config/settings.ts), which the
 * errors of a full request table name: device/ does not import config/, and
 * packages/core/test/env-names.unit.test.ts keeps the two equal.
 */
export const REQUEST_SLOTS_ENV = 'TSMPI_REQUEST_SLOTS';

/** ERR_NO_MEM for call `call` that found all `capacity` request slots in use. */
export function slotsExhausted(call: string, capacity: number): MPIError {
  return mpiError(ERR_NO_MEM, call, `all ${capacity} request slots are in use; complete or free requests, or raise ${REQUEST_SLOTS_ENV}`);
}

/** ERR_TRUNCATE for receive r: a message of `n` bytes for a buffer of `capacity` (fill and the lanes' fill). */
export function truncated(r: DevRequest, n: number, capacity: number): MPIError {
  return mpiError(ERR_TRUNCATE, r.call, `message of ${n} bytes from endpoint ${r.sourceEndpoint} (tag ${r.tag}) is longer than the receive buffer of ${capacity} bytes`);
}
