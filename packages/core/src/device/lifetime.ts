/**
 * Object lifetime: how pending operations keep the communicators, datatypes
 * and ops they use alive after the user frees them (MPI 3.1 §6.4.3: "pending
 * operations ... will complete normally; the object is actually deallocated
 * only if there are no other active references to it").
 * Source: papers/refcount-gc.txt, §IV (naive reference counting) and §V
 * (suppressed counts for predefined objects; the hybrid garbage collector,
 * its Figure 2). One interface, three strategies, chosen by --refcount:
 *
 *   naive       every request adds one reference (Atomics.add) to each object it
 *               uses and drops it (Atomics.sub) on completion; the last drop destroys.
 *   predefined  the same, but nothing is counted for predefined objects: the
 *               handle's predefined bit (object-table.ts) decides, without a load.
 *   gc          GC-managed objects (communicators, datatypes, ops) start at count 2:
 *               the user's reference and the collector's. A request (a transient
 *               object) records the handles it uses in one of its thread's reference
 *               cells and touches no count. When a GC-managed object's count falls
 *               to 1 (the user freed it and no non-transient reference is left) it
 *               enters the eligible set Ge. A collection (at creation of a
 *               GC-managed object once |Ge| >= GC_THRESHOLD, and at finalize)
 *               marks every handle in an active cell (the set T of outstanding
 *               requests), then sweeps Ge: an unmarked object loses the collector's
 *               reference and is destroyed; a marked one stays in Ge.
 *
 * Non-transient references (a persistent request from init to free, an
 * mprobe'd Message until it is received, a communicator's group) are counted
 * in every strategy (retain/release), except on predefined objects in
 * 'predefined' and 'gc'. A destroyed record runs the table's onDestroy hook
 * (the API layer returns a communicator's context id to the mask of the
 * endpoint that allocated it, and releases its group).
 *
 * Invariants:
 *  - an object with a pending request that uses it is never destroyed: naive and
 *    predefined hold a count for it; gc keeps it out of a sweep because the
 *    request's cell is active or, when the thread has no free cell, a count;
 *  - gc's per-request path does no atomic operation: a cell is written with plain
 *    stores. A collector reads cells only under the lifetime mutex, and an object
 *    enters Ge only through #makeEligible, under that mutex, after its user free;
 *    MPI orders that free after the start of every request that uses the object
 *    (program order in one thread, a synchronizing edge such as postMessage across
 *    threads). So the mutex hands the collector every cell write of those requests
 *    (happens-before, in the JavaScript memory model); a value it reads that is
 *    older than the cell's latest write belongs to a request that has completed,
 *    and marking its handles only keeps an object until the next collection;
 *  - an object enters Ge at most once (the ELIGIBLE flag), only with count 1, and
 *    its count never rises again (MPI forbids new uses of a freed object);
 *  - cells belong to one thread (its row, by thread id): only it writes them;
 *    collectors read them under the lifetime mutex, which also guards Ge;
 *  - lock order: lifetime mutex, then the object table's mutex (destroy); the
 *    onDestroy hook never takes the lifetime mutex (it releases only groups).
 *
 * Cost of a collection: O(|Ge| + cells ever used), like the paper's O(|Ge| + |T|);
 * nothing happens while Ge is empty. liveRequests() sums per-thread counters
 * that only their thread writes, so counting requests costs no contended write.
 */
import { Mutex } from '../shm/index.ts';
import type { DevRequest } from './dev-request.ts';
import { OBJECT_FLAG, OBJECT_KIND, handleIndex, handleKind, isPredefinedHandle, type ObjectKind, type ObjectTable } from './object-table.ts';

export type RefcountStrategy = 'naive' | 'predefined' | 'gc';
export const REFCOUNT_STRATEGIES: readonly RefcountStrategy[] = ['naive', 'predefined', 'gc'];

/** How a request holds its references (DevRequest.refMode). */
export const REF_MODE = { NONE: 0, COUNTED: 1, CELL: 2 } as const;

/**
 * Reference cells per thread: more outstanding requests than this on one thread
 * fall back to counts (still correct). 1,024 cells x 64 threads x 16 B = 1 MiB.
 */
export const CELLS_PER_THREAD = 1024;
const CELL = { ACTIVE: 0, COMM: 1, TYPE: 2, OP: 3, WORDS: 4 } as const;
/**
 * |Ge| that makes the next creation of a GC-managed object collect. Small enough that
 * freed communicators give their context ids back soon (16,376 per process), large
 * enough to amortize a scan over many frees (the paper chose its threshold statically too).
 */
export const GC_THRESHOLD = 64;
/** Control words: mutex, |Ge|, collections run, then Ge's handles. */
const CTL = { MUTEX: 0, ELIGIBLE: 1, CYCLES: 2, LIST: 4 } as const;
/**
 * A thread's row: [live requests, cells ever used], padded to a 64-byte cache line so that
 * threads counting their requests never write a line another thread writes (no false sharing).
 */
