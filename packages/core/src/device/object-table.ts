/**
 * The object table: every communicator, group, datatype and op of the process
 * as a fixed-size record in shared memory, named by an integer handle, so that
 * a Comm in one thread and the same Comm in another are two thin wrappers over
 * one record (papers/refcount-gc.txt §II: MPICH's integer handles).
 *
 *   handle = kind << 26 | predefined << 25 | generation << 15 | index     (0 is the null handle)
 *
 * The kind and the predefined bit are read from the handle with a shift and a
 * mask, without touching the record: that is what lets the 'predefined'
 * reference-counting strategy skip counts on predefined objects cheaply.
 * The generation (10 bits) counts the record's reuses: a record freed and made
 * again for another object gets a new handle, so a handle kept by a stale
 * wrapper in another thread (a communicator freed elsewhere) never names the
 * new object (isUsable is false for it; it could name it again only after
 * 1,024 reuses of that one record).
 *
 * Record (RECORD_WORDS Int32 words): REFCOUNT, KIND, FLAGS, BLOB (offset into
 * the blob arena or NIL), BLOB_LENGTH, HANDLE (the handle of the record's object,
 * kept after its destruction so the next one gets the next generation), then
 * DATA words whose meaning belongs to the kind (a communicator's context id and
 * group handle, an op's code...). Variable-length data (a group's member
 * endpoints, a datatype's encoded descriptor) lives in the blob arena.
 *
 * Threads: records are created and freed under the table mutex (tryLock spin:
 * the sections are a few dozen instructions, and a thread that owns sockets
 * must never sleep in Atomics.wait); counts change with Atomics.add/sub.
 */
import { Mutex, PayloadPool } from '../shm/index.ts';
import { ERR_NO_MEM, mpiError } from '../util/index.ts';

export const OBJECT_KIND = { COMM: 1, GROUP: 2, DATATYPE: 3, OP: 4 } as const;
export type ObjectKind = (typeof OBJECT_KIND)[keyof typeof OBJECT_KIND];

const KIND_SHIFT = 26;
const PREDEFINED_BIT = 1 << 25;
const GEN_SHIFT = 15;
const GEN_MASK = 0x3ff;
const INDEX_MASK = (1 << GEN_SHIFT) - 1;
/** The largest table the handle's index field can name. */
export const MAX_OBJECT_RECORDS = 1 << GEN_SHIFT;

export const RECORD = { REFCOUNT: 0, KIND: 1, FLAGS: 2, BLOB: 3, BLOB_LENGTH: 4, HANDLE: 5, DATA: 6 } as const;
export const RECORD_WORDS = 16;
/** Data words available to a kind. */
export const DATA_WORDS = RECORD_WORDS - RECORD.DATA;
/**
 * USER_FREED: the user released it; ELIGIBLE: in the gc strategy's eligible set (lifetime.ts);
 * DESTROYED: its last reference went (the record waits for reuse).
 */
export const OBJECT_FLAG = { USER_FREED: 1, ELIGIBLE: 2, DESTROYED: 4 } as const;
export const NULL_HANDLE = 0;
const NIL = -1;

export function handleKind(h: number): number {
  return h >>> KIND_SHIFT;
}
export function isPredefinedHandle(h: number): boolean {
  return (h & PREDEFINED_BIT) !== 0;
}
export function handleIndex(h: number): number {
  return h & INDEX_MASK;
}

export interface ObjectTableBuffers {
  readonly records: SharedArrayBuffer;
  /** [0] mutex, [1] free-stack top, [2..] free indices */
  readonly free: SharedArrayBuffer;
  readonly blobArena: SharedArrayBuffer;
  readonly blobMeta: SharedArrayBuffer;
}

/** Blob size classes up to 1 MiB: a group of 262,144 members or a large struct descriptor. */
const BLOB_MAX_SHIFT = 20;

export class ObjectTable {
  readonly words: Int32Array;
  readonly capacity: number;
  readonly #free: Int32Array;
  readonly #mutex: Mutex;
  readonly #blobs: PayloadPool;

