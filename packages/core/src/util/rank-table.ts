/**
 * A map from a rank (a small integer, 0..size-1) to a value, for per-target state that a hot
 * call adds and removes every time (a window's lock epochs, its unconfirmed targets).
 *
 * Why not a Map or a Set: V8 reallocates a Map's or Set's hash table when a delete leaves it a
 * quarter full, so a collection that goes from one entry to none allocates a fresh table on every
 * delete (152 bytes for a Map, 120 for a Set, measured on Node 20), and one that keeps a few
 * entries rehashes every few deletes to drop the holes. A lock/Put/unlock epoch did that three
 * times per call (issue 40). This table is an array indexed by rank that only grows, so adding
 * and removing an entry allocates nothing once the array reaches the highest rank used.
 *
 * Keys come back in ascending rank order (not insertion order); no caller depends on the order.
 */
export class RankTable<V> {
  /** values[rank], undefined where absent; grown with undefined up to the highest rank set. */
  readonly #values: (V | undefined)[] = [];
  #size = 0;

  /** Entries present. */
  get size(): number {
    return this.#size;
  }

  has(rank: number): boolean {
    return this.#values[rank] !== undefined;
  }

  get(rank: number): V | undefined {
    return this.#values[rank];
  }

  /** Sets `rank`'s value; `value` must not be undefined (undefined marks an absent entry). */
  set(rank: number, value: V): void {
    const values = this.#values;
    while (values.length <= rank) values.push(undefined);
    if (values[rank] === undefined) this.#size++;
    values[rank] = value;
  }

  /** Removes `rank`'s entry; true when there was one. */
  delete(rank: number): boolean {
    const values = this.#values;
    if (rank >= values.length || values[rank] === undefined) return false;
    values[rank] = undefined;
    this.#size--;
    return true;
  }

  /** The ranks present, ascending (a fresh array: the caller may change the table while using it). */
  keys(): number[] {
    const out: number[] = [];
    const values = this.#values;
    for (let r = 0; r < values.length; r++) if (values[r] !== undefined) out.push(r);
    return out;
  }
}
