/**
 * The shared words of endpoint routes (docs/adr/0019; reader-routes.ts claims readers, records announcements and follows routes): one
 * process's view of which endpoints have a reader, in one SharedArrayBuffer every thread attaches.
 *
 *   readers   per local endpoint: the thread id + 1 of its reader (0: none), and the epoch of its
 *             latest reader (each reader of an endpoint opens a new epoch, so a sender can tell
 *             a new reader from the one it connected to)
 *   routes    per remote endpoint d: one word, epoch << 9 | users << 2 | state (NONE, OPEN,
 *             CLOSING), which a sender reads before each send to d (one Atomics.load). `users`
 *             counts this process's threads that registered to dial d's reader in this epoch
 *             (registerUser: only while OPEN), so that when the route closes its count is final
 *             and the reader knows how many FINs to wait for from this process: a thread that
 *             read OPEN just before CLOSING was written cannot dial after the reader has gone
 *             (docs/adr/0019, "What is built", gap 1). Same host only: the reader's
 *             socket name is computed from the job key, process, endpoint and epoch
 *             (transport-tcp same-host.ts). A reader on another host would need its port here
 *             too, written so that no reader sees one epoch's state with another's port (several
 *             threads record announcements: whichever hosts the channel they came on)
 *   changes   a counter bumped at every route change, for one Atomics.waitAsync per change
 *   closed    per local endpoint: a counter bumped at each ROUTE_CLOSED recorded for it, and per
 *             process the users + 1 that process counted when it recorded the reader's close (0: not
 *             yet): the FINs the closing reader waits for from it before its socket may close
 *             (recorded by whichever thread hosts the channel the answer came on, read by the reader)
 *   deaths    per local endpoint: its reader thread's id + 1 and exit code (0: none), written by
 *             that thread as it dies holding the claim (its process 'exit' event, or MPI.Worker's
 *             terminate()): before its sockets close, so a process that learns of a peer's loss
 *             which followed from them can tell that the failure is its own (markReaderDied)
 *   senders   per (local thread id, remote endpoint): the epoch of that thread's route switch
 *             (route-switch.ts SenderRoute), kept here and not in the thread's heap because thread
 *             ids are recycled and the receiving side's mark word goes on from the last epoch the
 *             id used (gap 2): a new thread with the id continues from it
 *   marks     per (remote sending thread, local endpoint): the highest epoch whose opening mark
 *             was consumed (route-switch.ts MarkWord), the word the reader checks before it
 *             matches a frame of that epoch. One switch per (sending thread, destination
 *             endpoint), not per (thread, source endpoint, destination) as ADR 0019 words it: a
 *             thread's frames to d then keep the order it sent them whatever endpoint it was
 *             attached to, stricter than MPI asks, for one word instead of J
 *
 * Why a shared table and not messages between threads: the sender's check is on the hot path of
 * every send, and a load costs nothing against a wake-up (docs/notebook/performance-2026-11.md 4.4).
 */
import { waitAsync } from '../util/index.ts';
import type { MarkWord } from './route-switch.ts';

/** The state of a route to a remote endpoint (the low two bits of its word). */
export const ROUTE_STATE = { NONE: 0, OPEN: 1, CLOSING: 2 } as const;
export type RouteState = (typeof ROUTE_STATE)[keyof typeof ROUTE_STATE];

/** Users of one route per process: up to 127 threads (MAX_THREADS is 64), 7 bits above the state. */
export const MAX_ROUTE_USERS = 127;
/** Epochs fit in the 22 bits above the users (and the sign bit stays clear). */
export const MAX_ROUTE_EPOCH = (1 << 22) - 1;

export function routeWord(epoch: number, state: RouteState, users = 0): number {
  return (epoch << 9) | (users << 2) | state;
}
export function routeEpoch(word: number): number {
  return word >>> 9;
}
export function routeUsers(word: number): number {
  return (word >>> 2) & MAX_ROUTE_USERS;
}
export function routeState(word: number): RouteState {
  return (word & 3) as RouteState;
}

/** Sizes of one process's table. */
export interface RouteTableLayout {
  readonly processCount: number;
  readonly endpointsPerProcess: number;
  /** threads per process that may send (MAX_THREADS) */
  readonly threads: number;
}

