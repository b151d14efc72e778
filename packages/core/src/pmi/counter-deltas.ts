/**
 * mpiexec --dashboard's traffic matrix, rank side: a sample carries only the
 * entries of the process's bytes-per-process vector that changed since the
 * previous sample (a job of a thousand processes whose rank talks to two
 * neighbours sends two pairs, not a thousand numbers). The entries are
 * totals, not differences, so a sample that got lost on its way costs
 * nothing but staleness until that entry changes again.
 */

/** Keeps the vector last sent; each call returns the [index, value] pairs that differ from it and remembers `now`. */
export class ChangedEntries {
  #last: number[] = [];

  take(now: readonly number[]): [number, number][] {
    const out: [number, number][] = [];
    const last = this.#last;
    for (let i = 0; i < now.length; i++) {
      const v = now[i]!;
      if (v !== (last[i] ?? 0)) out.push([i, v]);
    }
    this.#last = now.slice();
    return out;
  }
}
