/**
 * Request slots in shared memory.
 *
 * Every pending operation (a posted receive, a send, an unexpected message
 * waiting for its receive) occupies one slot of a SharedArrayBuffer, so that in
 * the multithreaded design every thread and channel engine of the process sees
 * the same state: the matching queues link slots through their NEXT word, and
 * a thread that completes another thread's request leaves the status in the
 * slot and the slot number in the owner's completion ring. The JavaScript
 * side of a request (user buffer, resolved value) stays in the owning thread,
 * indexed by the slot number.
 *
 * Free slots form a stack in shared memory; a thread takes slots through its
 * own SlotPool, which refills in batches (papers/refcount-gc.txt: thread-local
 * request pools keep allocation off the shared path).
 */
import { SpinLocks, type LockHolders } from '../shm/index.ts';

/** Word offsets inside one slot. */
export const SLOT = {
  /** STATE_* below: the slot's lifecycle (free, pending, completed by another thread); readable in a dump of shared memory */
  STATE: 0,
  /** KIND_* below */
  KIND: 1,
  /** FLAG_* below */
  FLAGS: 2,
  /** context id the slot matches on */
  CTX: 3,
  /** matching source endpoint (ANY = -1); for messages: the source endpoint */
  SRC: 4,
  /** matching tag (ANY = -1) */
  TAG: 5,
  /** next slot in the queue this slot sits in, or NIL */
  NEXT: 6,
  /**
   * the endpoint this slot belongs to (receiver's for receives and messages); for synchronous and
   * rendezvous sends the destination endpoint, with CTX, SRC (the sending endpoint) and TAG, which a
   * cancel names (Protocol.noteSend)
   */
  ENDPOINT: 7,
  /** completed status, written for another thread's request: source endpoint, tag, byte count, error class */
  ST_SOURCE: 8,
  ST_TAG: 9,
  ST_COUNT: 10,
  ST_ERROR: 11,
  /**
   * receive capacity in bytes; message length for messages and rendezvous sends. Lengths reach
   * 4 GiB - 1 (MAX_MESSAGE_BYTES): read them with `>>> 0` (as ST_COUNT), the Int32 word wraps above 2^31.
   */
  LENGTH: 12,
  /** the peer's slot number (sender's request for RTS / sync; receiver's for CTS) */
  PEER_SLOT: 13,
  /** arrival order of an unexpected message (wildcard receives take the oldest) */
  ARRIVAL: 14,
  /** payload-pool (or big-arena, FLAG.BIG) offset of a payload kept in shared memory, or NIL */
  PAYLOAD: 15,
  /** process of the peer (sender of a message) */
  PEER_PROCESS: 16,
  /** the thread whose JavaScript request this slot backs (completions go to its ring) */
  OWNER: 17,
} as const;
export const SLOT_WORDS = 18;

export const STATE = { FREE: 0, PENDING: 1, COMPLETE: 2 } as const;

export const KIND = {
  RECV: 1,
  SEND: 2,
  /** an arrived message not yet matched (eager data in the payload pool, or an RTS) */
  MESSAGE: 3,
  /** a message taken out of matching by mprobe/improbe */
  MATCHED_MESSAGE: 4,
} as const;

export const FLAG = {
  /** payload is msgpack (object form) */
  OBJECT: 1,
  /** synchronous send: the sender waits for the match */
  SYNC: 2,
  /** rendezvous: only the RTS has arrived; data follows a CTS */
  RNDV: 4,
  /** the message came from this process (no TCP): PEER_SLOT is a local send slot */
  LOCAL: 16,
  /** PAYLOAD is an offset in the large-payload arena (not the small pool) */
  BIG: 32,
  /** send: a cancel was asked for (CANCEL_SEND sent, or the local queue searched) */
  CANCEL_ASKED: 64,
  /** send: its message was removed before a receive matched it; it completes as cancelled */
  CANCELLED: 128,
} as const;

export const NIL = -1;

export class RequestTable {
  readonly words: Int32Array;
  readonly capacity: number;
  /** [0] = stack top, [1..capacity] = free slot numbers, [capacity + 1] = spin lock */
  readonly #freeStack: Int32Array;
  readonly #lock: SpinLocks;
  readonly #lockIndex: number;

  /** `holders`: what the lock asks about a holder that may have died (shm/spin-lock.ts). */
  constructor(buffers: { slots: SharedArrayBuffer; free: SharedArrayBuffer }, initialize: boolean, shared = false, holders: LockHolders | null = null) {
    this.words = new Int32Array(buffers.slots);
    this.capacity = this.words.length / SLOT_WORDS;
    this.#freeStack = new Int32Array(buffers.free);
    this.#lockIndex = this.capacity + 1;
    this.#lock = new SpinLocks(this.#freeStack, shared, 'request table', holders);
    if (initialize) {
      for (let i = 0; i < this.capacity; i++) this.#freeStack[1 + i] = this.capacity - 1 - i;
      this.#freeStack[0] = this.capacity;
    }
  }