const CHANGES = 0;
/** 1 once the process's main thread entered MPI.finalize: every reader hands its endpoint back */
const FINALIZING = 1;
const HEADER_WORDS = 2;
/** A death word (markReaderDied): the thread id + 1 in the low 8 bits, the exit code above. */
const DEATH_THREAD_MASK = 0xff;
const DEATH_CODE_SHIFT = 8;

export class RouteTable {
  readonly layout: RouteTableLayout;
  readonly #w: Int32Array;
  readonly #readers: number;
  readonly #routes: number;
  readonly #marks: number;
  readonly #senders: number;
  readonly #closed: number;
  readonly #deaths: number;

  static bytesFor(l: RouteTableLayout): number {
    const endpoints = l.processCount * l.endpointsPerProcess;
    return (HEADER_WORDS + 2 * l.endpointsPerProcess + endpoints + 2 * l.threads * endpoints + l.endpointsPerProcess * (1 + l.processCount) + l.endpointsPerProcess) * 4;
  }

  /** A view of `buffer` (RouteTable.bytesFor(layout) bytes, zeroed when new: every word starts at none). */
  constructor(buffer: SharedArrayBuffer, layout: RouteTableLayout) {
    if (buffer.byteLength < RouteTable.bytesFor(layout)) throw new RangeError(`route table needs ${RouteTable.bytesFor(layout)} bytes, got ${buffer.byteLength}`);
    this.layout = layout;
    this.#w = new Int32Array(buffer);
    this.#readers = HEADER_WORDS;
    this.#routes = this.#readers + 2 * layout.endpointsPerProcess;
    this.#marks = this.#routes + layout.processCount * layout.endpointsPerProcess;
    this.#senders = this.#marks + layout.threads * layout.processCount * layout.endpointsPerProcess;
    this.#closed = this.#senders + layout.threads * layout.processCount * layout.endpointsPerProcess;
    this.#deaths = this.#closed + layout.endpointsPerProcess * (1 + layout.processCount);
    if (layout.threads > DEATH_THREAD_MASK) throw new RangeError(`route table for ${layout.threads} threads: at most ${DEATH_THREAD_MASK}`);
  }

  // --- readers of this process's endpoints -------------------------------------------

  /**
   * Thread `threadId` becomes the reader of local endpoint `local` (0..J-1) if it has none;
   * returns the new epoch (1, 2, ...), or -1 when another thread reads it.
   */
  claimReader(local: number, threadId: number): number {
    const w = this.#w;
    const at = this.#readers + 2 * local;
    if (Atomics.compareExchange(w, at, 0, threadId + 1) !== 0) return -1;
    const epoch = Atomics.add(w, at + 1, 1) + 1;
    if (epoch > MAX_ROUTE_EPOCH) {
      Atomics.store(w, at, 0);
      throw new RangeError(`endpoint ${local} has had ${MAX_ROUTE_EPOCH} readers`);
    }
    return epoch;
  }

