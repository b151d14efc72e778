/**
 * Everything the threads of one process share, in SharedArrayBuffers: created
 * once by the thread that calls MPI.init first (the main thread), handed to
 * every worker and channel engine (SharedBuffers is structured-cloneable), and
 * attached there. DESIGN.md "Processes, threads, endpoints".
 *
 *   request table      slots and their free stack          (request-table.ts)
 *   match queues       one block per local endpoint         (match-queues.ts)
 *   payload pool       small payloads, 64 B .. 64 KiB       (shm/payload-pool.ts)
 *   big arena          large payloads crossing threads      (same allocator, classes to 1 GiB)
 *   object table       communicators, groups, datatypes, ops (object-table.ts)
 *   lifetime           eligible set, per-thread reference cells (lifetime.ts)
 *   injection rings    one per channel: frames for the thread that hosts the channel
 *   completion rings   one per thread: slots completed for it by another thread
 *   control            thread ids in use (a bitmap: ids are recycled)
 *   statistics         per thread and channel engine, a row: its totals (MPI.stats), then a block of
 *                      counts per communicator, by base context id (comm.stats, COMM_STAT)
 *   ended              per statistics row: the thread has ended, so a spin lock it holds is never
 *                      released, and the thread's kernel id, to ask the kernel whether it still
 *                      runs (shm/spin-lock.ts, shm/kernel-thread.ts; docs/RELIABILITY.md section 5)
 *   slot caches        per thread: its cache of free request slots (request-table.ts), which
 *                      the next thread with the same id inherits
 *   routes             endpoint readers and the routes to them (route-table.ts, docs/adr/0019),
 *                      only in a process whose layout asks for endpoint readers
 *   bsend              the process's attached buffer for buffered sends: its size and the bytes in
 *                      use (api/bsend-buffer.ts lays it out: MPI attaches one buffer per process)
 *   peer bytes         per statistics row, the bytes its thread's connections wrote to each process
 *                      (mpiexec --dashboard's traffic matrix, peer-bytes.ts; written only when asked)
 */
import { isKernelThreadGone, kernelThreadId, PayloadPool, Ring, type LockHolders } from '../shm/index.ts';
import { ERR_PROC_FAILED, mpiError, waitAsync } from '../util/index.ts';
import { MatchQueues, type MatchingMode } from './match-queues.ts';
import { ObjectTable, type ObjectTableBuffers } from './object-table.ts';
import { RequestTable, SlotPool } from './request-table.ts';
import { allocateLifetimeBuffers, type LifetimeBuffers } from './lifetime.ts';
import { RouteTable, type RouteTableLayout } from './route-table.ts';

/** Threads (main, workers) that may own requests; each has a completion ring. */
export const MAX_THREADS = 64;
/**
 * Bytes per completion ring: a record is 8 bytes and a slot is in at most one ring at a time, so
 * a ring of requestSlots * 8 bytes (plus the wrap-around's waste) never fills; at least 1 MiB,
 * at most 8 MiB (beyond 1 Mi slots a full ring makes the completing thread wait for the owner).
 */
function completionRingBytes(requestSlots: number): number {
  let bytes = 1 << 20;
  while (bytes < requestSlots * 8 + 16 && bytes < 8 << 20) bytes *= 2;
  return bytes;
}
/** 4 MiB per injection ring: eager frames up to 1 MiB go through it (ThreadBridge.maxInjectBytes), larger ones by rendezvous. */
const INJECTION_RING_BYTES = 4 << 20;
/** A statistics row's totals: messages sent, received, bytes sent, received (MPI.stats). */
export const STAT = { SENT: 0, RECEIVED: 1, BYTES_SENT: 2, BYTES_RECEIVED: 3, WORDS: 4 } as const;
/**
 * After the totals, a statistics row has one block per base context id (ctx >>> CONTEXT_SUFFIX_BITS:
 * a communicator's point-to-point and collective contexts share it) for comm.stats(): the same
 * four counts, counted where the totals are (one add each, at an index the context gives), and
 * the milliseconds the row's thread spent blocked in calls on the communicator (runtime/blocked.ts).
 * The device counts at `STAT.WORDS + (ctx >>> 2) * COMM_STAT.WORDS + COMM_STAT.X`.
 */