const ROW = { LIVE: 0, USED: 1, WORDS: 16 } as const;

export interface LifetimeBuffers {
  readonly control: SharedArrayBuffer;
  /** per thread: CELLS_PER_THREAD cells of CELL.WORDS */
  readonly cells: SharedArrayBuffer;
  /** per thread, one cache line: [live requests, cells ever used (high-water mark)] */
  readonly rows: SharedArrayBuffer;
}

export function allocateLifetimeBuffers(threads: number, objectRecords: number): LifetimeBuffers {
  return {
    control: new SharedArrayBuffer((CTL.LIST + objectRecords) * 4),
    cells: new SharedArrayBuffer(threads * CELLS_PER_THREAD * CELL.WORDS * 4),
    rows: new SharedArrayBuffer(threads * ROW.WORDS * 4),
  };
}

function isGcManaged(kind: number): boolean {
  return kind === OBJECT_KIND.COMM || kind === OBJECT_KIND.DATATYPE || kind === OBJECT_KIND.OP;
}

/** The lifetime of MPI objects, one instance per thread over the process's shared state. */
export abstract class Lifetime {
  abstract readonly strategy: RefcountStrategy;
  /** Whether requests reference predefined objects at all (naive only): callers skip looking their handles up otherwise. */
  abstract readonly countsPredefined: boolean;
  protected readonly objects: ObjectTable;
  protected readonly control: Int32Array;
  protected readonly rows: Int32Array;
  protected readonly cells: Int32Array;
  /** this thread's row (its thread id), -1 for threads that start no requests (channel engines) */
  protected readonly row: number;
  /** the word of `rows` that counts this thread's live requests */
  protected readonly live: number;
  readonly #threads: number;

  constructor(objects: ObjectTable, buffers: LifetimeBuffers, row: number) {
    this.objects = objects;
    this.control = new Int32Array(buffers.control);
    this.rows = new Int32Array(buffers.rows);
    this.cells = new Int32Array(buffers.cells);
    this.#threads = this.rows.length / ROW.WORDS;
    this.row = row;
    this.live = row * ROW.WORDS + ROW.LIVE;
    if (row >= 0) {
      // A recycled thread id: whatever the previous thread left can never complete.
      this.cells.fill(0, row * CELLS_PER_THREAD * CELL.WORDS, (row + 1) * CELLS_PER_THREAD * CELL.WORDS);
      Atomics.store(this.rows, row * ROW.WORDS + ROW.LIVE, 0);
      Atomics.store(this.rows, row * ROW.WORDS + ROW.USED, 0);
    }
  }

  /** The count a new object of `kind` starts with. */
  protected initialCount(_kind: number): number {
    return 1;
  }

  /** A new (not predefined) object record; the gc strategy may collect first. */
  create(kind: ObjectKind, data: readonly number[], blob: Uint8Array | null, call: string): number {
    return this.objects.create(kind, false, data, blob, call, this.initialCount(kind));
  }

  /**
   * Request `r` (of this thread) starts using comm, type and op (handles; 0: none).
   * Every started user request calls this once; the device calls releaseRequest on completion.
   */
  abstract acquire(r: DevRequest, comm: number, type: number, op: number): void;

  /** Drops the references of a completed request (device: on completion). */
  releaseRequest(r: DevRequest): void {
    this.rows[this.live]!--;
    r.refMode = REF_MODE.NONE;
    if (r.refComm !== 0) this.release(r.refComm);
    if (r.refType !== 0) this.release(r.refType);
    if (r.refOp !== 0) this.release(r.refOp);
  }

  /** Adds a non-transient reference (persistent request, Message, ...). */
  abstract retain(h: number): void;

  /** Drops a reference taken by retain (or by a counted request). */
  abstract release(h: number): void;

  /** The user's release (Comm.free, Datatype.free, Op.free, Group.free). */
  userFree(h: number): void {
    if (this.objects.setFlag(h, OBJECT_FLAG.USER_FREED)) return;
    this.objects.release(h);
  }

  /** Collects if the eligible set has reached GC_THRESHOLD (gc; communicator creations call it first). */
  maybeCollect(): void {}

  /** One collection (gc); returns the number of objects destroyed. The other strategies have nothing to collect. */
  collect(): number {
    return 0;
  }

