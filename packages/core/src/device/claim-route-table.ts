/**
 * The shared words of receive-claim routes (docs/adr/0023-receive-claims.md, step 2): one
 * process's view of which claims of the other processes on its host have a route (the claiming
 * thread's own socket), in one SharedArrayBuffer every thread of the process attaches. The switch
 * itself (marks, sender epochs, the route-change counter) stays in route-table.ts: a sending
 * thread's frames to one endpoint take one path at a time, whichever route it follows.
 *
 *   mirror   per (remote process q, q's claim entry e): the route word (route-table.ts's
 *            epoch << 9 | users << 2 | state) and the claim's key (local endpoint << 16 | context,
 *            tag), written by whichever thread records q's announcement. The index is q's own
 *            entry (claim-table.ts), so a sender finds (q, endpoint, context, tag) by probing
 *            from the same hash as q's table; an entry q never announced stops the probe, which
 *            then answers "no route" (the engine path: slower, never wrong)
 *   closed   per local claim entry: a counter bumped at each ROUTE_CLOSED recorded for it, and per
 *            process the users + 1 it counted when it recorded the close (0: not yet): the FINs the
 *            closing claim's socket waits for from it (route-table.ts's `closed`, per claim)
 *   open     per thread: how many of its claims' routes are open or closing (MPI.finalize waits for
 *            a sum of 0: a closing route needs the other processes' answers and FINs before the
 *            barrier; a thread that ends with some open died with its sockets: worker.ts)
 *
 * A claim opens its route at most once (claims are never taken again: GENERAL for good), so every
 * route here has epoch 1 and a claim's socket is named by its entry (Device #claimSocketName).
 */
import { waitAsync } from '../util/index.ts';
import { CLAIM_ENTRIES, claimHash } from './claim-table.ts';
import { ROUTE_STATE, routeEpoch, routeState, routeUsers, routeWord, MAX_ROUTE_USERS, type RouteState } from './route-table.ts';

/** Words of one mirror entry. */
const M = { ROUTE: 0, KEY: 1, TAG: 2, WORDS: 4 } as const;
const HEADER_WORDS = 2;

export class ClaimRouteTable {
  readonly processCount: number;
  readonly threads: number;
  readonly #w: Int32Array;
  readonly #mirror: number;
  readonly #closed: number;
  readonly #open: number;

  static bytesFor(processCount: number, threads: number): number {
    return (HEADER_WORDS + processCount * CLAIM_ENTRIES * M.WORDS + CLAIM_ENTRIES * (1 + processCount) + threads) * 4;
  }

  /** A view of `buffer` (ClaimRouteTable.bytesFor(processCount, threads) bytes, zeroed when new). */
  constructor(buffer: SharedArrayBuffer, processCount: number, threads: number) {
    if (buffer.byteLength < ClaimRouteTable.bytesFor(processCount, threads)) throw new RangeError(`claim route table needs ${ClaimRouteTable.bytesFor(processCount, threads)} bytes, got ${buffer.byteLength}`);
    this.processCount = processCount;
    this.threads = threads;
    this.#w = new Int32Array(buffer);
    this.#mirror = HEADER_WORDS;
    this.#closed = this.#mirror + processCount * CLAIM_ENTRIES * M.WORDS;
    this.#open = this.#closed + CLAIM_ENTRIES * (1 + processCount);
  }

  // --- the other processes' claim routes -----------------------------------------------

  /**
   * Records remote process `q`'s announcement for its claim entry `entry` of (local endpoint
   * `local` of q, `ctx`, `tag`): the new route word, or -1 when ignored (an older epoch, or a state
   * the epoch already reached: announcements may reach this process's threads in any order). A
   * close keeps the users, whose count is then final (routeUsers of the returned word).
   */
  setRoute(q: number, entry: number, local: number, ctx: number, tag: number, epoch: number, state: RouteState): number {
    const w = this.#w;
    const at = this.#at(q, entry);
    // The key before the word: a sender that loads an open word finds its key written.
    Atomics.store(w, at + M.KEY, ((local << 16) | ctx) + 1);
    Atomics.store(w, at + M.TAG, tag);
    for (;;) {
      const old = Atomics.load(w, at + M.ROUTE);
      const oldEpoch = routeEpoch(old);
      if (epoch < oldEpoch || (epoch === oldEpoch && state <= routeState(old))) return -1;
      const word = routeWord(epoch, state, epoch === oldEpoch ? routeUsers(old) : 0);
      if (Atomics.compareExchange(w, at + M.ROUTE, old, word) === old) return word;
    }
  }