export const COMM_STAT = { SENT: 0, RECEIVED: 1, BYTES_SENT: 2, BYTES_RECEIVED: 3, BLOCKED_MS: 4, WORDS: 5 } as const;
/** Base context ids (context ids are below 2^16, receive-lanes.ts). */
export const COMM_STAT_CONTEXTS = 1 << 14;
/** Float64 words of a statistics row: 655 KB, of which a thread touches only the pages of the communicators it uses. */
export const STAT_ROW_WORDS = STAT.WORDS + COMM_STAT_CONTEXTS * COMM_STAT.WORDS;
/** Where context `ctx`'s block starts in a statistics row. */
export function commStatBlock(ctx: number): number {
  return STAT.WORDS + (ctx >>> 2) * COMM_STAT.WORDS;
}
/** Statistics rows: one per user thread, then one per channel engine. */
export function statRows(channels: number): number {
  return MAX_THREADS + channels;
}
/**
 * Control words: a bitmap of the thread ids in use (MAX_THREADS bits); an abort requested by a
 * worker thread (flag, error code, thread id) for the main thread to carry out; the trace's post sequence.
 */
const CONTROL = { THREAD_BITS: 0, ABORT: MAX_THREADS / 32, ABORT_CODE: MAX_THREADS / 32 + 1, ABORT_THREAD: MAX_THREADS / 32 + 2, FAILED: MAX_THREADS / 32 + 3, TRACE_ORDER: MAX_THREADS / 32 + 4, PEER_BYTES_ASK: MAX_THREADS / 32 + 5, LOST_PROCESS: MAX_THREADS / 32 + 6, WORDS: MAX_THREADS / 32 + 7 } as const;

export interface SharedLayout {
  readonly processCount: number;
  readonly endpointsPerProcess: number;
  readonly channels: number;
  readonly matching: MatchingMode;
  readonly requestSlots: number;
  /** several threads use the structures (locks on, big arena and rings present) */
  readonly multithreaded: boolean;
  /** bytes per thread of the roll-call table, whose layout belongs to runtime/blocked.ts */
  readonly blockedSlotBytes: number;
  /**
   * endpoints may get a reader (endpointReceive `thread` where it applies, endpoint-receive.ts):
   * the route table is allocated. Absent or false: no table, and nothing of ADR 0019 runs.
   */
  readonly endpointReaders?: boolean;
}

export interface SharedBuffers {
  readonly layout: SharedLayout;
  readonly slots: SharedArrayBuffer;
  readonly slotFree: SharedArrayBuffer;
  readonly queues: readonly SharedArrayBuffer[];
  readonly payloadArena: SharedArrayBuffer;
  readonly payloadMeta: SharedArrayBuffer;
  readonly bigArena: SharedArrayBuffer | null;
  readonly bigMeta: SharedArrayBuffer | null;
  readonly objects: ObjectTableBuffers;
  readonly lifetime: LifetimeBuffers;
  readonly injection: SharedArrayBuffer | null;
  readonly completion: SharedArrayBuffer | null;
  readonly control: SharedArrayBuffer;
  readonly slotCaches: SharedArrayBuffer;
  readonly stats: SharedArrayBuffer;
  /** per (object-table record, local endpoint): the next collective sequence number of a communicator */
  readonly collSeq: SharedArrayBuffer;
  /** per thread: what it is blocked in, for the launcher's roll-call (runtime/blocked.ts lays it out) */
  readonly blocked: SharedArrayBuffer;
  /** the route table (route-table.ts), or null when the layout asks for no endpoint readers */
  readonly routes: SharedArrayBuffer | null;
  /** per thread (Int32): how many of its own connections hold frames the kernel has not taken (TransportOptions.onHoldChange) */
  readonly heldConnections: SharedArrayBuffer;
  /**
   * per statistics row (user threads then channel engines), three Int32 words: 1 once the thread has
   * ended (SharedState.markEnded), the kernel id of the thread that took the row (markStarted), and
   * how many threads have taken the row (markStarted)
   */
  readonly ended: SharedArrayBuffer;
  /** the attached buffer of buffered sends (Int32 words, laid out by api/bsend-buffer.ts: one per process, as in MPI) */
  readonly bsend: SharedArrayBuffer;
  /** per statistics row, layout.processCount Float64 words: bytes written to each process (peer-bytes.ts) */
  readonly peerBytes: SharedArrayBuffer;
}