  /** Requests started and not yet completed, over every thread of the process. */
  liveRequests(): number {
    let n = 0;
    for (let t = 0; t < this.#threads; t++) n += Atomics.load(this.rows, t * ROW.WORDS + ROW.LIVE);
    return n;
  }

  /** Collections run so far in this process (gc). */
  gcCycles(): number {
    return Atomics.load(this.control, CTL.CYCLES);
  }

  /** Objects waiting in the eligible set (gc). */
  eligibleCount(): number {
    return Atomics.load(this.control, CTL.ELIGIBLE);
  }

  /** Counts persistent requests (from init to free) as live requests. */
  countRequest(delta: number): void {
    this.rows[this.live]! += delta;
  }
}

/** §IV: an atomic increment and decrement per referenced object per request. */
class NaiveLifetime extends Lifetime {
  readonly strategy = 'naive';
  readonly countsPredefined = true;

  acquire(r: DevRequest, comm: number, type: number, op: number): void {
    this.rows[this.live]!++;
    r.refMode = REF_MODE.COUNTED;
    r.refComm = comm;
    r.refType = type;
    r.refOp = op;
    if (comm !== 0) this.objects.retain(comm);
    if (type !== 0) this.objects.retain(type);
    if (op !== 0) this.objects.retain(op);
  }

  retain(h: number): void {
    this.objects.retain(h);
  }

  release(h: number): void {
    this.objects.release(h);
  }
}

/** §V.A: as naive, with no counting on predefined objects (decided from the handle bit). */
class PredefinedLifetime extends Lifetime {
  readonly strategy = 'predefined';
  readonly countsPredefined = false;

  acquire(r: DevRequest, comm: number, type: number, op: number): void {
    this.rows[this.live]!++;
    r.refMode = REF_MODE.COUNTED;
    const c = isPredefinedHandle(comm) ? 0 : comm;
    const t = isPredefinedHandle(type) ? 0 : type;
    const o = isPredefinedHandle(op) ? 0 : op;
    r.refComm = c;
    r.refType = t;
    r.refOp = o;
    if (c !== 0) this.objects.retain(c);
    if (t !== 0) this.objects.retain(t);
    if (o !== 0) this.objects.retain(o);
  }

  retain(h: number): void {
    if (!isPredefinedHandle(h)) this.objects.retain(h);
  }

  release(h: number): void {
    if (!isPredefinedHandle(h)) this.objects.release(h);
  }
}

/** §V.B: the hybrid of reference counts and mark-and-sweep (Figure 2). */
export class GcLifetime extends Lifetime {
  readonly strategy = 'gc';
  readonly countsPredefined = false;
  readonly #mutex: Mutex;
  /** this thread's free cells (a stack of cell numbers) */
  readonly #free = new Int32Array(CELLS_PER_THREAD);
  #freeTop = 0;
  /** cells of this thread ever used: the collector scans no further */
  #highWater = 0;
  /** the collector's mark bits, by record index (thread-local scratch) */
  #marks: Uint8Array | null = null;
  /** the first word of this thread's cells */
  readonly #cellBase: number;

  constructor(objects: ObjectTable, buffers: LifetimeBuffers, row: number) {
    super(objects, buffers, row);
    this.#mutex = new Mutex(this.control, CTL.MUTEX);
    for (let i = 0; i < CELLS_PER_THREAD; i++) this.#free[i] = CELLS_PER_THREAD - 1 - i;
    this.#freeTop = row >= 0 ? CELLS_PER_THREAD : 0;
    this.#cellBase = row * CELLS_PER_THREAD * CELL.WORDS;
  }

  protected override initialCount(kind: number): number {
    return isGcManaged(kind) ? 2 : 1;
  }

  override create(kind: ObjectKind, data: readonly number[], blob: Uint8Array | null, call: string): number {
    if (isGcManaged(kind)) this.maybeCollect();
    return super.create(kind, data, blob, call);
  }

  override maybeCollect(): void {
    if (Atomics.load(this.control, CTL.ELIGIBLE) >= GC_THRESHOLD) this.collect();
  }

  acquire(r: DevRequest, comm: number, type: number, op: number): void {
    this.rows[this.live]!++;
    const c = isPredefinedHandle(comm) ? 0 : comm;
    const t = isPredefinedHandle(type) ? 0 : type;
    const o = isPredefinedHandle(op) ? 0 : op;
    if ((c | t | o) === 0) {
      // Predefined objects only (the common case): nothing to reference, no cell.
      r.refMode = REF_MODE.COUNTED;
      r.refComm = r.refType = r.refOp = 0;
      return;
    }
    if (this.#freeTop === 0) {
      // No free cell: count these references instead (rare: > CELLS_PER_THREAD pending requests).
      r.refMode = REF_MODE.COUNTED;
      r.refComm = c;
      r.refType = t;
      r.refOp = o;
      if (c !== 0) this.objects.retain(c);
      if (t !== 0) this.objects.retain(t);
      if (o !== 0) this.objects.retain(o);
      return;
    }
    const cell = this.#free[--this.#freeTop]!;
    if (cell >= this.#highWater) {
      this.#highWater = cell + 1;
      Atomics.store(this.rows, this.row * ROW.WORDS + ROW.USED, cell + 1);
    }
    const w = this.cells;
    const b = this.#cellBase + cell * CELL.WORDS;
    w[b + CELL.COMM] = c;
    w[b + CELL.TYPE] = t;
    w[b + CELL.OP] = o;
    w[b + CELL.ACTIVE] = 1; // a plain store: collectors see it through the lifetime mutex (header)
    r.refMode = REF_MODE.CELL;
    r.refCell = cell;
  }

