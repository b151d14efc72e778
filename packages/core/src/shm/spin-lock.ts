/**
 * A spin lock on one Int32 cell: compareExchange 0 -> holder id, store 0 to
 * release. For critical sections of a few dozen instructions (queue and
 * allocator updates) on any thread, including threads that own sockets and
 * must never sleep in Atomics.wait. `enabled` false turns it into nothing, for
 * a process where only one thread touches the structure.
 *
 * The word a thread writes names it (its holder id: its statistics row + 1,
 * set once per thread by setLockHolder), so a thread that finds the lock taken
 * knows who holds it. A thread can die inside a locked section without
 * running another instruction (worker.terminate(), out of memory) and never
 * release it: a contended lock() asks its LockHolders, every few thousand
 * spins, whether the holder has ended, and if so throws the error they give
 * instead of spinning forever (docs/RELIABILITY.md section 5). The lock is
 * not taken when it throws, so the structure stays as it was.
 */

/** What a contended lock asks about the thread that holds it (SharedState's table of ended threads). */
export interface LockHolders {
  /**
   * 0 while the thread with holder id `holder` runs; once it has ended (it will never release a lock
   * it holds), a number other than 0 that names that thread among all that have had the id, so a
   * thread that takes the id later gives another.
   */
  endedStamp(holder: number): number;
  /** The lock `lockName` is held by `holder`, which has ended: marks the process failed and returns the error to throw. */
  heldByEnded(lockName: string, holder: number): Error;
}

/**
 * This thread's holder id. Each worker thread has its own instance of this
 * module, so the value is per thread; 1 (statistics row 0, the main thread)
 * until the thread's Device sets it.
 */
let holderId = 1;

/**
 * Spins between two looks at whether the holder has ended: a spin is one compareExchange, a look
 * (LockHolders.endedStamp) a shared load and, where the kernel can say, one stat of the holder's thread.
 */
const SPINS_PER_LOOK = 4096;

/** Sets the id this thread writes when it takes a lock: its statistics row + 1 (never 0, the free value). */
export function setLockHolder(statsRow: number): void {
  holderId = statsRow + 1;
}

/** The id this thread writes when it takes a lock. */
export function lockHolder(): number {
  return holderId;
}

export class SpinLocks {
  readonly cells: Int32Array;
  readonly enabled: boolean;
  /** What the lock guards, for the error when its holder died ("matching queues", "request table", ...). */
  readonly name: string;
  readonly #holders: LockHolders | null;

  /** `holders` null: a contended lock spins until released, whoever holds it (single-threaded tests). */
  constructor(cells: Int32Array, enabled: boolean, name = 'spin lock', holders: LockHolders | null = null) {
    this.cells = cells;
    this.enabled = enabled;
    this.name = name;
    this.#holders = holders;
  }

  lock(i: number): void {
    if (!this.enabled) return;
    if (Atomics.compareExchange(this.cells, i, 0, holderId) !== 0) this.#spin(i);
  }

  unlock(i: number): void {
    if (!this.enabled) return;
    Atomics.store(this.cells, i, 0);
  }

  /**
   * Another thread holds cell i, for a few instructions unless it died there. A holder has died
   * holding the lock only if the cell still names it after it was seen ended: between the
   * compareExchange that read `held` and the look, a spinner can be descheduled for as long as the
   * holder takes to release the lock, finish and exit (a loaded machine: CI once failed a job so).
   * The second look must give the same stamp: ids are recycled, and between the two looks a new
   * thread with the id can start, take the lock (the cell names it), release it and end; its start
   * changes the stamp. With the same stamp no thread took the id between the looks, so the word
   * read between them was written by a thread that had ended.
   */
  #spin(i: number): void {
    const c = this.cells;
    const me = holderId;
    let spins = 0;
    for (;;) {
      const held = Atomics.compareExchange(c, i, 0, me);
      if (held === 0) return;
      if (++spins === SPINS_PER_LOOK) {
        spins = 0;
        const holders = this.#holders;
        if (holders === null) continue;
        const stamp = holders.endedStamp(held);
        if (stamp !== 0 && Atomics.load(c, i) === held && holders.endedStamp(held) === stamp) throw holders.heldByEnded(this.name, held);
      }
    }
  }
}