  static allocateBuffers(capacity: number): { slots: SharedArrayBuffer; free: SharedArrayBuffer } {
    return {
      slots: new SharedArrayBuffer(capacity * SLOT_WORDS * 4),
      free: new SharedArrayBuffer((capacity + 2) * 4),
    };
  }

  /** Takes up to `n` free slots into `out`; returns how many. */
  takeBatch(out: number[], n: number): number {
    const fs = this.#freeStack;
    this.#lock.lock(this.#lockIndex);
    let top = fs[0]!;
    const k = Math.min(n, top);
    for (let i = 0; i < k; i++) out.push(fs[top--]!);
    fs[0] = top;
    this.#lock.unlock(this.#lockIndex);
    return k;
  }

  /** Takes up to `n` free slots into dst[at..]; returns how many. */
  takeInto(dst: Int32Array, at: number, n: number): number {
    const fs = this.#freeStack;
    this.#lock.lock(this.#lockIndex);
    let top = fs[0]!;
    const k = Math.min(n, top);
    for (let i = 0; i < k; i++) dst[at + i] = fs[top--]!;
    fs[0] = top;
    this.#lock.unlock(this.#lockIndex);
    return k;
  }

  /** Returns src[from..to) to the shared stack. */
  giveRange(src: Int32Array, from: number, to: number): void {
    const fs = this.#freeStack;
    this.#lock.lock(this.#lockIndex);
    let top = fs[0]!;
    for (let i = from; i < to; i++) fs[++top] = src[i]!;
    fs[0] = top;
    this.#lock.unlock(this.#lockIndex);
  }

  /** Returns slots to the shared stack. */
  giveBatch(slots: number[], from: number): void {
    const fs = this.#freeStack;
    this.#lock.lock(this.#lockIndex);
    let top = fs[0]!;
    for (let i = from; i < slots.length; i++) fs[++top] = slots[i]!;
    fs[0] = top;
    this.#lock.unlock(this.#lockIndex);
    slots.length = from;
  }

  inUse(): number {
    return this.capacity - this.#freeStack[0]!;
  }
}

/**
 * A thread's cache of free slots over the shared RequestTable. The cache lives
 * in shared memory per thread id ([0] = count, then slot numbers), so a thread
 * that ends leaves its free slots to the next thread that gets its id.
 */
export class SlotPool {
  readonly #table: RequestTable;
  /** [0] = number of cached slots, [1..] = slot numbers */
  readonly #cache: Int32Array;
  static readonly BATCH = 64;
  /** The cache holds at most 4 batches (plus the one that triggers giving 2 back). */
  static readonly CACHE_WORDS = 4 * SlotPool.BATCH + 2;

  /** @param cache this thread's cache (SharedState.slotCache), or null for a private one */
  constructor(table: RequestTable, cache: Int32Array | null = null) {
    this.#table = table;
    this.#cache = cache ?? new Int32Array(SlotPool.CACHE_WORDS);
  }

  /** A cleared slot in state PENDING, or NIL when the table is exhausted. */
  alloc(kind: number): number {
    const c = this.#cache;
    if (c[0] === 0) {
      const got = this.#table.takeInto(c, 1, SlotPool.BATCH);
      if (got === 0) return NIL;
      c[0] = got;
    }
    const n = c[0]!;
    const slot = c[n]!;
    c[0] = n - 1;
    const w = this.#table.words;
    const b = slot * SLOT_WORDS;
    w.fill(0, b, b + SLOT_WORDS);
    w[b + SLOT.KIND] = kind;
    w[b + SLOT.NEXT] = NIL;
    w[b + SLOT.PAYLOAD] = NIL;
    w[b + SLOT.PEER_SLOT] = NIL;
    w[b + SLOT.STATE] = STATE.PENDING;
    return slot;
  }

  free(slot: number): void {
    const w = this.#table.words;
    w[slot * SLOT_WORDS + SLOT.STATE] = STATE.FREE;
    const c = this.#cache;
    const n = c[0]! + 1;
    c[n] = slot;
    c[0] = n;
    if (n > 4 * SlotPool.BATCH) {
      this.#table.giveRange(c, 1 + 2 * SlotPool.BATCH, 1 + n);
      c[0] = 2 * SlotPool.BATCH;
    }
  }
}
