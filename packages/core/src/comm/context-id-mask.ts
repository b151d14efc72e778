/**
 * The per-endpoint context-id state in shared memory: the mask and the shared
 * variables of papers/context-id-allocation.txt, Listings 1.1 and 1.2.
 *
 * One ContextIdState per endpoint. It lives in one SharedArrayBuffer so every
 * thread attached to the endpoint sees the same state: the thread that creates
 * it at init passes `buffer` to its workers, which call `ContextIdState.attach`.
 *
 * ```
 *   Int32 cells                               byte 64 ...
 *   +-------+-----------+-----------------+---------------------------------+
 *   | 0 mutex           | 1 mask_in_use   | mask: maskWords Uint32 words,   |
 *   | 2 eager_mask_in_use | 3 lowest_ctx_id | bit p of word w = prefix 32w+p |
 *   | 4 lowest_tag | 5 maskWords | 6 eagerWords | 7 magic | 1 = free       |
 *   | 8 lowest_leader (the priority's second key, context-id-stages.ts)      |
 *   +---------------------------------------------------+---------------------+
 *   mask words [0, eagerWords)           eager segment (Listing 1.2)
 *   mask words [eagerWords, maskWords)   base segment (Listing 1.1)
 * ```
 *
 * Invariants (every cell but the mask's changes only under the mutex, which is
 * never held across an await):
 * - a prefix's bit is 0 exactly while a communicator of this endpoint uses it,
 *   or when it is reserved (prefixes 0..7, context-id-layout.ts);
 * - mask_in_use is 1 only while one allocation thread owns the base segment
 *   (between its snapshot and the end of its allreduce); the same for
 *   eager_mask_in_use and the eager segment;
 * - only the owner of a segment clears bits in it (an atomic AND, under the
 *   mutex); `release` sets a bit at any time with an atomic OR and without the
 *   mutex (a free never waits, for the mask or for the mutex: see release).
 *
 * One mutex guards both segments (the paper uses a second, eager lock): every
 * critical section is a few hundred instructions, so a second lock would buy
 * nothing measurable and would need its own ordering rule.
 */
import { Mutex } from '../shm/index.ts';
import { assert, ERR_ARG, mpiError } from '../util/index.ts';
import { contextIdOfPrefix, contextPrefix, MAX_MASK_WORDS, RESERVED_PREFIXES } from './context-id-layout.ts';

const CELL_MUTEX = 0;
const CELL_MASK_IN_USE = 1;
const CELL_EAGER_MASK_IN_USE = 2;
const CELL_LOWEST_CTX_ID = 3;
const CELL_LOWEST_TAG = 4;
const CELL_MASK_WORDS = 5;
const CELL_EAGER_WORDS = 6;
const CELL_MAGIC = 7;
const CELL_LOWEST_LEADER = 8;
const HEADER_BYTES = 64;
const MAGIC = 0x43545844; // 'CTXD'

/** "No thread has priority": larger than every context id and tag (MAXINT in Listing 1.1). */
export const NO_PRIORITY = 0x7fffffff;

/**
 * Default eager segment: 2 words (64 prefixes, 56 after the reserved ones), as
 * MPICH's MPIR_CVAR_CTXID_EAGER_SIZE. Programs rarely hold more communicators
 * at once, so nearly every creation succeeds in the eager allreduce, and the
 * base protocol keeps 16320 ids.
 */
export const DEFAULT_EAGER_WORDS = 2;

/** Options of ContextIdState.create. */
export interface ContextIdStateOptions {
  /** Mask words, 1..512 (default 512 = 16384 prefixes). Must be equal at every endpoint of a job. */
  readonly maskWords?: number;
  /** Eager segment words, 1..maskWords-1 (default 2). Must be equal at every endpoint of a job. */
  readonly eagerWords?: number;
}

/** The shared context-id state of one endpoint; see the file header. */
export class ContextIdState {
  /** The SharedArrayBuffer holding the whole state: hand it to other threads. */
  readonly buffer: SharedArrayBuffer;
  /** The mutex guarding every field below. */
  readonly mutex: Mutex;
  /** Words in the mask. */
  readonly maskWords: number;
  /** Words in the eager segment (the first words of the mask). */
  readonly eagerWords: number;
  readonly #cells: Int32Array;
  readonly #mask: Uint32Array;

