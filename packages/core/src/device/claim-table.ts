/**
 * The shared words of receive claims (docs/adr/0023-receive-claims.md, step 1, a building block
 * not yet on the path of a message): which worker thread of a process holds the receives of one
 * (local endpoint, context, tag), in one SharedArrayBuffer every thread of the process attaches.
 *
 *   entries   CLAIM_ENTRIES of them, each: a state word (owner thread id + 1 << 3 | state), the
 *             key (local endpoint << 16 | context id) and the tag. Open addressing with linear
 *             probing from a hash of the key; an entry, once taken, is never freed: a claim ends
 *             GENERAL for good (the ADR's demotion), so a lookup stops at the first FREE entry
 *             and a full table means "no more claims in this process" (the general path)
 *   insert    one spin-lock word that serializes the (rare) insertions; lookups take no lock:
 *             an inserter writes the key words before it publishes the state word, and a reader
 *             that loads a published state sees the key (Atomics are sequentially consistent)
 *   bells     per thread: a counter bumped each time another thread asks it to give up a claim,
 *             for one Atomics.waitAsync per request on the owner's side (not one per message)
 *
 * States: FREE (never used), CLAIMED (the owner matches (e, c, t) in its own lane), DEMOTING
 * (another thread, or a wildcard or a probe on c, asked the owner to give the claim up; the
 * owner still holds it until it has moved its lane into the shared queues), GENERAL (given up:
 * the shared queues match (e, c, t) from now on). Only CLAIMED -> DEMOTING -> GENERAL and
 * CLAIMED -> GENERAL (the owner itself: its own receive into another datatype, its exit) happen.
 *
 * What this file does not decide (the device does, docs/adr/0023 "What is built"): when a claim
 * may be taken without a message of (e, c, t) already waiting in the shared queues (under the
 * match queues' every-source lock), and what a demotion moves.
 */
import { waitAsync } from '../util/index.ts';

export const CLAIM_STATE = { FREE: 0, CLAIMED: 1, DEMOTING: 2, GENERAL: 3 } as const;
export type ClaimState = (typeof CLAIM_STATE)[keyof typeof CLAIM_STATE];

/** Claims per process (docs/adr/0023: 64 at first). A power of two: the hash takes its top bits. */
export const CLAIM_ENTRIES = 64;
const HASH_SHIFT = 32 - Math.log2(CLAIM_ENTRIES);
/** Thread ids fit the 7 bits above the state (MAX_THREADS is 64). */
const MAX_OWNER = 127;

/** Words of one entry. */
const E = { STATE: 0, KEY: 1, TAG: 2, WORDS: 4 } as const;
const INSERT_LOCK = 0;
const HEADER_WORDS = 2;

export function claimWord(owner: number, state: ClaimState): number {
  return ((owner + 1) << 3) | state;
}
/** The owner's thread id in a state word, or -1 for a FREE entry. */
export function claimOwner(word: number): number {
  return (word >>> 3) - 1;
}
export function claimState(word: number): ClaimState {
  return (word & 7) as ClaimState;
}

/** What `claim` found: the entry (an index), and whether the calling thread holds it now. */
export interface ClaimResult {
  /** the entry of (e, c, t), or -1 when the table is full and has none */
  readonly entry: number;
  /** the caller holds the claim (it took it now, or held it already) and it is CLAIMED */
  readonly held: boolean;
}

export class ClaimTable {
  readonly threads: number;
  readonly #w: Int32Array;
  readonly #bells: number;
  readonly #entries: number;

  static bytesFor(threads: number): number {
    return (HEADER_WORDS + threads + CLAIM_ENTRIES * E.WORDS) * 4;
  }

  /** A view of `buffer` (ClaimTable.bytesFor(threads) bytes, zeroed when new: every entry FREE). */
  constructor(buffer: SharedArrayBuffer, threads: number) {
    if (threads > MAX_OWNER) throw new RangeError(`a claim table holds at most ${MAX_OWNER} threads, asked for ${threads}`);
    if (buffer.byteLength < ClaimTable.bytesFor(threads)) throw new RangeError(`claim table needs ${ClaimTable.bytesFor(threads)} bytes, got ${buffer.byteLength}`);
    this.threads = threads;
    this.#w = new Int32Array(buffer);
    this.#bells = HEADER_WORDS;
    this.#entries = this.#bells + threads;
  }