  constructor(buffers: ObjectTableBuffers, initialize: boolean) {
    this.words = new Int32Array(buffers.records);
    this.capacity = this.words.length / RECORD_WORDS;
    if (this.capacity > MAX_OBJECT_RECORDS) throw new RangeError(`at most ${MAX_OBJECT_RECORDS} object records`);
    this.#free = new Int32Array(buffers.free);
    this.#mutex = new Mutex(this.#free, 0);
    this.#blobs = new PayloadPool({ arena: buffers.blobArena, meta: buffers.blobMeta }, BLOB_MAX_SHIFT, initialize);
    if (initialize) {
      // Index 0 stays unused so that handle 0 is never a live object.
      for (let i = 1; i < this.capacity; i++) this.#free[1 + i] = this.capacity - i;
      this.#free[1] = this.capacity - 1;
    }
  }

  static allocateBuffers(capacity: number, blobBytes: number): ObjectTableBuffers {
    const blobs = PayloadPool.allocateBuffers(blobBytes, BLOB_MAX_SHIFT);
    return {
      records: new SharedArrayBuffer(capacity * RECORD_WORDS * 4),
      free: new SharedArrayBuffer((capacity + 2) * 4),
      blobArena: blobs.arena,
      blobMeta: blobs.meta,
    };
  }