  /** Thread `threadId` stops reading local endpoint `local`; false if it was not its reader. */
  releaseReader(local: number, threadId: number): boolean {
    return Atomics.compareExchange(this.#w, this.#readers + 2 * local, threadId + 1, 0) === threadId + 1;
  }

  /** Releases every local endpoint thread `threadId` still reads (its thread has ended); returns how many. */
  releaseReaderOf(threadId: number): number {
    let released = 0;
    for (let local = 0; local < this.layout.endpointsPerProcess; local++) if (this.releaseReader(local, threadId)) released++;
    return released;
  }

  /** The thread id of local endpoint `local`'s reader, or -1. */
  readerOf(local: number): number {
    return Atomics.load(this.#w, this.#readers + 2 * local) - 1;
  }

  /**
   * Thread `threadId` is dying (docs/adr/0019 "The reader dies") with exit code `code`: every local
   * endpoint it still reads is marked, for readerDeaths(). Called on the dying thread (its process
   * 'exit' event: process.exit, an uncaught error) or by the thread that terminates it, before its
   * sockets close: a Worker's 'exit' event reaches its process only after Node has closed the
   * thread's handles and torn down its heap, so a peer that reacts to those sockets ending can make
   * this process lose it first. Returns how many endpoints were marked.
   */
  markReaderDied(threadId: number, code: number): number {
    let marked = 0;
    for (let local = 0; local < this.layout.endpointsPerProcess; local++) {
      if (this.readerOf(local) !== threadId) continue;
      Atomics.store(this.#w, this.#deaths + local, ((code & 0xff) << DEATH_CODE_SHIFT) | (threadId + 1));
      marked++;
    }
    return marked;
  }

  /**
   * Local endpoints whose reader died holding them (markReaderDied), with its thread id and exit
   * code (the low 8 bits, as a process's). A mark counts only while that thread still holds the
   * claim: one that handed back in between (a terminate() racing a clean end) lost nothing.
   */
  readerDeaths(): { local: number; thread: number; code: number }[] {
    const out: { local: number; thread: number; code: number }[] = [];
    for (let local = 0; local < this.layout.endpointsPerProcess; local++) {
      const word = Atomics.load(this.#w, this.#deaths + local);
      const thread = (word & DEATH_THREAD_MASK) - 1;
      if (thread >= 0 && this.readerOf(local) === thread) out.push({ local, thread, code: word >>> DEATH_CODE_SHIFT });
    }
    return out;
  }

  /** The epoch of local endpoint `local`'s latest reader (0: never had one). */
  readerEpoch(local: number): number {
    return Atomics.load(this.#w, this.#readers + 2 * local + 1);
  }

  // --- routes to remote endpoints ------------------------------------------------------

  /** The route word of remote endpoint `d` (decode with routeEpoch / routeState / routeUsers). */
  route(d: number): number {
    return Atomics.load(this.#w, this.#routes + d);
  }

  /**
   * Records a route announcement for remote endpoint `d` and returns the new word, or -1 when it
   * is ignored: an announcement of an older epoch, or of a state the epoch has already reached
   * (announcements of one endpoint come from one process, but may reach this process's threads in
   * any order). A new epoch starts with no users; closing keeps the epoch's users, whose count is
   * then final (routeUsers of the returned word: the FINs the reader waits for from this process).
   */
  setRoute(d: number, epoch: number, state: RouteState): number {
    if (epoch > MAX_ROUTE_EPOCH) throw new RangeError(`route epoch ${epoch} is above ${MAX_ROUTE_EPOCH}`);
    const w = this.#w;
    const at = this.#routes + d;
    let word: number;
    for (;;) {
      const old = Atomics.load(w, at);
      const oldEpoch = routeEpoch(old);
      if (epoch < oldEpoch || (epoch === oldEpoch && state <= routeState(old))) return -1;
      word = routeWord(epoch, state, epoch === oldEpoch ? routeUsers(old) : 0);
      if (Atomics.compareExchange(w, at, old, word) === old) break;
    }
    Atomics.add(w, CHANGES, 1);
    Atomics.notify(w, CHANGES);
    return word;
  }

  /**
   * A thread of this process is about to dial the reader of `d` in `epoch`: counts it among the
   * route's users, only while the route is open in that epoch. False: it is not (closing, or
   * another epoch): the thread stays on the engine path.
   */
  registerUser(d: number, epoch: number): boolean {
    const w = this.#w;
    const at = this.#routes + d;
    for (;;) {
      const old = Atomics.load(w, at);
      if (routeEpoch(old) !== epoch || routeState(old) !== ROUTE_STATE.OPEN) return false;
      const users = routeUsers(old);
      if (users === MAX_ROUTE_USERS) throw new RangeError(`more than ${MAX_ROUTE_USERS} threads dial the reader of endpoint ${d}`);
      if (Atomics.compareExchange(w, at, old, routeWord(epoch, ROUTE_STATE.OPEN, users + 1)) === old) return true;
    }
  }

  /** The route-change counter, to pass to changedAfter(). */
  changes(): number {
    return Atomics.load(this.#w, CHANGES);
  }

  /** Resolves once a route changed after `seen` (changes()); holds no event-loop reference. */
  changedAfter(seen: number): Promise<void> {
    return waitChange(this.#w, CHANGES, seen);
  }

  // --- finalize ----------------------------------------------------------------------

  /** The main thread entered MPI.finalize: readers hand back (finalizingAfter wakes them). */
  beginFinalize(): void {
    Atomics.store(this.#w, FINALIZING, 1);
    Atomics.notify(this.#w, FINALIZING);
  }

  /** Resolves once the process finalizes (at once if it already does); holds no event-loop reference. */
  finalizingAfter(): Promise<void> {
    return waitChange(this.#w, FINALIZING, 0);
  }

  /** How many local endpoints have a reader now. */
  readerCount(): number {
    let n = 0;
    for (let local = 0; local < this.layout.endpointsPerProcess; local++) if (this.readerOf(local) >= 0) n++;
    return n;
  }

  // --- a closing reader's answers -------------------------------------------------------

  /**
   * Process `process` recorded the close of local endpoint `local`'s reading with `users` of its
   * threads registered: the reader waits for that many FINs from it (docs/adr/0019, gap 1).
   */
  recordClosed(local: number, process: number, users: number): void {
    const w = this.#w;
    const at = this.#closedAt(local);
    Atomics.store(w, at + 1 + process, users + 1);
    Atomics.add(w, at, 1);
    Atomics.notify(w, at);
  }

  /** The users process `process` counted at local endpoint `local`'s close, or -1 before its answer. */
  closedUsers(local: number, process: number): number {
    return Atomics.load(this.#w, this.#closedAt(local) + 1 + process) - 1;
  }

  /** The counter of answers recorded for local endpoint `local`, to pass to closedAfter(). */
  closedChanges(local: number): number {
    return Atomics.load(this.#w, this.#closedAt(local));
  }

  /** Resolves once an answer for local endpoint `local` was recorded after `seen`; holds no event-loop reference. */
  closedAfter(local: number, seen: number): Promise<void> {
    return waitChange(this.#w, this.#closedAt(local), seen);
  }

  /** Forgets local endpoint `local`'s answers: its reading has closed (before the claim goes, so the next reader starts clean). */
  clearClosed(local: number): void {
    const at = this.#closedAt(local);
    for (let p = 0; p < this.layout.processCount; p++) Atomics.store(this.#w, at + 1 + p, 0);
  }

  #closedAt(local: number): number {
    return this.#closed + local * (1 + this.layout.processCount);
  }

  // --- marks ------------------------------------------------------------------------------

  /** The mark word of remote sending thread (process, thread) towards local endpoint `local`. */
  markWord(process: number, thread: number, local: number): SharedMarkWord {
    const l = this.layout;
    if (thread < 0 || thread >= l.threads) throw new RangeError(`thread ${thread} is outside 0..${l.threads - 1}`);
    return new SharedMarkWord(this.#w, this.#marks + (process * l.threads + thread) * l.endpointsPerProcess + local);
  }

  // --- this process's senders ------------------------------------------------------------

  /** The epoch of local thread `thread`'s route switch towards remote endpoint `d` (0: never switched). */
  senderEpoch(thread: number, d: number): number {
    return Atomics.load(this.#w, this.#senderAt(thread, d));
  }

  /** Records the epoch local thread `thread` has reached towards `d` (only that thread, or the next with its id, writes it). */
  setSenderEpoch(thread: number, d: number, epoch: number): void {
    Atomics.store(this.#w, this.#senderAt(thread, d), epoch);
  }

  #senderAt(thread: number, d: number): number {
    const l = this.layout;
    if (thread < 0 || thread >= l.threads) throw new RangeError(`thread ${thread} is outside 0..${l.threads - 1}`);
    return this.#senders + thread * l.processCount * l.endpointsPerProcess + d;
  }
}

/** route-switch.ts's MarkWord in shared memory: set by one path's consumer, read (and waited on) by the other's. */
export class SharedMarkWord implements MarkWord {
  readonly #w: Int32Array;
  readonly #at: number;

  constructor(words: Int32Array, at: number) {
    this.#w = words;
    this.#at = at;
  }

  get(): number {
    return Atomics.load(this.#w, this.#at);
  }

  set(epoch: number): void {
    Atomics.store(this.#w, this.#at, epoch);
    Atomics.notify(this.#w, this.#at);
  }

  /** Resolves once the word is no longer `seen`: the other path consumed a mark. */
  changedAfter(seen: number): Promise<void> {
    return waitChange(this.#w, this.#at, seen);
  }
}

function waitChange(w: Int32Array, at: number, seen: number): Promise<void> {
  const p = waitAsync(w, at, seen);
  return p === null ? Promise.resolve() : p.then(() => undefined);
}