  override releaseRequest(r: DevRequest): void {
    this.rows[this.live]!--;
    const mode = r.refMode;
    r.refMode = REF_MODE.NONE;
    if (mode !== REF_MODE.CELL) {
      // predefined objects only (nothing held), or counted for want of a free cell
      if (r.refComm !== 0) this.release(r.refComm);
      if (r.refType !== 0) this.release(r.refType);
      if (r.refOp !== 0) this.release(r.refOp);
      return;
    }
    const cell = r.refCell;
    // A collector that still sees the cell active only keeps objects a little longer.
    this.cells[this.#cellBase + cell * CELL.WORDS + CELL.ACTIVE] = 0;
    this.#free[this.#freeTop++] = cell;
  }

  retain(h: number): void {
    if (!isPredefinedHandle(h)) this.objects.retain(h);
  }

  release(h: number): void {
    if (isPredefinedHandle(h)) return;
    if (this.objects.releaseCount(h) === 1 && isGcManaged(handleKind(h)) && this.objects.isUserFreed(h)) this.#makeEligible(h);
  }

  override userFree(h: number): void {
    if (!isGcManaged(handleKind(h))) {
      super.userFree(h);
      return;
    }
    if (this.objects.setFlag(h, OBJECT_FLAG.USER_FREED)) return;
    if (this.objects.releaseCount(h) === 1) this.#makeEligible(h);
  }

  /** Puts h (count 1: only the collector's reference) into Ge, once. */
  #makeEligible(h: number): void {
    if (this.objects.setFlag(h, OBJECT_FLAG.ELIGIBLE)) return;
    this.#lock();
    const n = this.control[CTL.ELIGIBLE]!;
    this.control[CTL.LIST + n] = h;
    Atomics.store(this.control, CTL.ELIGIBLE, n + 1);
    this.#mutex.unlock();
  }

  #lock(): void {
    while (!this.#mutex.tryLock()) {
      // spin: the holder runs a short section or one collection (Atomics.wait is not allowed on threads that own sockets)
    }
  }

  /** Figure 2: mark the handles of every active cell, sweep Ge. */
  override collect(): number {
    if (Atomics.load(this.control, CTL.ELIGIBLE) === 0) return 0;
    this.#lock();
    try {
      const ctl = this.control;
      const n = ctl[CTL.ELIGIBLE]!;
      if (n === 0) return 0;
      const marks = (this.#marks ??= new Uint8Array(this.objects.capacity));
      marks.fill(0);
      const w = this.cells;
      const rows = this.rows;
      const threads = rows.length / ROW.WORDS;
      for (let t = 0; t < threads; t++) {
        const used = Atomics.load(rows, t * ROW.WORDS + ROW.USED);
        for (let cell = 0; cell < used; cell++) {
          const b = (t * CELLS_PER_THREAD + cell) * CELL.WORDS;
          if (Atomics.load(w, b + CELL.ACTIVE) === 0) continue;
          const c = w[b + CELL.COMM]!;
          const ty = w[b + CELL.TYPE]!;
          const o = w[b + CELL.OP]!;
          if (c !== 0) marks[handleIndex(c)] = 1;
          if (ty !== 0) marks[handleIndex(ty)] = 1;
          if (o !== 0) marks[handleIndex(o)] = 1;
        }
      }
      let kept = 0;
      let freed = 0;
      for (let i = 0; i < n; i++) {
        const h = ctl[CTL.LIST + i]!;
        if (marks[handleIndex(h)] === 1) {
          ctl[CTL.LIST + kept++] = h;
        } else {
          this.objects.release(h); // the collector's reference: the last one
          freed++;
        }
      }
      Atomics.store(ctl, CTL.ELIGIBLE, kept);
      Atomics.add(ctl, CTL.CYCLES, 1);
      return freed;
    } finally {
      this.#mutex.unlock();
    }
  }
}

/** The strategy's lifetime for this thread (row: its thread id, -1 for channel engines). */
export function createLifetime(strategy: RefcountStrategy, objects: ObjectTable, buffers: LifetimeBuffers, row: number): Lifetime {
  switch (strategy) {
    case 'naive':
      return new NaiveLifetime(objects, buffers, row);
    case 'predefined':
      return new PredefinedLifetime(objects, buffers, row);
    case 'gc':
      return new GcLifetime(objects, buffers, row);
  }
}