/** Int32 words of the bsend cells (api/bsend-buffer.ts names them). */
const BSEND_CELL_WORDS = 4;

/** Words per statistics row in the ended table: the ended mark, the kernel id of the row's thread, the row's start count. */
const ENDED_WORDS = 3;

const SMALL_MAX_SHIFT = 16;
// 32,768 records: more than the 16,376 context ids a process can hand out, so ids (ERR_OTHER) run out before records.
const OBJECT_RECORDS = 1 << 15;
/** Large payloads: classes up to 1 GiB in a 2 GiB address range, touched only as used. */
const BIG_MAX_SHIFT = 30;
const BIG_ARENA_BYTES = 2 ** 31 - 64;

export class SharedState implements LockHolders {
  readonly buffers: SharedBuffers;
  readonly layout: SharedLayout;
  readonly table: RequestTable;
  readonly queues: MatchQueues[];
  readonly payloads: PayloadPool;
  readonly big: PayloadPool | null;
  readonly objects: ObjectTable;
  readonly stats: Float64Array;
  /** collective sequence numbers, index = record index * endpointsPerProcess + local endpoint */
  readonly collSeq: Int32Array;
  /** endpoint readers and routes (docs/adr/0019); null unless the layout asks for endpoint readers */
  readonly routes: RouteTable | null;
  /** per thread id: its own connections that hold frames the kernel has not taken (Atomics; worker.ts reads it at a thread's exit) */
  readonly heldConnections: Int32Array;
  /** the attached buffer of buffered sends (api/bsend-buffer.ts) */
  readonly bsend: Int32Array;
  readonly #control: Int32Array;
  readonly #ended: Int32Array;
  readonly #injection: (Ring | undefined)[];
  readonly #completion: (Ring | undefined)[];

  static create(layout: SharedLayout): SharedState {
    const endpoints = layout.processCount * layout.endpointsPerProcess;
    const rt = RequestTable.allocateBuffers(layout.requestSlots);
    const small = PayloadPool.allocateBuffers(64 << 20, SMALL_MAX_SHIFT);
    const big = layout.multithreaded ? PayloadPool.allocateBuffers(BIG_ARENA_BYTES, BIG_MAX_SHIFT) : null;
    const buffers: SharedBuffers = {
      layout,
      slots: rt.slots,
      slotFree: rt.free,
      queues: Array.from({ length: layout.endpointsPerProcess }, () => MatchQueues.allocateBuffer(endpoints)),
      payloadArena: small.arena,
      payloadMeta: small.meta,
      bigArena: big?.arena ?? null,
      bigMeta: big?.meta ?? null,
      // 2 MiB of records and 8 MiB of group/datatype data.
      objects: ObjectTable.allocateBuffers(OBJECT_RECORDS, 8 << 20),
      lifetime: allocateLifetimeBuffers(MAX_THREADS, OBJECT_RECORDS),
      injection: layout.multithreaded ? new SharedArrayBuffer(layout.channels * Ring.bytesFor(INJECTION_RING_BYTES)) : null,
      completion: layout.multithreaded ? new SharedArrayBuffer(MAX_THREADS * Ring.bytesFor(completionRingBytes(layout.requestSlots))) : null,
      control: new SharedArrayBuffer(CONTROL.WORDS * 4),
      slotCaches: new SharedArrayBuffer(MAX_THREADS * SlotPool.CACHE_WORDS * 4),
      stats: new SharedArrayBuffer(statRows(layout.channels) * STAT_ROW_WORDS * 8),
      collSeq: new SharedArrayBuffer(OBJECT_RECORDS * layout.endpointsPerProcess * 4),
      blocked: new SharedArrayBuffer(MAX_THREADS * layout.blockedSlotBytes),
      routes: layout.endpointReaders === true ? new SharedArrayBuffer(RouteTable.bytesFor(routeTableLayout(layout))) : null,
      heldConnections: new SharedArrayBuffer(MAX_THREADS * 4),
      ended: new SharedArrayBuffer((MAX_THREADS + layout.channels) * ENDED_WORDS * 4),
      bsend: new SharedArrayBuffer(BSEND_CELL_WORDS * 4),
      peerBytes: new SharedArrayBuffer(statRows(layout.channels) * layout.processCount * 8),
    };
    return new SharedState(buffers, true);
  }

