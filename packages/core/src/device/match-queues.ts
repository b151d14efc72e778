/**
 * Matching queues of one endpoint (papers/multichannel-parallel-queues.txt §3.3).
 *
 * Parallel mode: a posted-receive queue and an unexpected-message queue per
 * source endpoint, each under its own lock, plus one wildcard queue (own lock)
 * for ANY_SOURCE receives. An arriving message from s searches posted[s], then
 * (only when it is not empty) the wildcard queue, else joins unexpected[s]. A
 * specific receive posted while an ANY_SOURCE receive of its context is
 * pending joins the wildcard queue behind it, and moves to its source queue
 * once no wildcard of that context precedes it, so MPI's order holds:
 *
 *   wildcard: [W(any,ctx1)] -> [R2(s=3,ctx1)] -> [W'(any,ctx2)]
 *   posted[3]: [R1(ctx1)]          a message from 3 on ctx1 matches R1 first
 *                                  (posted before W), then W, then R2.
 *
 * Global mode (--matching global): one posted and one unexpected queue for all
 * sources under one lock; the baseline of the benchmark.
 *
 * Locks and invariants (multithreaded processes; a single-threaded process
 * runs the same code with the locks switched off):
 * - Lock order: source locks in ascending order, then the wildcard lock. A
 *   specific post or an arrival from s takes lock[s] (and the wildcard lock if
 *   the wildcard queue is not empty); an ANY_SOURCE post or cancel takes every
 *   source lock, then the wildcard lock.
 * - posted[s] holds receives with SRC = s only; every entry of posted[s] was
 *   posted before every wildcard-queue entry that could match the same
 *   message (an ANY entry of its context, or a specific entry for s).
 * - A specific receive joins the wildcard queue iff the queue holds an entry of
 *   its context that is ANY or for the same source; it moves to posted[s] only
 *   under lock[s] (when a message from s or a cancel passes by), so entries of
 *   other sources may wait in the wildcard queue after their wildcard is gone.
 * - Counters shared across locks (posted, unexpected, arrival, wildcard sizes)
 *   change with Atomics.
 */
import { SpinLocks, type LockHolders } from '../shm/index.ts';
import { ANY, tagMatchMask, waitAsync } from '../util/index.ts';
import { FLAG, NIL, SLOT, SLOT_WORDS, type RequestTable } from './request-table.ts';


/** Header words of an endpoint's queue block. */
const H = {
  WILD_HEAD: 0,
  WILD_TAIL: 1,
  /** ANY_SOURCE receives in the wildcard queue */
  WILD_ANY: 2,
  UNEXPECTED: 3,
  POSTED: 4,
  ARRIVAL: 5,
  /** all entries of the wildcard queue */
  WILD_COUNT: 6,
  /** bumped after each unexpected arrival; blocking probes wait on it */
  EPOCH: 7,
  /** threads waiting on EPOCH (notify only when someone waits) */
  PROBERS: 8,
  WORDS: 10,
} as const;
/** Per-source words: posted head/tail, unexpected head/tail. */
const Q = { POSTED_HEAD: 0, POSTED_TAIL: 1, UNEXP_HEAD: 2, UNEXP_TAIL: 3, WORDS: 4 } as const;

export type MatchingMode = 'parallel' | 'global';

export class MatchQueues {
  readonly #w: Int32Array;
  readonly #q: Int32Array;
  readonly #sources: number;
  readonly #global: boolean;
  readonly #locks: SpinLocks;
  /** lock cell of the wildcard queue (and, in global mode, of everything) */
  readonly #wildLock: number;

  /**
   * `sources`: number of endpoints in the job (source indices 0..sources-1). `shared`: several threads use it.
   * `holders`: what the locks ask about a holder that may have died (shm/spin-lock.ts).
   */
  constructor(table: RequestTable, buffer: SharedArrayBuffer, sources: number, mode: MatchingMode, initialize: boolean, shared = false, holders: LockHolders | null = null) {
    this.#w = table.words;
    const queueWords = H.WORDS + (sources + 1) * Q.WORDS;
    this.#q = new Int32Array(buffer, 0, queueWords);
    this.#locks = new SpinLocks(new Int32Array(buffer, queueWords * 4, sources + 1), shared, 'matching queues', holders);
    this.#wildLock = sources;
    this.#sources = sources;
    this.#global = mode === 'global';
    if (initialize) this.#q.fill(NIL).fill(0, H.WILD_ANY, H.WORDS);
  }