  /** The route word of remote process `q`'s claim entry `entry` (ROUTE_STATE.NONE until announced). */
  route(q: number, entry: number): number {
    return Atomics.load(this.#w, this.#at(q, entry) + M.ROUTE);
  }

  /** Remote process `q`'s announced claim entry for (its local endpoint `local`, ctx, tag), or -1: one hashed probe, no lock. */
  find(q: number, local: number, ctx: number, tag: number): number {
    const w = this.#w;
    const key = ((local << 16) | ctx) + 1;
    let i = claimHash((local << 16) | ctx, tag);
    for (let n = 0; n < CLAIM_ENTRIES; n++) {
      const at = this.#at(q, i);
      const k = Atomics.load(w, at + M.KEY);
      if (k === 0) return -1;
      if (k === key && Atomics.load(w, at + M.TAG) === tag) return i;
      i = (i + 1) & (CLAIM_ENTRIES - 1);
    }
    return -1;
  }

  /**
   * A thread of this process joins the route of `q`'s claim `entry` in `epoch` (each join is one
   * user, and one FIN when it leaves): one more user, only while it is open there and has fewer
   * than MAX_ROUTE_USERS (false: the thread stays on the engine path).
   */
  registerUser(q: number, entry: number, epoch: number): boolean {
    const w = this.#w;
    const at = this.#at(q, entry) + M.ROUTE;
    for (;;) {
      const old = Atomics.load(w, at);
      if (routeEpoch(old) !== epoch || routeState(old) !== ROUTE_STATE.OPEN) return false;
      const users = routeUsers(old);
      if (users === MAX_ROUTE_USERS) return false;
      if (Atomics.compareExchange(w, at, old, routeWord(epoch, ROUTE_STATE.OPEN, users + 1)) === old) return true;
    }
  }

  #at(q: number, entry: number): number {
    if (q < 0 || q >= this.processCount || entry < 0 || entry >= CLAIM_ENTRIES) throw new RangeError(`claim route (${q}, ${entry}) is outside 0..${this.processCount - 1} x 0..${CLAIM_ENTRIES - 1}`);
    return this.#mirror + (q * CLAIM_ENTRIES + entry) * M.WORDS;
  }

  // --- this process's claim routes -------------------------------------------------------

  /** A route of thread `thread`'s claims opened (+1) or finished closing (-1). */
  addOpen(thread: number, delta: number): void {
    Atomics.add(this.#w, this.#openAt(thread), delta);
  }

  /** This process's claim routes open or closing, over every thread: MPI.finalize waits for 0. */
  openCount(): number {
    let n = 0;
    for (let t = 0; t < this.threads; t++) n += Atomics.load(this.#w, this.#open + t);
    return n;
  }

  /** Thread `thread` has ended: how many of its claims' routes it left open (its sockets died with it), now forgotten. */
  takeOpenOf(thread: number): number {
    return Atomics.exchange(this.#w, this.#openAt(thread), 0);
  }

  #openAt(thread: number): number {
    if (thread < 0 || thread >= this.threads) throw new RangeError(`thread ${thread} is outside 0..${this.threads - 1}`);
    return this.#open + thread;
  }

  /** Process `process` recorded the close of this process's claim `entry` with `users` of its threads registered. */
  recordClosed(entry: number, process: number, users: number): void {
    const w = this.#w;
    const at = this.#closedAt(entry);
    Atomics.store(w, at + 1 + process, users + 1);
    Atomics.add(w, at, 1);
    Atomics.notify(w, at);
  }

  /** The users process `process` counted at claim `entry`'s close, or -1 before its answer. */
  closedUsers(entry: number, process: number): number {
    return Atomics.load(this.#w, this.#closedAt(entry) + 1 + process) - 1;
  }

  /** The counter of answers recorded for claim `entry`, to pass to closedAfter(). */
  closedChanges(entry: number): number {
    return Atomics.load(this.#w, this.#closedAt(entry));
  }

  /** Resolves once an answer for claim `entry` was recorded after `seen`; holds no event-loop reference. */
  closedAfter(entry: number, seen: number): Promise<void> {
    const p = waitAsync(this.#w, this.#closedAt(entry), seen);
    return p === null ? Promise.resolve() : p.then(() => undefined);
  }

  #closedAt(entry: number): number {
    if (entry < 0 || entry >= CLAIM_ENTRIES) throw new RangeError(`claim entry ${entry} is outside 0..${CLAIM_ENTRIES - 1}`);
    return this.#closed + entry * (1 + this.processCount);
  }
}