  /** Another thread's view of the same state. */
  static attach(buffers: SharedBuffers): SharedState {
    return new SharedState(buffers, false);
  }

  private constructor(buffers: SharedBuffers, initialize: boolean) {
    this.buffers = buffers;
    const layout = buffers.layout;
    this.layout = layout;
    const mt = layout.multithreaded;
    const endpoints = layout.processCount * layout.endpointsPerProcess;
    // Before the structures: their spin locks ask this state about a holder that may have died.
    this.#ended = new Int32Array(buffers.ended);
    this.table = new RequestTable({ slots: buffers.slots, free: buffers.slotFree }, initialize, mt, this);
    this.queues = buffers.queues.map((b) => new MatchQueues(this.table, b, endpoints, layout.matching, initialize, mt, this));
    this.payloads = new PayloadPool({ arena: buffers.payloadArena, meta: buffers.payloadMeta }, SMALL_MAX_SHIFT, initialize, mt, 'payload pool', this);
    this.big =
      buffers.bigArena === null
        ? null
        : new PayloadPool({ arena: buffers.bigArena, meta: buffers.bigMeta! }, BIG_MAX_SHIFT, initialize, true, 'large-payload arena', this);
    this.objects = new ObjectTable(buffers.objects, initialize);
    this.stats = new Float64Array(buffers.stats);
    this.collSeq = new Int32Array(buffers.collSeq);
    this.routes = buffers.routes === null ? null : new RouteTable(buffers.routes, routeTableLayout(layout));
    this.heldConnections = new Int32Array(buffers.heldConnections);
    this.bsend = new Int32Array(buffers.bsend);
    this.#control = new Int32Array(buffers.control);
    this.#injection = new Array(layout.channels);
    this.#completion = new Array(MAX_THREADS);
    if (initialize) Atomics.store(this.#control, CONTROL.THREAD_BITS, 1); // thread 0 is the main thread
  }

  /**
   * A free thread id for a new MPI thread (0 is the main thread), or -1 when MAX_THREADS are in use.
   * Ids come back with releaseThreadId when their thread ends.
   */
  allocateThreadId(): number {
    const c = this.#control;
    // The bitmap's words only (the words after it are not thread ids).
    for (let w = 0; w < MAX_THREADS / 32; w++) {
      for (;;) {
        const bits = Atomics.load(c, CONTROL.THREAD_BITS + w);
        if (bits === -1) break;
        const bit = 31 - Math.clz32(~bits & (bits + 1)); // the lowest zero bit
        if (Atomics.compareExchange(c, CONTROL.THREAD_BITS + w, bits, bits | (1 << bit)) === bits) return w * 32 + bit;
      }
    }
    return -1;
  }

  /** Returns the id of a thread that has ended. */
  releaseThreadId(id: number): void {
    Atomics.and(this.#control, CONTROL.THREAD_BITS + (id >>> 5), ~(1 << (id & 31)));
  }

  /** A worker thread asks the main thread to end the job with `code` (MPI.abort in a worker). */
  requestAbort(code: number, threadId: number): void {
    const c = this.#control;
    c[CONTROL.ABORT_CODE] = code;
    c[CONTROL.ABORT_THREAD] = threadId;
    Atomics.store(c, CONTROL.ABORT, 1);
    Atomics.notify(c, CONTROL.ABORT);
  }

  /**
   * The main thread: calls `onAbort(code, threadId)` once a worker requests an abort. The wait
   * never keeps the event loop alive (a pending Atomics.waitAsync does not).
   */
  watchAbort(onAbort: (code: number, threadId: number) => void): void {
    const c = this.#control;
    this.#watchSet(CONTROL.ABORT, () => onAbort(c[CONTROL.ABORT_CODE]!, c[CONTROL.ABORT_THREAD]!));
  }

  /**
   * The main thread: calls `onLost(p)` once a thread's device marks lost process `p` (markLost), so
   * that mpiexec hears of the loss even when the main thread makes no MPI call meanwhile (it may
   * end the process itself on its worker's error). The wait keeps the event loop no more alive than
   * watchAbort's.
   */
  watchLost(onLost: (p: number) => void): void {
    const c = this.#control;
    this.#watchSet(CONTROL.LOST_PROCESS, () => onLost(Atomics.load(c, CONTROL.LOST_PROCESS) - 1));
  }

  /** Calls `then` in this thread's event loop once control word `word` is no longer 0 (at once if it is not). */
  #watchSet(word: number, then: () => void): void {
    const c = this.#control;
    const check = (): void => {
      if (Atomics.load(c, word) !== 0) {
        then();
        return;
      }
      const p = waitAsync(c, word, 0);
      if (p !== null) void p.then(check);
      else check();
    };
    check();
  }

  /** Thread t's cache of free request slots (its SlotPool), kept in shared memory for the next thread with that id. */
  slotCache(t: number): Int32Array {
    return new Int32Array(this.buffers.slotCaches, t * SlotPool.CACHE_WORDS * 4, SlotPool.CACHE_WORDS);
  }

  /** The injection ring of channel c (multithreaded processes only). */
  injection(c: number): Ring {
    return (this.#injection[c] ??= new Ring(this.buffers.injection!, c * Ring.bytesFor(INJECTION_RING_BYTES), Ring.bytesFor(INJECTION_RING_BYTES)));
  }

  /** Capacity in bytes of each injection ring. */
  get injectionRingBytes(): number {
    return INJECTION_RING_BYTES;
  }

  /** The completion ring of thread t (multithreaded processes only). */
  completion(t: number): Ring {
    const bytes = Ring.bytesFor(completionRingBytes(this.layout.requestSlots));
    return (this.#completion[t] ??= new Ring(this.buffers.completion!, t * bytes, bytes));
  }

  /** A thread's device failed with `errorClass` (the job is ending): threads waiting for a ring stop waiting. */
  markFailed(errorClass: number): void {
    Atomics.compareExchange(this.#control, CONTROL.FAILED, 0, errorClass);
  }

  /**
   * Under mpiexec --trace: takes `n` numbers of the process's post sequence, shared by its threads
   * (api/trace-recorder.ts: the order in which sends and receives were posted at an endpoint, whatever
   * thread posted them); returns the first.
   */
  takeTraceOrder(n: number): number {
    return Atomics.add(this.#control, CONTROL.TRACE_ORDER, n);
  }

  /**
   * A thread's device failed because it lost process `p` (the first such loss in the process is
   * kept). Stored before markFailed, so a thread that sees the failure can name the loss.
   */
  markLost(p: number): void {
    if (Atomics.compareExchange(this.#control, CONTROL.LOST_PROCESS, 0, p + 1) === 0) Atomics.notify(this.#control, CONTROL.LOST_PROCESS);
  }

  /** The process whose loss failed this process (markLost), or null. */
  lostProcess(): number | null {
    const v = Atomics.load(this.#control, CONTROL.LOST_PROCESS);
    return v === 0 ? null : v - 1;
  }

  /** The error class of the first device failure in this process, or 0. */
  failedClass(): number {
    return Atomics.load(this.#control, CONTROL.FAILED);
  }

  /**
   * The thread of statistics row `row` has ended (its Worker's exit event, or an engine that stopped
   * serving its channel): a spin lock it holds will never be released, and a thread spinning on one
   * throws instead (shm/spin-lock.ts).
   */
  markEnded(row: number): void {
    Atomics.store(this.#ended, row * ENDED_WORDS, 1);
  }

  /**
   * The calling thread took statistics row `row` (a recycled worker thread id, or its first): it has
   * not ended, and the row names its kernel thread. Called by the new thread's Device, not when the id
   * is handed out, so a thread spinning on a lock the row's previous thread died holding has the new
   * thread's whole start-up to see the mark.
   */
  markStarted(row: number): void {
    // The count first: a look (endedStamp) that still read the ended mark set then reads an older count than the next look.
    Atomics.add(this.#ended, row * ENDED_WORDS + 2, 1);
    Atomics.store(this.#ended, row * ENDED_WORDS + 1, kernelThreadId());
    Atomics.store(this.#ended, row * ENDED_WORDS, 0);
  }

  /**
   * LockHolders (spin-lock.ts): holder ids are statistics rows + 1. The thread has ended when its row
   * is marked, or when the kernel no longer runs it: a Worker stopped by terminate() or out of memory
   * whose 'exit' event waits for the main thread's event loop, while the main thread spins here. The
   * stamp is the row's start count + 1, read before the mark, so a thread that took the row meanwhile
   * changes it.
   */
  endedStamp(holder: number): number {
    const at = (holder - 1) * ENDED_WORDS;
    const starts = Atomics.load(this.#ended, at + 2);
    return Atomics.load(this.#ended, at) !== 0 || isKernelThreadGone(Atomics.load(this.#ended, at + 1)) ? starts + 1 : 0;
  }

  /** LockHolders (spin-lock.ts): the process fails, with an error naming the lock and the thread. */
  heldByEnded(lockName: string, holder: number): Error {
    this.markFailed(ERR_PROC_FAILED);
    return mpiError(ERR_PROC_FAILED, 'progress', `the lock of the ${lockName} is held by ${rowName(holder - 1)}, which ended without releasing it (terminated, out of memory, or failed): this process cannot go on`);
  }

  /** Statistics row `row`'s bytes written to each process (peer-bytes.ts), layout.processCount words. */
  peerBytesRow(row: number): Float64Array {
    const n = this.layout.processCount;
    return new Float64Array(this.buffers.peerBytes, row * n * 8, n);
  }

  /** mpiexec --dashboard's sample asks every thread to write its peer bytes row (peer-bytes.ts). */
  askPeerBytes(): void {
    Atomics.add(this.#control, CONTROL.PEER_BYTES_ASK, 1);
    Atomics.notify(this.#control, CONTROL.PEER_BYTES_ASK);
  }

  /**
   * Calls `onAsk` after each askPeerBytes from now on, in this thread's event loop, until `isDone()`
   * (checked at each ask). The wait keeps no thread alive (as watchAbort's).
   */
  watchPeerBytesAsks(onAsk: () => void, isDone: () => boolean): void {
    const c = this.#control;
    const wait = (seen: number): void => {
      const p = waitAsync(c, CONTROL.PEER_BYTES_ASK, seen);
      if (p === null) next();
      else void p.then(next);
    };
    const next = (): void => {
      if (isDone()) return;
      onAsk();
      wait(Atomics.load(c, CONTROL.PEER_BYTES_ASK));
    };
    wait(Atomics.load(c, CONTROL.PEER_BYTES_ASK));
  }

  /** The statistics row of a user thread (0..MAX_THREADS-1) or of channel engine c (MAX_THREADS + c): totals, then COMM_STAT blocks. */
  statsRow(row: number): Float64Array {
    return this.stats.subarray(row * STAT_ROW_WORDS, (row + 1) * STAT_ROW_WORDS);
  }

  /**
   * Context `ctx`'s counts summed over every row (comm.stats), as a COMM_STAT block. A block no
   * thread touched reads as zero without the kernel giving its page memory.
   */
  commCounts(ctx: number): Float64Array {
    const out = new Float64Array(COMM_STAT.WORDS);
    const s = this.stats;
    const at = commStatBlock(ctx);
    const rows = statRows(this.layout.channels);
    for (let r = 0; r < rows; r++) {
      const b = r * STAT_ROW_WORDS + at;
      for (let k = 0; k < COMM_STAT.WORDS; k++) out[k] += s[b + k]!;
    }
    return out;
  }

  /**
   * Context `ctx`'s blocks start over (its communicator was freed: the next one to get the id
   * starts from zero). Only words that are not zero are written, so rows that never saw the
   * context are not made to take memory.
   */
  clearCommCounts(ctx: number): void {
    const s = this.stats;
    const at = commStatBlock(ctx);
    const rows = statRows(this.layout.channels);
    for (let r = 0; r < rows; r++) {
      const b = r * STAT_ROW_WORDS + at;
      for (let k = 0; k < COMM_STAT.WORDS; k++) if (s[b + k] !== 0) s[b + k] = 0;
    }
  }
}

/** The statistics row of channel `channel`'s engine (user threads have rows 0..MAX_THREADS-1). */
export function engineStatsRow(channel: number): number {
  return MAX_THREADS + channel;
}

/** A statistics row as the thread it belongs to: "the main thread", "worker thread 3", "channel engine 1". */
function rowName(row: number): string {
  if (row === 0) return 'the main thread';
  return row < MAX_THREADS ? `worker thread ${row}` : `channel engine ${row - MAX_THREADS}`;
}

/** The route table's sizes for a process of `layout`: every thread id may send. */
function routeTableLayout(layout: SharedLayout): RouteTableLayout {
  return { processCount: layout.processCount, endpointsPerProcess: layout.endpointsPerProcess, threads: MAX_THREADS };
}
