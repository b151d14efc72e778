/**
 * Matching queues of one endpoint (papers/multichannel-parallel-queues.txt §3.3).
 *
 * Parallel mode: a posted-receive queue and an unexpected-message queue per
 * source endpoint, plus one wildcard queue for ANY_SOURCE receives. An
 * arriving message from s searches posted[s], then (only when it is not empty)
 * the wildcard queue, else joins unexpected[s]. A specific receive posted while
 * an ANY_SOURCE receive of the same context is pending joins the wildcard queue
 * behind it, and moves to its source queue once no wildcard of that context
 * precedes it, so MPI's order holds:
 *
 *   wildcard: [W(any,ctx1)] -> [R2(s=3,ctx1)] -> [W'(any,ctx2)]
 *   posted[3]: [R1(ctx1)]          a message from 3 on ctx1 matches R1 first
 *                                  (posted before W), then W, then R2.
 *
 * Global mode (--matching global): one posted and one unexpected queue for all
 * sources; the baseline of the benchmark.
 *
 * State: queues are singly linked lists of request slots (RequestTable NEXT
 * word), with head/tail words in a SharedArrayBuffer. Invariants: a slot is in
 * at most one queue; posted[s] holds only receives with SRC = s and no earlier
 * pending wildcard of their context; the wildcard queue holds every ANY_SOURCE
 * receive in posting order. In the multithreaded design each queue has its own
 * lock word beside its head (issue: multithreaded MPI); here the caller is the
 * endpoint's single progress thread.
 */
import { NIL, SLOT, SLOT_WORDS, type RequestTable } from './request-table.ts';

const ANY = -1;

/** Header words of an endpoint's queue block. */
const H = {
  WILD_HEAD: 0,
  WILD_TAIL: 1,
  /** ANY_SOURCE receives in the wildcard queue */
  WILD_ANY: 2,
  UNEXPECTED: 3,
  POSTED: 4,
  ARRIVAL: 5,
  WORDS: 8,
} as const;
/** Per-source words: posted head/tail, unexpected head/tail. */
const Q = { POSTED_HEAD: 0, POSTED_TAIL: 1, UNEXP_HEAD: 2, UNEXP_TAIL: 3, WORDS: 4 } as const;

export type MatchingMode = 'parallel' | 'global';

export class MatchQueues {
  readonly #w: Int32Array;
  readonly #q: Int32Array;
  readonly #sources: number;
  readonly #global: boolean;

  /** `sources`: number of endpoints in the job (source indices 0..sources-1). */
  constructor(table: RequestTable, buffer: SharedArrayBuffer, sources: number, mode: MatchingMode, initialize: boolean) {
    this.#w = table.words;
    this.#q = new Int32Array(buffer);
    this.#sources = sources;
    this.#global = mode === 'global';
    if (initialize) this.#q.fill(NIL).fill(0, H.WILD_ANY, H.WORDS);
  }

  static allocateBuffer(sources: number): SharedArrayBuffer {
    return new SharedArrayBuffer((H.WORDS + (sources + 1) * Q.WORDS) * 4);
  }

  get unexpectedCount(): number {
    return this.#q[H.UNEXPECTED]!;
  }
  get postedCount(): number {
    return this.#q[H.POSTED]!;
  }