  #lock(): void {
    while (!this.#mutex.tryLock()) {
      // spin: another thread holds the table for a few instructions
    }
  }

  /**
   * Called with the handle of every record about to be destroyed (its data words still readable),
   * in the thread that drops the last reference: the API layer returns a communicator's context id
   * and group there. Set per thread.
   */
  onDestroy: ((handle: number) => void) | null = null;

  /**
   * A new record of `kind` with reference count `initialCount` (1: the user's reference; the gc
   * strategy passes 2, lifetime.ts), its data words and blob set.
   * @throws MPIError(ERR_NO_MEM) when the table or the blob arena is full.
   */
  create(kind: ObjectKind, predefined: boolean, data: readonly number[], blob: Uint8Array | null, call: string, initialCount = 1): number {
    if (data.length > DATA_WORDS) throw new RangeError(`at most ${DATA_WORDS} data words`);
    this.#lock();
    let index: number;
    let blobAt = NIL;
    try {
      const top = this.#free[1]!;
      if (top === 0) throw mpiError(ERR_NO_MEM, call, `all ${this.capacity - 1} MPI object records are in use: free communicators, groups, datatypes or ops you no longer need`);
      if (blob !== null && blob.length > 0) {
        blobAt = this.#blobs.alloc(blob.length);
        if (blobAt === NIL) throw mpiError(ERR_NO_MEM, call, `no room for ${blob.length} bytes of object data in the shared object arena`);
      }
      index = this.#free[1 + top]!;
      this.#free[1] = top - 1;
    } finally {
      this.#mutex.unlock();
    }
    const w = this.words;
    const b = index * RECORD_WORDS;
    const generation = ((w[b + RECORD.HANDLE]! >>> GEN_SHIFT) + 1) & GEN_MASK;
    const handle = (kind << KIND_SHIFT) | (predefined ? PREDEFINED_BIT : 0) | (generation << GEN_SHIFT) | index;
    w.fill(0, b, b + RECORD_WORDS);
    for (let i = 0; i < data.length; i++) w[b + RECORD.DATA + i] = data[i]!;
    if (blobAt !== NIL) this.#blobs.bytes.set(blob!, blobAt);
    w[b + RECORD.BLOB] = blobAt;
    w[b + RECORD.BLOB_LENGTH] = blob?.length ?? 0;
    w[b + RECORD.KIND] = kind;
    w[b + RECORD.HANDLE] = handle;
    Atomics.store(w, b + RECORD.REFCOUNT, initialCount);
    return handle;
  }

  /** Data word `i` of an object. */
  data(h: number, i: number): number {
    return this.words[handleIndex(h) * RECORD_WORDS + RECORD.DATA + i]!;
  }

  setData(h: number, i: number, value: number): void {
    this.words[handleIndex(h) * RECORD_WORDS + RECORD.DATA + i] = value;
  }

  /** The object's blob (a view into shared memory: copy what you keep). */
  blob(h: number): Uint8Array {
    const b = handleIndex(h) * RECORD_WORDS;
    const at = this.words[b + RECORD.BLOB]!;
    return at === NIL ? new Uint8Array(0) : this.#blobs.bytes.subarray(at, at + this.words[b + RECORD.BLOB_LENGTH]!);
  }

  /** Whether h names an object that exists (possibly freed by its user, waiting for its last reference). */
  isLive(h: number): boolean {
    const i = handleIndex(h);
    return h !== NULL_HANDLE && i < this.capacity && Atomics.load(this.words, i * RECORD_WORDS + RECORD.REFCOUNT) > 0
      && this.words[i * RECORD_WORDS + RECORD.HANDLE] === h;
  }

  /**
   * Whether h names an object its user has not freed, in any thread: what a wrapper checks before
   * a new use (a free in another thread, or the record's reuse for another object, makes it false).
   * Two plain loads from the record; a free that races with the call is the program's error.
   */
  isUsable(h: number): boolean {
    const b = handleIndex(h) * RECORD_WORDS;
    const w = this.words;
    return h !== NULL_HANDLE && w[b + RECORD.HANDLE] === h && (w[b + RECORD.FLAGS]! & (OBJECT_FLAG.USER_FREED | OBJECT_FLAG.DESTROYED)) === 0;
  }

  isUserFreed(h: number): boolean {
    return (this.words[handleIndex(h) * RECORD_WORDS + RECORD.FLAGS]! & OBJECT_FLAG.USER_FREED) !== 0;
  }

  refCount(h: number): number {
    return Atomics.load(this.words, handleIndex(h) * RECORD_WORDS + RECORD.REFCOUNT);
  }

  /** Adds a reference. */
  retain(h: number): void {
    Atomics.add(this.words, handleIndex(h) * RECORD_WORDS + RECORD.REFCOUNT, 1);
  }

  /** Drops a reference; the last one frees the record and its blob. Returns true if it was the last. */
  release(h: number): boolean {
    if (Atomics.sub(this.words, handleIndex(h) * RECORD_WORDS + RECORD.REFCOUNT, 1) !== 1) return false;
    this.#destroy(h);
    return true;
  }

  /** Drops a reference; returns the count left (0: the record was destroyed). */
  releaseCount(h: number): number {
    const left = Atomics.sub(this.words, handleIndex(h) * RECORD_WORDS + RECORD.REFCOUNT, 1) - 1;
    if (left === 0) this.#destroy(h);
    return left;
  }

  /** Sets `flag` in the record's FLAGS word; returns whether it was already set. */
  setFlag(h: number, flag: number): boolean {
    return (Atomics.or(this.words, handleIndex(h) * RECORD_WORDS + RECORD.FLAGS, flag) & flag) !== 0;
  }

  /** The user's free: marks the object and drops the user's reference. */
  userFree(h: number): boolean {
    Atomics.or(this.words, handleIndex(h) * RECORD_WORDS + RECORD.FLAGS, OBJECT_FLAG.USER_FREED);
    return this.release(h);
  }

  /** Live records of each kind. */
  liveCounts(): Record<ObjectKind, number> {
    const counts = { 1: 0, 2: 0, 3: 0, 4: 0 } as Record<ObjectKind, number>;
    const w = this.words;
    for (let i = 1; i < this.capacity; i++) {
      const b = i * RECORD_WORDS;
      if (Atomics.load(w, b + RECORD.REFCOUNT) > 0) counts[w[b + RECORD.KIND] as ObjectKind]++;
    }
    return counts;
  }

  #destroy(h: number): void {
    this.onDestroy?.(h);
    const index = handleIndex(h);
    const w = this.words;
    const b = index * RECORD_WORDS;
    const blobAt = w[b + RECORD.BLOB]!;
    w[b + RECORD.KIND] = 0;
    Atomics.or(w, b + RECORD.FLAGS, OBJECT_FLAG.DESTROYED);
    this.#lock();
    try {
      if (blobAt !== NIL) this.#blobs.free(blobAt);
      const top = this.#free[1]! + 1;
      this.#free[1 + top] = index;
      this.#free[1] = top;
    } finally {
      this.#mutex.unlock();
    }
  }
}