  private constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#cells = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    assert(Atomics.load(this.#cells, CELL_MAGIC) === MAGIC, 'ContextIdState buffer made by ContextIdState.create');
    this.maskWords = this.#cells[CELL_MASK_WORDS]!;
    this.eagerWords = this.#cells[CELL_EAGER_WORDS]!;
    this.#mask = new Uint32Array(buffer, HEADER_BYTES, this.maskWords);
    this.mutex = new Mutex(this.#cells, CELL_MUTEX);
  }

  /**
   * A fresh state: every prefix free except the reserved ones, nobody owning the mask.
   * @throws MPIError(ERR_ARG) when maskWords or eagerWords is out of range
   */
  static create(options: ContextIdStateOptions = {}): ContextIdState {
    const maskWords = options.maskWords ?? MAX_MASK_WORDS;
    const eagerWords = options.eagerWords ?? Math.min(DEFAULT_EAGER_WORDS, maskWords - 1);
    if (!Number.isInteger(maskWords) || maskWords < 1 || maskWords > MAX_MASK_WORDS) {
      throw mpiError(ERR_ARG, 'ContextIdState.create', `maskWords ${maskWords} must be an integer from 1 to ${MAX_MASK_WORDS}`);
    }
    if (!Number.isInteger(eagerWords) || eagerWords < 0 || eagerWords >= maskWords) {
      throw mpiError(ERR_ARG, 'ContextIdState.create', `eagerWords ${eagerWords} must be an integer from 0 to ${maskWords - 1}`);
    }
    const buffer = new SharedArrayBuffer(HEADER_BYTES + maskWords * 4);
    const cells = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    cells[CELL_LOWEST_CTX_ID] = NO_PRIORITY;
    cells[CELL_LOWEST_TAG] = NO_PRIORITY;
    cells[CELL_LOWEST_LEADER] = NO_PRIORITY;
    cells[CELL_MASK_WORDS] = maskWords;
    cells[CELL_EAGER_WORDS] = eagerWords;
    const mask = new Uint32Array(buffer, HEADER_BYTES, maskWords);
    mask.fill(0xffffffff);
    for (let p = 0; p < RESERVED_PREFIXES && p < maskWords * 32; p++) mask[p >>> 5] = (mask[p >>> 5]! & ~(1 << (p & 31))) >>> 0;
    Atomics.store(cells, CELL_MAGIC, MAGIC);
    return new ContextIdState(buffer);
  }

  /** The same state seen from another thread (the buffer came from `create` in some thread). */
  static attach(buffer: SharedArrayBuffer): ContextIdState {
    return new ContextIdState(buffer);
  }

  // --- shared variables of Listing 1.1 / 1.2 (call with the mutex held) ---

  /** mask_in_use: some allocation owns the base segment. */
  get maskInUse(): boolean {
    return this.#cells[CELL_MASK_IN_USE] !== 0;
  }
  set maskInUse(value: boolean) {
    this.#cells[CELL_MASK_IN_USE] = value ? 1 : 0;
  }
  /** eager_mask_in_use: some allocation owns the eager segment. */
  get eagerMaskInUse(): boolean {
    return this.#cells[CELL_EAGER_MASK_IN_USE] !== 0;
  }
  set eagerMaskInUse(value: boolean) {
    this.#cells[CELL_EAGER_MASK_IN_USE] = value ? 1 : 0;
  }
  /** lowest_ctx_id: parent context id of the allocation with priority, or NO_PRIORITY. */
  get lowestContextId(): number {
    return this.#cells[CELL_LOWEST_CTX_ID]!;
  }
  set lowestContextId(value: number) {
    this.#cells[CELL_LOWEST_CTX_ID] = value;
  }
  /** The leader breaking lowest_ctx_id ties (before the tag), or NO_PRIORITY. */
  get lowestLeader(): number {
    return this.#cells[CELL_LOWEST_LEADER]!;
  }
  set lowestLeader(value: number) {
    this.#cells[CELL_LOWEST_LEADER] = value;
  }
  /** lowest_tag: the tag breaking lowest_ctx_id and leader ties, or NO_PRIORITY. */
  get lowestTag(): number {
    return this.#cells[CELL_LOWEST_TAG]!;
  }
  set lowestTag(value: number) {
    this.#cells[CELL_LOWEST_TAG] = value;
  }