  /** Base word of source `s`'s queues (the single shared queue in global mode). */
  #src(s: number): number {
    return H.WORDS + (this.#global ? this.#sources : s) * Q.WORDS;
  }

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
    if (q[H.UNEXPECTED]! > 0) {
      const found = src === ANY && !this.#global ? this.#oldestUnexpected(ctx, tag) : this.#scanUnexpected(this.#src(src), ctx, src, tag, true);
      if (found !== NIL) return found;
    }
    q[H.POSTED]!++;
    if (this.#global) {
      this.#append(this.#src(0) + Q.POSTED_HEAD, recv);
    } else if (src === ANY) {
      this.#append(H.WILD_HEAD, recv);
      q[H.WILD_ANY]!++;
    } else if (q[H.WILD_ANY]! > 0 && this.#wildcardPending(ctx)) {
      this.#append(H.WILD_HEAD, recv);
    } else {
      this.#append(this.#src(src) + Q.POSTED_HEAD, recv);
    }
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
    if (q[H.POSTED]! > 0) {
      let found = this.#takeFirst(base + Q.POSTED_HEAD, ctx, src, tag);
      if (found === NIL && !this.#global && q[H.WILD_HEAD]! !== NIL) {
        found = this.#takeFirst(H.WILD_HEAD, ctx, src, tag);
        if (found !== NIL && w[found * SLOT_WORDS + SLOT.SRC] === ANY) {
          q[H.WILD_ANY]!--;
          this.#releaseSpecific();
        }
      }
      if (found !== NIL) {
        q[H.POSTED]!--;
        return found;
      }
    }
    w[mb + SLOT.ARRIVAL] = q[H.ARRIVAL]!++;
    q[H.UNEXPECTED]!++;
    this.#append(base + Q.UNEXP_HEAD, msg);
    return NIL;
  }

  /** The first unexpected message that a receive (ctx, src, tag) would match, left in place; or NIL. */
  probe(ctx: number, src: number, tag: number): number {
    if (this.#q[H.UNEXPECTED] === 0) return NIL;
    if (src === ANY && !this.#global) return this.#oldestUnexpectedPeek(ctx, tag);
    return this.#scanUnexpected(this.#src(src), ctx, src, tag, false);
  }

  /** Removes an unexpected message found by probe() (matched probe). */
  takeUnexpected(msg: number): void {
    const src = this.#w[msg * SLOT_WORDS + SLOT.SRC]!;
    if (this.#unlink(this.#src(src) + Q.UNEXP_HEAD, msg)) this.#q[H.UNEXPECTED]!--;
  }

  /** Removes a posted receive that has not matched yet; false if it is no longer queued. */
  cancelRecv(recv: number): boolean {
    const src = this.#w[recv * SLOT_WORDS + SLOT.SRC]!;
    const q = this.#q;
    let removed: boolean;
    if (this.#global) {
      removed = this.#unlink(this.#src(0) + Q.POSTED_HEAD, recv);
    } else if (src === ANY) {
      removed = this.#unlink(H.WILD_HEAD, recv);
      if (removed) {
        q[H.WILD_ANY]!--;
        this.#releaseSpecific();
      }
    } else {
      removed = this.#unlink(this.#src(src) + Q.POSTED_HEAD, recv) || this.#unlink(H.WILD_HEAD, recv);
    }
    if (removed) q[H.POSTED]!--;
    return removed;
  }

  // --- internals -----------------------------------------------------------

  #wildcardPending(ctx: number): boolean {
    const w = this.#w;
    for (let s = this.#q[H.WILD_HEAD]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      if (w[b + SLOT.SRC] === ANY && w[b + SLOT.CTX] === ctx) return true;
    }
    return false;
  }

  /** After a wildcard left the queue: specific receives with no wildcard of their context ahead move to their source queue. */
  #releaseSpecific(): void {
    const w = this.#w;
    const q = this.#q;
    const blocked: number[] = [];
    let prev = NIL;
    let s = q[H.WILD_HEAD]!;
    while (s !== NIL) {
      const b = s * SLOT_WORDS;
      const next = w[b + SLOT.NEXT]!;
      const ctx = w[b + SLOT.CTX]!;
      const src = w[b + SLOT.SRC]!;
      if (src === ANY) {
        if (!blocked.includes(ctx)) blocked.push(ctx);
        prev = s;
      } else if (!blocked.includes(ctx)) {
        if (prev === NIL) q[H.WILD_HEAD] = next;
        else w[prev * SLOT_WORDS + SLOT.NEXT] = next;
        if (q[H.WILD_TAIL] === s) q[H.WILD_TAIL] = prev;
        w[b + SLOT.NEXT] = NIL;
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

  #unlink(headIdx: number, slot: number): boolean {
    const w = this.#w;
    const q = this.#q;
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      if (s === slot) {
        const next = w[s * SLOT_WORDS + SLOT.NEXT]!;
        if (prev === NIL) q[headIdx] = next;
        else w[prev * SLOT_WORDS + SLOT.NEXT] = next;
        if (q[headIdx + 1] === s) q[headIdx + 1] = prev;
        w[s * SLOT_WORDS + SLOT.NEXT] = NIL;
        return true;
      }
      prev = s;
    }
    return false;
  }

  /**
   * First entry of a posted queue that matches a message (ctx, src, tag) —
   * entries hold receive patterns — removed; or NIL.
   */
  #takeFirst(headIdx: number, ctx: number, src: number, tag: number): number {
    const w = this.#w;
    const q = this.#q;
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      const rtag = w[b + SLOT.TAG]!;
      const rsrc = w[b + SLOT.SRC]!;
      if (w[b + SLOT.CTX] === ctx && (rtag === tag || rtag === ANY) && (rsrc === src || rsrc === ANY)) {
        const next = w[b + SLOT.NEXT]!;
        if (prev === NIL) q[headIdx] = next;
        else w[prev * SLOT_WORDS + SLOT.NEXT] = next;
        if (q[headIdx + 1] === s) q[headIdx + 1] = prev;
        w[b + SLOT.NEXT] = NIL;
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
    let prev = NIL;
    for (let s = q[headIdx]!; s !== NIL; s = w[s * SLOT_WORDS + SLOT.NEXT]!) {
      const b = s * SLOT_WORDS;
      if (w[b + SLOT.CTX] === ctx && (tag === ANY || w[b + SLOT.TAG] === tag) && (src === ANY || w[b + SLOT.SRC] === src)) {
        if (take) {
          const next = w[b + SLOT.NEXT]!;
          if (prev === NIL) q[headIdx] = next;
          else w[prev * SLOT_WORDS + SLOT.NEXT] = next;
          if (q[headIdx + 1] === s) q[headIdx + 1] = prev;
          w[b + SLOT.NEXT] = NIL;
          q[H.UNEXPECTED]!--;
        }
        return s;
      }
      prev = s;
    }
    return NIL;
  }

  /** Across all sources, the earliest-arrived unexpected message matching (ctx, ANY, tag), left in place. */
  #oldestUnexpectedPeek(ctx: number, tag: number): number {
    let best = NIL;
    let bestArrival = 0;
    const w = this.#w;
    for (let s = 0; s < this.#sources; s++) {
      const m = this.#scanUnexpected(H.WORDS + s * Q.WORDS, ctx, ANY, tag, false);
      if (m === NIL) continue;
      const arrival = w[m * SLOT_WORDS + SLOT.ARRIVAL]!;
      // Arrival numbers wrap at 2^31; compare by signed difference.
      if (best === NIL || ((arrival - bestArrival) | 0) < 0) {
        best = m;
        bestArrival = arrival;
      }
    }
    return best;
  }

  #oldestUnexpected(ctx: number, tag: number): number {
    const m = this.#oldestUnexpectedPeek(ctx, tag);
    if (m !== NIL) this.takeUnexpected(m);
    return m;
  }
}
