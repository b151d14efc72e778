/**
 * What each thread is blocked in, for mpiexec's --timeout roll-call. Set on
 * entry to a blocking call, cleared when it returns. Entry and exit also tell
 * the thread's WaitPoll (wait-poll.ts) when the thread waits, so that it can poll instead of sleeping.
 * A call on a communicator (its context id given) also adds the time it was blocked to the
 * thread's statistics row, in the communicator's block (comm.stats().blockedMs, device/shared-state.ts
 * COMM_STAT): two clock reads per call that had to wait, none for a call that did not.
 * Each thread has one BlockedCalls, an object of its ThreadRuntime
 * (thread-runtime.ts). A single-threaded process keeps the record in it (no
 * allocation, nothing shared); in a multithreaded process every MPI thread also
 * writes it into its slot of a shared table, so the main thread, which answers
 * the roll-call, can report every thread.
 *
 * Slot (Int32 words): ACTIVE, PEER, TAG, CALL_LEN, COMM_LEN, CALLS (blocking
 * calls the thread has entered: two roll-calls that see the same count saw no
 * call return between them, which mpiexec's deadlock hint needs), then
 * NAME_BYTES bytes of the call's name and NAME_BYTES of the communicator's name
 * (ASCII, cut to fit).
 *
 * A worker thread's slot also covers its start: the thread that makes an
 * MPI.Worker marks the new thread's slot STARTING_CALL (markStarting) until the
 * thread's MPI.init overwrites it, and init itself is reported while it opens
 * the thread's connections (INIT_CALL). A roll-call during a slow start-up
 * (16 threads per process loading their modules on a loaded machine) then
 * says so, instead of showing nothing for threads that are not in MPI yet.
 */
import { performance } from 'node:perf_hooks';
import { COMM_STAT, commStatBlock } from '../device/index.ts';
import type { BlockedIn } from '../pmi/index.ts';
import type { WaitPoll } from './wait-poll.ts';

const NAME_BYTES = 32;
const S = { ACTIVE: 0, PEER: 1, TAG: 2, CALL_LEN: 3, COMM_LEN: 4, CALLS: 5, NAMES: 6 } as const;
export const BLOCKED_SLOT_WORDS = S.NAMES + (2 * NAME_BYTES) / 4;
const NONE = -0x7fffffff;
/** What a worker thread's slot says from its MPI.Worker constructor until its MPI.init begins. */
export const STARTING_CALL = 'start, before MPI.init';
/** What a worker thread's slot says while its MPI.init opens its connections. */
export const INIT_CALL = 'MPI.init';

/** Writes `text` (ASCII, cut to NAME_BYTES) at byte `at`; returns its length. */
function writeName(bytes: Uint8Array, at: number, text: string): number {
  const n = Math.min(text.length, NAME_BYTES);
  for (let i = 0; i < n; i++) bytes[at + i] = text.charCodeAt(i) & 0x7f;
  return n;
}

/** Fills slot `slot` of `table` and marks it active (the last store, so a reader sees a whole record). */
function writeSlot(table: Int32Array, bytes: Uint8Array, slot: number, call: string, comm: string, peer: number | null, tag: number | null): void {
  const b = slot * BLOCKED_SLOT_WORDS;
  table[b + S.PEER] = peer ?? NONE;
  table[b + S.TAG] = tag ?? NONE;
  const nameAt = (b + S.NAMES) * 4;
  table[b + S.CALL_LEN] = writeName(bytes, nameAt, call);
  table[b + S.COMM_LEN] = writeName(bytes, nameAt + NAME_BYTES, comm);
  Atomics.store(table, b + S.ACTIVE, 1);
}

/**
 * Called by the thread that starts an MPI.Worker: thread `threadId`'s slot in the shared table
 * `buffer` says STARTING_CALL until the new thread's MPI.init overwrites it.
 */
export function markStarting(buffer: SharedArrayBuffer, threadId: number): void {
  writeSlot(new Int32Array(buffer), new Uint8Array(buffer), threadId, STARTING_CALL, '', null, null);
}

/** Called when thread `threadId` has ended (before its id is reused): its slot reports nothing. */
export function clearSlot(buffer: SharedArrayBuffer, threadId: number): void {
  Atomics.store(new Int32Array(buffer), threadId * BLOCKED_SLOT_WORDS + S.ACTIVE, 0);
}