  static allocateBuffer(sources: number): SharedArrayBuffer {
    return new SharedArrayBuffer((H.WORDS + (sources + 1) * Q.WORDS + sources + 1) * 4);
  }

  get unexpectedCount(): number {
    return Atomics.load(this.#q, H.UNEXPECTED);
  }
  get postedCount(): number {
    return Atomics.load(this.#q, H.POSTED);
  }

  /** The arrival epoch, for waitArrival(). */
  arrivals(): number {
    return Atomics.load(this.#q, H.EPOCH);
  }

  /** After an unexpected message was queued: wakes blocking probes (of any thread). */
  notifyArrival(): void {
    Atomics.add(this.#q, H.EPOCH, 1);
    if (Atomics.load(this.#q, H.PROBERS) > 0) Atomics.notify(this.#q, H.EPOCH);
  }

  /** Resolves once the arrival epoch differs from `seen`. */
  async waitArrival(seen: number): Promise<void> {
    const q = this.#q;
    Atomics.add(q, H.PROBERS, 1);
    try {
      const arrived = waitAsync(q, H.EPOCH, seen);
      if (arrived !== null) await arrived;
    } finally {
      Atomics.sub(q, H.PROBERS, 1);
    }
  }

  // --- locks -------------------------------------------------------------------

  #lockSource(s: number): void {
    this.#locks.lock(this.#global ? this.#wildLock : s);
  }
  #unlockSource(s: number): void {
    this.#locks.unlock(this.#global ? this.#wildLock : s);
  }
  /**
   * Every source lock, then the wildcard lock (parallel mode); the one lock in global mode. A lock
   * whose holder died throws (shm/spin-lock.ts): the ones this thread took are released first, so
   * only the dead holder's stays taken.
   */
  #lockAll(): void {
    let s = 0;
    try {
      if (!this.#global) for (; s < this.#sources; s++) this.#locks.lock(s);
      this.#locks.lock(this.#wildLock);
    } catch (e) {
      while (s > 0) this.#locks.unlock(--s);
      throw e;
    }
  }
  /** The wildcard lock, taken while holding source `src`'s, which is released if it throws (as in #lockAll). */
  #lockWildHolding(src: number): void {
    try {
      this.#locks.lock(this.#wildLock);
    } catch (e) {
      this.#locks.unlock(src);
      throw e;
    }
  }
  #unlockAll(): void {
    this.#locks.unlock(this.#wildLock);
    if (!this.#global) for (let s = this.#sources - 1; s >= 0; s--) this.#locks.unlock(s);
  }

  /** Base word of source `s`'s queues (the single shared queue in global mode). */
  #src(s: number): number {
    return H.WORDS + (this.#global ? this.#sources : s) * Q.WORDS;
  }

  // --- operations ------------------------------------------------------------------

  /**
   * A receive slot (CTX, SRC, TAG set) looks for an unexpected message. Returns
   * the message slot, removed from matching, or NIL after queueing the receive.
   */
  postRecv(recv: number): number {
    const w = this.#w;
    const rb = recv * SLOT_WORDS;
    const ctx = w[rb + SLOT.CTX]!;
    const src = w[rb + SLOT.SRC]!;
    const tag = w[rb + SLOT.TAG]!;
    const q = this.#q;
    if (this.#global) {
      this.#locks.lock(this.#wildLock);
      const found = q[H.UNEXPECTED]! > 0 ? this.#scanUnexpected(this.#src(0), ctx, src, tag, true) : NIL;
      if (found === NIL) {
        Atomics.add(q, H.POSTED, 1);
        this.#append(this.#src(0) + Q.POSTED_HEAD, recv);
      }
      this.#locks.unlock(this.#wildLock);
      return found;
    }
    if (src === ANY) {
      this.#lockAll();
      const found = Atomics.load(q, H.UNEXPECTED) > 0 ? this.#oldestUnexpected(ctx, tag, true) : NIL;
      if (found === NIL) {
        Atomics.add(q, H.POSTED, 1);
        this.#append(H.WILD_HEAD, recv);
        Atomics.add(q, H.WILD_ANY, 1);
        Atomics.add(q, H.WILD_COUNT, 1);
      }
      this.#unlockAll();
      return found;
    }
    this.#locks.lock(src);
    const found = this.#scanUnexpected(this.#src(src), ctx, src, tag, true);
    if (found !== NIL) {
      this.#locks.unlock(src);
      return found;
    }
    // POSTED counts the receive only once its queue is known: a wildcard lock that throws leaves it as it was.
    if (Atomics.load(q, H.WILD_COUNT) > 0) {
      this.#lockWildHolding(src);
      if (this.#wildcardBlocks(ctx, src)) {
        Atomics.add(q, H.POSTED, 1);
        this.#append(H.WILD_HEAD, recv);
        Atomics.add(q, H.WILD_COUNT, 1);
        this.#locks.unlock(this.#wildLock);
        this.#locks.unlock(src);
        return NIL;
      }
      this.#locks.unlock(this.#wildLock);
    }
    Atomics.add(q, H.POSTED, 1);
    this.#append(this.#src(src) + Q.POSTED_HEAD, recv);
    this.#locks.unlock(src);
    return NIL;
  }

  /**
   * An arrived message slot (CTX, SRC, TAG set) looks for its receive. Returns
   * the receive slot, removed from matching, or NIL after queueing the message
   * as unexpected.
   */
  arrive(msg: number): number {
    const w = this.#w;
    const mb = msg * SLOT_WORDS;
    const ctx = w[mb + SLOT.CTX]!;
    const src = w[mb + SLOT.SRC]!;
    const tag = w[mb + SLOT.TAG]!;
    const q = this.#q;
    const base = this.#src(src);
    this.#lockSource(src);
    let found = this.#takeFirst(base + Q.POSTED_HEAD, ctx, src, tag);
    if (found === NIL && !this.#global && Atomics.load(q, H.WILD_COUNT) > 0) {
      this.#lockWildHolding(src);
      found = this.#takeFirst(H.WILD_HEAD, ctx, src, tag);
      if (found !== NIL) {
        Atomics.sub(q, H.WILD_COUNT, 1);
        if (w[found * SLOT_WORDS + SLOT.SRC] === ANY) Atomics.sub(q, H.WILD_ANY, 1);
        this.#releaseSource(src);
      }
      this.#locks.unlock(this.#wildLock);
    }
    if (found !== NIL) {
      Atomics.sub(q, H.POSTED, 1);
    } else {
      w[mb + SLOT.ARRIVAL] = Atomics.add(q, H.ARRIVAL, 1);
      Atomics.add(q, H.UNEXPECTED, 1);
      this.#append(base + Q.UNEXP_HEAD, msg);
    }
    this.#unlockSource(src);
    return found;
  }

  /** The first unexpected message that a receive (ctx, src, tag) would match, left in place; or NIL. */
  probe(ctx: number, src: number, tag: number): number {
    return this.#findUnexpected(ctx, src, tag, false);
  }

  /** The first unexpected message that a receive (ctx, src, tag) would match, removed from matching (matched probe); or NIL. */
  takeMatching(ctx: number, src: number, tag: number): number {
    return this.#findUnexpected(ctx, src, tag, true);
  }

  /** Removes a posted receive that has not matched yet; false if it is no longer queued. */
  cancelRecv(recv: number): boolean {
    const src = this.#w[recv * SLOT_WORDS + SLOT.SRC]!;
    const q = this.#q;
    let removed: boolean;
    if (this.#global) {
      this.#locks.lock(this.#wildLock);
      removed = this.#unlink(this.#src(0) + Q.POSTED_HEAD, recv);
      this.#locks.unlock(this.#wildLock);
    } else if (src === ANY) {
      this.#lockAll();
      removed = this.#unlink(H.WILD_HEAD, recv);
      if (removed) {
        Atomics.sub(q, H.WILD_ANY, 1);
        Atomics.sub(q, H.WILD_COUNT, 1);
        for (let s = 0; s < this.#sources; s++) this.#releaseSource(s);
      }
      this.#unlockAll();
    } else {
      this.#locks.lock(src);
      removed = this.#unlink(this.#src(src) + Q.POSTED_HEAD, recv);
      if (!removed && Atomics.load(q, H.WILD_COUNT) > 0) {
        this.#lockWildHolding(src);
        removed = this.#unlink(H.WILD_HEAD, recv);
        if (removed) Atomics.sub(q, H.WILD_COUNT, 1);
        this.#locks.unlock(this.#wildLock);
      }
      this.#locks.unlock(src);
    }
    if (removed) Atomics.sub(q, H.POSTED, 1);
    return removed;
  }

  /**
   * Removes the unexpected message from endpoint `src` that send slot `peerSlot` of process
   * `peerProcess` sent (a synchronous or rendezvous send being cancelled, MPI 3.1 §3.8.4) and
   * returns it; NIL when it is not queued, because a receive (or a matched probe) has taken it.
   */
  cancelMessage(src: number, peerProcess: number, peerSlot: number): number {
    const q = this.#q;
    if (Atomics.load(q, H.UNEXPECTED) === 0) return NIL;
    const w = this.#w;
    const lock = this.#global ? this.#wildLock : src;
    const headIdx = this.#src(src) + Q.UNEXP_HEAD;
    let found = NIL;
    this.#locks.lock(lock);
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      if (w[b + SLOT.PEER_SLOT] === peerSlot && w[b + SLOT.PEER_PROCESS] === peerProcess && w[b + SLOT.SRC] === src && (w[b + SLOT.FLAGS]! & (FLAG.SYNC | FLAG.RNDV)) !== 0) {
        this.#splice(headIdx, prev, s);
        Atomics.sub(q, H.UNEXPECTED, 1);
        found = s;
        break;
      }
      prev = s;
    }
    this.#locks.unlock(lock);
    return found;
  }

  // --- internals (the caller holds the locks) ---------------------------------------

  #findUnexpected(ctx: number, src: number, tag: number, take: boolean): number {
    if (Atomics.load(this.#q, H.UNEXPECTED) === 0) return NIL;
    if (this.#global) {
      this.#locks.lock(this.#wildLock);
      const m = this.#scanUnexpected(this.#src(0), ctx, src, tag, take);
      this.#locks.unlock(this.#wildLock);
      return m;
    }
    if (src === ANY) {
      this.#lockAll();
      const m = this.#oldestUnexpected(ctx, tag, take);
      this.#unlockAll();
      return m;
    }
    this.#locks.lock(src);
    const m = this.#scanUnexpected(this.#src(src), ctx, src, tag, take);
    this.#locks.unlock(src);
    return m;
  }

  /** True if the wildcard queue holds an entry of `ctx` that is ANY or for `src` (wildcard lock held). */
  #wildcardBlocks(ctx: number, src: number): boolean {
    const w = this.#w;
    for (let s = this.#q[H.WILD_HEAD]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      if (w[b + SLOT.CTX] === ctx) {
        const esrc = w[b + SLOT.SRC]!;
        if (esrc === ANY || esrc === src) return true;
      }
    }
    return false;
  }

  /**
   * Moves the wildcard queue's specific receives for `src` that no ANY entry of
   * their context precedes to the tail of posted[src] (lock[src] and the
   * wildcard lock held).
   */
  #releaseSource(src: number): void {
    const w = this.#w;
    const q = this.#q;
    let blocked: number[] | null = null;
    let prev = NIL;
    let s = q[H.WILD_HEAD]!;
    while (s !== NIL) {
      const b = s * SLOT_WORDS;
      const next = w[b + SLOT.NEXT]!;
      const ctx = w[b + SLOT.CTX]!;
      const esrc = w[b + SLOT.SRC]!;
      if (esrc === ANY) {
        (blocked ??= []).push(ctx);
        prev = s;
      } else if (esrc === src && (blocked === null || !blocked.includes(ctx))) {
        this.#splice(H.WILD_HEAD, prev, s);
        Atomics.sub(q, H.WILD_COUNT, 1);
        this.#append(this.#src(src) + Q.POSTED_HEAD, s);
      } else {
        prev = s;
      }
      s = next;
    }
  }

  #append(headIdx: number, slot: number): void {
    const q = this.#q;
    const tail = q[headIdx + 1]!;
    this.#w[slot * SLOT_WORDS + SLOT.NEXT] = NIL;
    if (tail === NIL) q[headIdx] = slot;
    else this.#w[tail * SLOT_WORDS + SLOT.NEXT] = slot;
    q[headIdx + 1] = slot;
  }