  /** The entry of (local endpoint, context, tag), or -1: one hashed probe of shared words, no lock. */
  find(local: number, ctx: number, tag: number): number {
    const w = this.#w;
    const key = (local << 16) | ctx;
    let i = claimHash(key, tag);
    for (let n = 0; n < CLAIM_ENTRIES; n++) {
      const at = this.#entries + i * E.WORDS;
      if (Atomics.load(w, at + E.STATE) === 0) return -1;
      if (Atomics.load(w, at + E.KEY) === key && Atomics.load(w, at + E.TAG) === tag) return i;
      i = (i + 1) & (CLAIM_ENTRIES - 1);
    }
    return -1;
  }

  /** Entry `entry`'s state word (claimOwner, claimState). */
  word(entry: number): number {
    return Atomics.load(this.#w, this.#entries + this.#check(entry) * E.WORDS + E.STATE);
  }

  /**
   * Thread `threadId` claims (local, ctx, tag): takes a FREE entry for it, or finds the entry it
   * has. Held only when the entry is (now) CLAIMED by `threadId`; otherwise the caller takes the
   * general path (another thread holds it, it is being given up or GENERAL, or the table is full).
   */
  claim(local: number, ctx: number, tag: number, threadId: number): ClaimResult {
    if (threadId < 0 || threadId >= this.threads) throw new RangeError(`thread id ${threadId} is outside 0..${this.threads - 1}`);
    const found = this.find(local, ctx, tag);
    if (found >= 0) return { entry: found, held: this.word(found) === claimWord(threadId, CLAIM_STATE.CLAIMED) };
    const w = this.#w;
    while (Atomics.compareExchange(w, INSERT_LOCK, 0, 1) !== 0) {
      // another thread inserts: a few stores
    }
    try {
      // Again under the lock: another thread may have inserted the key since the lock-free look.
      const key = (local << 16) | ctx;
      let i = claimHash(key, tag);
      for (let n = 0; n < CLAIM_ENTRIES; n++) {
        const at = this.#entries + i * E.WORDS;
        const s = Atomics.load(w, at + E.STATE);
        if (s === 0) {
          Atomics.store(w, at + E.KEY, key);
          Atomics.store(w, at + E.TAG, tag);
          Atomics.store(w, at + E.STATE, claimWord(threadId, CLAIM_STATE.CLAIMED));
          return { entry: i, held: true };
        }
        if (Atomics.load(w, at + E.KEY) === key && Atomics.load(w, at + E.TAG) === tag) return { entry: i, held: s === claimWord(threadId, CLAIM_STATE.CLAIMED) };
        i = (i + 1) & (CLAIM_ENTRIES - 1);
      }
      return { entry: -1, held: false };
    } finally {
      Atomics.store(w, INSERT_LOCK, 0);
    }
  }

  /**
   * Asks the owner of CLAIMED `entry` to give it up (another thread's receive on its key). Returns
   * the owner's thread id when this call moved it to DEMOTING (the owner's bell rings), -1 when
   * it was not CLAIMED (already DEMOTING or GENERAL: the caller waits for GENERAL either way).
   */
  requestDemotion(entry: number): number {
    const w = this.#w;
    const at = this.#entries + this.#check(entry) * E.WORDS + E.STATE;
    for (;;) {
      const s = Atomics.load(w, at);
      if (claimState(s) !== CLAIM_STATE.CLAIMED) return -1;
      const owner = claimOwner(s);
      if (Atomics.compareExchange(w, at, s, claimWord(owner, CLAIM_STATE.DEMOTING)) === s) {
        Atomics.add(w, this.#bells + owner, 1);
        Atomics.notify(w, this.#bells + owner);
        return owner;
      }
    }
  }

  /**
   * Asks for every CLAIMED entry of (local, ctx) to be given up (ANY_TAG, ANY_SOURCE or a probe
   * on the context). Returns the entries of the context that are not GENERAL yet (the caller
   * waits for each), whichever thread asked first.
   */
  demoteContext(local: number, ctx: number): number[] {
    const w = this.#w;
    const key = (local << 16) | ctx;
    const pending: number[] = [];
    for (let i = 0; i < CLAIM_ENTRIES; i++) {
      const at = this.#entries + i * E.WORDS;
      const s = Atomics.load(w, at + E.STATE);
      if (s === 0 || Atomics.load(w, at + E.KEY) !== key) continue;
      this.requestDemotion(i);
      if (claimState(this.word(i)) !== CLAIM_STATE.GENERAL) pending.push(i);
    }
    return pending;
  }

  /**
   * Owner `threadId` has moved its lane for `entry` into the shared queues: the entry is GENERAL
   * for good, and threads waiting in generalAfter wake. From CLAIMED too (the owner gives it up
   * itself). False, changing nothing, when `threadId` does not hold the entry.
   */
  finishDemotion(entry: number, threadId: number): boolean {
    const w = this.#w;
    const at = this.#entries + this.#check(entry) * E.WORDS + E.STATE;
    for (;;) {
      const s = Atomics.load(w, at);
      const st = claimState(s);
      if (claimOwner(s) !== threadId || (st !== CLAIM_STATE.CLAIMED && st !== CLAIM_STATE.DEMOTING)) return false;
      if (Atomics.compareExchange(w, at, s, claimWord(-1, CLAIM_STATE.GENERAL)) === s) {
        Atomics.notify(w, at);
        return true;
      }
    }
  }

  /** Resolves once `entry` is GENERAL (at once if it is). A pending wait keeps no event loop alive. */
  async generalAfter(entry: number): Promise<void> {
    const w = this.#w;
    const at = this.#entries + this.#check(entry) * E.WORDS + E.STATE;
    for (;;) {
      const s = Atomics.load(w, at);
      if (claimState(s) === CLAIM_STATE.GENERAL) return;
      const p = waitAsync(w, at, s);
      if (p !== null) await p;
    }
  }

  /** Thread `threadId`'s bell: how many times others asked it to give a claim up. */
  bell(threadId: number): number {
    return Atomics.load(this.#w, this.#bells + threadId);
  }

  /** Resolves once thread `threadId`'s bell differs from `seen` (at once if it does). */
  async bellAfter(threadId: number, seen: number): Promise<void> {
    const w = this.#w;
    while (Atomics.load(w, this.#bells + threadId) === seen) {
      const p = waitAsync(w, this.#bells + threadId, seen);
      if (p !== null) await p;
    }
  }

  /** The entries `threadId` holds in `state` (CLAIMED or DEMOTING): its work when its bell rings, or at its exit. */
  entriesOf(threadId: number, state: ClaimState): number[] {
    const want = claimWord(threadId, state);
    const out: number[] = [];
    for (let i = 0; i < CLAIM_ENTRIES; i++) if (Atomics.load(this.#w, this.#entries + i * E.WORDS + E.STATE) === want) out.push(i);
    return out;
  }

  /** The entries some thread still holds (CLAIMED or DEMOTING): what MPI.finalize waits for. */
  heldEntries(): number[] {
    const out: number[] = [];
    for (let i = 0; i < CLAIM_ENTRIES; i++) {
      const st = claimState(Atomics.load(this.#w, this.#entries + i * E.WORDS + E.STATE));
      if (st === CLAIM_STATE.CLAIMED || st === CLAIM_STATE.DEMOTING) out.push(i);
    }
    return out;
  }

  /** The key of a taken entry: [local endpoint, context id, tag]. */
  key(entry: number): [number, number, number] {
    const at = this.#entries + this.#check(entry) * E.WORDS;
    const key = Atomics.load(this.#w, at + E.KEY);
    return [key >>> 16, key & 0xffff, Atomics.load(this.#w, at + E.TAG)];
  }

  #check(entry: number): number {
    if (!Number.isInteger(entry) || entry < 0 || entry >= CLAIM_ENTRIES) throw new RangeError(`claim entry ${entry} is outside 0..${CLAIM_ENTRIES - 1}`);
    return entry;
  }
}

/**
 * The first entry to probe for (key = local endpoint << 16 | context, tag): Fibonacci hashing of
 * the two words, top bits. Exported for claim-route-table.ts, whose mirror of another process's
 * entries is probed the same way.
 */
export function claimHash(key: number, tag: number): number {
  return (Math.imul(key ^ Math.imul(tag, 0x85ebca6b), 0x9e3779b1) >>> HASH_SHIFT) & (CLAIM_ENTRIES - 1);
}
