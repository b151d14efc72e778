/**
 * A spin lock on one Int32 cell: compareExchange 0 -> 1, store 0 to release.
 * For critical sections of a few dozen instructions (queue and allocator
 * updates) on any thread, including threads that own sockets and must never
 * sleep in Atomics.wait. `enabled` false turns it into nothing, for a process
 * where only one thread touches the structure.
 */
export class SpinLocks {
  readonly cells: Int32Array;
  readonly enabled: boolean;

  constructor(cells: Int32Array, enabled: boolean) {
    this.cells = cells;
    this.enabled = enabled;
  }

  lock(i: number): void {
    if (!this.enabled) return;
    const c = this.cells;
    while (Atomics.compareExchange(c, i, 0, 1) !== 0) {
      // another thread holds it for a few instructions
    }
  }

  unlock(i: number): void {
    if (!this.enabled) return;
    Atomics.store(this.cells, i, 0);
  }
}
