/**
 * A futex-style mutex over one Int32 cell of a SharedArrayBuffer.
 *
 * Source: U. Drepper, "Futexes Are Tricky" (2011), section 6 ("mutex3"): the
 * cell holds 0 (unlocked), 1 (locked, nobody waiting) or 2 (locked, maybe
 * waiters). Only a contended lock or unlock touches Atomics.wait/notify.
 *
 * ```
 *             compareExchange(0 -> 1)
 *   0 unlocked ----------------------> 1 locked
 *       ^  ^                             |  a contender exchanges in 2,
 *       |  |  unlock: sub 1 gives 0      v  then sleeps while the cell is 2
 *       |  +---------------------------- 1
 *       |     unlock: sub 1 gives 1 -> store 0, notify one
 *       +------------------------------- 2 locked, waiters
 * ```
 *
 * Threads and waiting:
 * - `lockSync()` spins, then sleeps in `Atomics.wait`. Use it only on threads
 *   whose event loop may stop (workers that own no sockets), or for critical
 *   sections known to be a few instructions long everywhere.
 * - `runLockedAsync(section)` sleeps in `Atomics.waitAsync`, so the event loop
 *   keeps running: use it on threads that own sockets or timers. It takes the
 *   mutex, runs `section` and releases it in one synchronous run of the thread.
 * - `tryLock()` never waits: for pollers (a `test()` that must not block).
 *
 * Why there is no `await lock()`: a promise that resolves once the caller holds
 * the mutex hands it over across at least one microtask turn. Code of the same
 * thread that runs in between and calls lockSync sleeps in Atomics.wait for a
 * holder that can run only after it: the thread never turns its event loop
 * again. So the mutex is held only inside synchronous code.
 *
 * Never mix the two waits on one mutex in one thread: a thread with a pending
 * runLockedAsync that then sleeps in lockSync may have the holder's single
 * notify delivered to its own async waiter, which cannot run while the thread
 * sleeps (comm/context-id-mask.ts: why a context-id free takes no lock).
 *
 * Node caveat: a pending `Atomics.waitAsync` does not keep the event loop alive
 * (a worker waiting only on it exits), so a contended `runLockedAsync()` holds a
 * ref'd timer until it owns the mutex.
 *
 * Invariants: the mutex is not reentrant and not owner-checked; `unlock()` must
 * be called exactly once by the thread that locked it, before that thread
 * awaits anything. Any number of Mutex objects (one per thread) may wrap the
 * same cell.
 */

import { waitAsync } from '../util/index.ts';

const UNLOCKED = 0;
const LOCKED = 1;
const CONTENDED = 2;


/** Period of the keep-alive timer of a contended runLockedAsync; it never needs to fire. */
const KEEP_ALIVE_MS = 1 << 30;
function keepAliveTick(): void {}

/** Spins before `lockSync()` sleeps: long enough to cover a short critical section on another core. */
const DEFAULT_SPINS = 100;

/** A mutex over `cells[index]` (an Int32Array over a SharedArrayBuffer); the cell starts at 0. */
export class Mutex {
  readonly #cells: Int32Array;
  readonly #index: number;

  /**
   * Wraps an existing cell; several threads wrap the same cell to share the mutex.
   * @param cells an Int32Array over a SharedArrayBuffer; the cell must start at 0 (unlocked)
   * @param index the cell's index in `cells` (default 0)
   */
  constructor(cells: Int32Array, index = 0) {
    if (!(cells.buffer instanceof SharedArrayBuffer)) throw new TypeError('Mutex: cells must be a view of a SharedArrayBuffer');
    if (!Number.isInteger(index) || index < 0 || index >= cells.length) throw new RangeError(`Mutex: index ${index} is outside the cells (length ${cells.length})`);
    this.#cells = cells;
    this.#index = index;
  }

  /** A mutex in a fresh one-cell SharedArrayBuffer (tests; hand `cells` to other threads to share it). */
  static create(): Mutex {
    return new Mutex(new Int32Array(new SharedArrayBuffer(4)));
  }

  /** The cell array, to send to another thread (which builds `new Mutex(cells, index)`). */
  get cells(): Int32Array {
    return this.#cells;
  }

  /** The cell's index in `cells`. */
  get index(): number {
    return this.#index;
  }

  /** True while some thread holds the mutex (a snapshot, for diagnostics and tests). */
  get isLocked(): boolean {
    return Atomics.load(this.#cells, this.#index) !== UNLOCKED;
  }

  /** Takes the mutex if it is free; never waits. @returns true when the caller now holds it. */
  tryLock(): boolean {
    return Atomics.compareExchange(this.#cells, this.#index, UNLOCKED, LOCKED) === UNLOCKED;
  }

  /**
   * Takes the mutex, spinning `spins` times and then sleeping in Atomics.wait.
   * Blocks the thread's event loop while it waits (see the file header).
   * @param spins tryLock attempts before sleeping (default 100)
   */
  lockSync(spins = DEFAULT_SPINS): void {
    const cells = this.#cells;
    const i = this.#index;
    for (let n = 0; n < spins; n++) {
      if (Atomics.compareExchange(cells, i, UNLOCKED, LOCKED) === UNLOCKED) return;
    }
    let c = Atomics.compareExchange(cells, i, UNLOCKED, LOCKED);
    if (c === UNLOCKED) return;
    if (c !== CONTENDED) c = Atomics.exchange(cells, i, CONTENDED);
    while (c !== UNLOCKED) {
      Atomics.wait(cells, i, CONTENDED);
      c = Atomics.exchange(cells, i, CONTENDED);
    }
  }

  /**
   * Runs `section` holding the mutex, without blocking the event loop: a contended caller
   * sleeps in Atomics.waitAsync. The mutex is taken, `section` runs and the mutex is released
   * in one synchronous run of this thread, so no other code of this thread ever runs while it
   * holds the mutex (see the file header).
   * @param section synchronous code; it must not wait for the mutex itself
   * @returns a promise of section's result; it rejects with what section threw (the mutex released)
   */
  runLockedAsync<T>(section: () => T): Promise<T> {
    if (Atomics.compareExchange(this.#cells, this.#index, UNLOCKED, LOCKED) !== UNLOCKED) return this.#runContendedAsync(section);
    try {
      return Promise.resolve(section());
    } catch (err) {
      return Promise.reject(err);
    } finally {
      this.unlock();
    }
  }

  async #runContendedAsync<T>(section: () => T): Promise<T> {
    const cells = this.#cells;
    const i = this.#index;
    // A pending Atomics.waitAsync does not keep a Node event loop alive (Node 20: a
    // worker whose only pending work is this wait exits mid-loop with code 0), so a
    // ref'd timer holds the loop open while we wait. Contended path only.
    const keepAlive = setInterval(keepAliveTick, KEEP_ALIVE_MS);
    try {
      let c = Atomics.exchange(cells, i, CONTENDED);
      while (c !== UNLOCKED) {
        const waited = waitAsync(cells, i, CONTENDED);
        if (waited !== null) await waited;
        c = Atomics.exchange(cells, i, CONTENDED);
      }
    } finally {
      clearInterval(keepAlive);
    }
    // Held from the exchange above: no await until the unlock.
    try {
      return section();
    } finally {
      this.unlock();
    }
  }

  /** Releases the mutex and wakes one waiter if there may be any. */
  unlock(): void {
    const cells = this.#cells;
    const i = this.#index;
    if (Atomics.sub(cells, i, 1) !== LOCKED) {
      Atomics.store(cells, i, UNLOCKED);
      Atomics.notify(cells, i, 1);
    }
  }
}