/** What one thread is blocked in; made at init, before the roll-call handler that reads it. */
export class BlockedCalls {
  readonly #waitPoll: WaitPoll;
  readonly #current = { call: '', comm: '', peer: null as number | null, tag: null as number | null };
  #active = false;
  /** Blocking calls entered on this thread (the roll-call's `calls`), wrapping at 2^31. */
  #calls = 0;
  #table: Int32Array | null = null;
  #bytes: Uint8Array | null = null;
  #mySlot = 0;
  #threads = 0;
  /** this thread's statistics row (countTimeIn), where time blocked on a communicator is added */
  #statRow: Float64Array | null = null;
  /** the call in progress: its communicator's context id (-1: none) and when it began (ms) */
  #ctx = -1;
  #since = 0;

  /** @param waitPoll this thread's, told when a blocking call begins and ends */
  constructor(waitPoll: WaitPoll) {
    this.#waitPoll = waitPoll;
  }

  /** Joins the shared table (multithreaded processes): this thread writes slot `threadId` of `capacity`. */
  attachTable(buffer: SharedArrayBuffer, threadId: number, capacity: number): void {
    this.#table = new Int32Array(buffer);
    this.#bytes = new Uint8Array(buffer);
    this.#mySlot = threadId;
    this.#threads = capacity;
  }

  /** Adds the time of blocking calls on communicators to `statRow` (this thread's statistics row). */
  countTimeIn(statRow: Float64Array): void {
    this.#statRow = statRow;
  }

  #readName(at: number, n: number): string {
    return String.fromCharCode(...this.#bytes!.subarray(at, at + n));
  }

  /** A blocking call begins on this thread; `ctx`: its communicator's context id, -1 for none. */
  enter(call: string, comm: string, peer: number | null, tag: number | null, ctx = -1): void {
    this.#ctx = ctx;
    if (ctx >= 0 && this.#statRow !== null) this.#since = performance.now();
    const current = this.#current;
    current.call = call;
    current.comm = comm;
    current.peer = peer;
    current.tag = tag;
    this.#calls = (this.#calls + 1) | 0;
    this.#active = true;
    this.#waitPoll.begin();
    const table = this.#table;
    if (table !== null) {
      table[this.#mySlot * BLOCKED_SLOT_WORDS + S.CALLS] = this.#calls;
      writeSlot(table, this.#bytes!, this.#mySlot, call, comm, peer, tag);
    }
  }

  /** The blocking call has returned. */
  leave(): void {
    this.#waitPoll.end();
    this.#active = false;
    const row = this.#statRow;
    if (this.#ctx >= 0 && row !== null) row[commStatBlock(this.#ctx) + COMM_STAT.BLOCKED_MS] += performance.now() - this.#since;
    this.#ctx = -1;
    if (this.#table !== null) Atomics.store(this.#table, this.#mySlot * BLOCKED_SLOT_WORDS + S.ACTIVE, 0);
  }

  /** The roll-call answer: the main thread's blocked call, and (multithreaded) every other thread's. */
  report(): BlockedIn | null {
    const current = this.#current;
    const main: BlockedIn | null = this.#active ? { call: current.call, comm: current.comm, peer: current.peer, tag: current.tag, calls: this.#calls } : null;
    const table = this.#table;
    if (table === null) return main;
    const others: { thread: number; call: string; comm: string; peer: number | null; tag: number | null; calls: number }[] = [];
    for (let t = 0; t < this.#threads; t++) {
      if (t === this.#mySlot) continue;
      const b = t * BLOCKED_SLOT_WORDS;
      if (Atomics.load(table, b + S.ACTIVE) !== 1) continue;
      const nameAt = (b + S.NAMES) * 4;
      const peer = table[b + S.PEER]!;
      const tag = table[b + S.TAG]!;
      others.push({
        thread: t,
        call: this.#readName(nameAt, table[b + S.CALL_LEN]!),
        comm: this.#readName(nameAt + NAME_BYTES, table[b + S.COMM_LEN]!),
        peer: peer === NONE ? null : peer,
        tag: tag === NONE ? null : tag,
        calls: table[b + S.CALLS]!,
      });
    }
    if (others.length === 0) return main;
    return { ...(main ?? { call: '(main thread not in MPI)', comm: '', peer: null, tag: null }), threads: others };
  }
}