  /** Removes `s`, whose predecessor is `prev` (NIL: s is the head), from the list at `headIdx`. */
  #splice(headIdx: number, prev: number, s: number): void {
    const w = this.#w;
    const q = this.#q;
    const next = w[s * SLOT_WORDS + SLOT.NEXT]!;
    if (prev === NIL) q[headIdx] = next;
    else w[prev * SLOT_WORDS + SLOT.NEXT] = next;
    if (q[headIdx + 1] === s) q[headIdx + 1] = prev;
    w[s * SLOT_WORDS + SLOT.NEXT] = NIL;
  }

  #unlink(headIdx: number, slot: number): boolean {
    const w = this.#w;
    const q = this.#q;
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      if (s === slot) {
        this.#splice(headIdx, prev, s);
        return true;
      }
      prev = s;
    }
    return false;
  }

  /** First entry of a posted queue whose receive pattern matches a message (ctx, src, tag), removed; or NIL. */
  #takeFirst(headIdx: number, ctx: number, src: number, tag: number): number {
    const w = this.#w;
    const q = this.#q;
    // A collective context matches on the tags' sequence bits (util/coll-tag.ts); every other one on the whole tag.
    const mask = tagMatchMask(ctx);
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      const rtag = w[b + SLOT.TAG]!;
      const rsrc = w[b + SLOT.SRC]!;
      if (w[b + SLOT.CTX] === ctx && (((rtag ^ tag) & mask) === 0 || rtag === ANY) && (rsrc === src || rsrc === ANY)) {
        this.#splice(headIdx, prev, s);
        return s;
      }
      prev = s;
    }
    return NIL;
  }

  /** First unexpected message of one queue matching a receive pattern; removed when `take`. */
  #scanUnexpected(base: number, ctx: number, src: number, tag: number, take: boolean): number {
    const w = this.#w;
    const q = this.#q;
    const headIdx = base + Q.UNEXP_HEAD;
    const mask = tagMatchMask(ctx);
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      if (w[b + SLOT.CTX] === ctx && (tag === ANY || ((w[b + SLOT.TAG]! ^ tag) & mask) === 0) && (src === ANY || w[b + SLOT.SRC] === src)) {
        if (take) {
          this.#splice(headIdx, prev, s);
          Atomics.sub(q, H.UNEXPECTED, 1);
        }
        return s;
      }
      prev = s;
    }
    return NIL;
  }

  /** Across all sources (all locks held), the earliest-arrived unexpected message matching (ctx, ANY, tag). */
  #oldestUnexpected(ctx: number, tag: number, take: boolean): number {
    let best = NIL;
    let bestArrival = 0;
    let bestSource = 0;
    const w = this.#w;
    for (let s = 0; s < this.#sources; s++) {
      const m = this.#scanUnexpected(H.WORDS + s * Q.WORDS, ctx, ANY, tag, false);
      if (m === NIL) continue;
      const arrival = w[m * SLOT_WORDS + SLOT.ARRIVAL]!;
      // Arrival numbers wrap at 2^31; compare by signed difference.
      if (best === NIL || ((arrival - bestArrival) | 0) < 0) {
        best = m;
        bestArrival = arrival;
        bestSource = s;
      }
    }
    if (best !== NIL && take) {
      this.#unlink(H.WORDS + bestSource * Q.WORDS + Q.UNEXP_HEAD, best);
      Atomics.sub(this.#q, H.UNEXPECTED, 1);
    }
    return best;
  }
}