  // --- mask operations (call with the mutex held, except release) ---

  /** Copies mask words [from, to) into `out` starting at `out[0]` (a bit released meanwhile may be missing: it stays free for the next round). */
  copyMask(from: number, to: number, out: Uint32Array): void {
    out.set(this.#mask.subarray(from, to));
  }

  /**
   * Takes the lowest prefix whose bit is set in `result` (an allreduce result
   * whose word 0 is mask word `firstWord`), clearing it in the mask.
   * @returns its context id (suffix 0), or -1 when `result` has no bit set in
   *   its first `words` words
   */
  takeLowest(result: Uint32Array, firstWord: number, words: number): number {
    for (let w = 0; w < words; w++) {
      const bits = result[w]!;
      if (bits === 0) continue;
      const bit = 31 - Math.clz32(bits & -bits);
      const word = firstWord + w;
      const prefix = word * 32 + bit;
      const flag = (1 << bit) >>> 0;
      // Atomic: a release may set another bit of this word at the same moment.
      const before = Atomics.and(this.#mask, word, ~flag >>> 0);
      assert((before & flag) !== 0, `context id prefix ${prefix} taken by its segment's owner is free`);
      return contextIdOfPrefix(prefix);
    }
    return -1;
  }

  /**
   * Marks a context id free again (any suffix), without the mutex: one atomic OR. Invariant: it is
   * allocated and not reserved.
   *
   * Why not under the mutex: a communicator record is destroyed in whichever thread drops its last
   * reference, at any point of that thread's event loop, also while an allocation of the same
   * thread waits for the mutex in runLockedAsync. A lockSync there sleeps in Atomics.wait, and the
   * holder's unlock may wake that thread's own pending waitAsync instead, which can run only after
   * the sleeping thread wakes: the thread froze forever (intercomm.it, "created concurrently from
   * threads"). An allocated id's bit is 0 and only its release sets it, so the OR needs no lock;
   * the segment owner clears bits with an atomic AND (takeLowest) and so loses no release.
   */
  release(contextId: number): void {
    const prefix = contextPrefix(contextId);
    assert(prefix >= RESERVED_PREFIXES, `context id ${contextId} is not a reserved one (prefix ${prefix})`);
    assert(prefix < this.maskWords * 32, `context id ${contextId} is inside the mask`);
    const word = prefix >>> 5;
    const flag = (1 << (prefix & 31)) >>> 0;
    const before = Atomics.or(this.#mask, word, flag);
    assert((before & flag) === 0, `context id ${contextId} is allocated when freed`);
  }

  /** True when the context id's prefix is free (a snapshot; diagnostics and tests). */
  isFree(contextId: number): boolean {
    const prefix = contextPrefix(contextId);
    if (prefix >= this.maskWords * 32) return false;
    return (Atomics.load(this.#mask, prefix >>> 5) & (1 << (prefix & 31))) !== 0;
  }

  /** Allocated context ids, the reserved ones not counted (MPI.stats().contextIdsInUse). A snapshot. */
  countInUse(): number {
    let free = 0;
    for (let w = 0; w < this.maskWords; w++) free += popcount(Atomics.load(this.#mask, w));
    return this.maskWords * 32 - Math.min(RESERVED_PREFIXES, this.maskWords * 32) - free;
  }

  /** Free prefixes in mask words [from, to) (a snapshot). */
  countFree(from = 0, to = this.maskWords): number {
    let free = 0;
    for (let w = from; w < to; w++) free += popcount(Atomics.load(this.#mask, w));
    return free;
  }

  /** A copy of the whole mask (tests and diagnostics: compare before/after). */
  snapshotMask(): Uint32Array {
    return this.#mask.slice();
  }
}

function popcount(v: number): number {
  let x = v >>> 0;
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}
