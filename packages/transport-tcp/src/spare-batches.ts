/**
 * The batches a channel's socket has finished with, kept for reuse (channel-connection.ts): at
 * most two, together at most `maxBytes`.
 *
 * Why two: a socket's write completion reaches Node one event-loop turn after the kernel took
 * the last bytes (libuv runs write callbacks in the next turn's pending phase). A program that
 * answers within that turn, as a fence does once the target's notice arrives, queues its next
 * large frame while the batch of the frame before is still lent; the batch of the one before that
 * is free. With one spare such a frame found none in about one epoch in thirteen (1 MiB Put +
 * fence) and allocated 1.5 MiB, and the external memory made V8 run a mark-compact every ~180
 * epochs, the collector's threads taking a core from a polling rank (notebook 4.83).
 */
export class SpareBatches {
  readonly #maxBytes: number;
  readonly #kept: Buffer[] = [];

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Keeps `free` if it fits beside the others, or in place of a smaller one; else drops it. */
  give(free: Buffer): void {
    const kept = this.#kept;
    const other = kept.length === 0 ? 0 : kept[0]!.length;
    if (kept.length < 2) {
      if (free.length + other <= this.#maxBytes) kept.push(free);
      else if (free.length > other && free.length <= this.#maxBytes) kept[0] = free;
      return;
    }
    const small = kept[0]!.length <= kept[1]!.length ? 0 : 1;
    if (free.length > kept[small]!.length && free.length + kept[1 - small]!.length <= this.#maxBytes) kept[small] = free;
  }

  /** The smallest kept batch of at least `need` bytes, no longer kept; or null. */
  take(need: number): Buffer | null {
    const kept = this.#kept;
    let best = -1;
    for (let i = 0; i < kept.length; i++) {
      if (kept[i]!.length >= need && (best < 0 || kept[i]!.length < kept[best]!.length)) best = i;
    }
    return best < 0 ? null : kept.splice(best, 1)[0]!;
  }

  /** The largest kept batch, no longer kept; or null. */
  takeLargest(): Buffer | null {
    const kept = this.#kept;
    if (kept.length === 0) return null;
    const i = kept.length === 2 && kept[1]!.length > kept[0]!.length ? 1 : 0;
    return kept.splice(i, 1)[0]!;
  }
}
