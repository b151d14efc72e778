/**
 * Scratch buffers of long-vector collectives, reused from call to call.
 *
 * Rabenseifner's allreduce on 8 MiB needs a 4 MiB scratch per call; allocated
 * fresh, each one is a large ArrayBuffer whose memory V8 reclaims only with a
 * full garbage collection, and those collections took more time than the
 * reductions (docs/notebook/performance-2026-11.md §4.6). A small per-thread free list keeps a
 * couple of buffers instead. Each borrower gets a buffer of its own, so
 * overlapping nonblocking collectives never share one.
 */

/** How many buffers a thread keeps between calls. */
const KEEP = 2;
/** Larger buffers are not kept: holding them would cost more memory than the reuse saves time. */
const KEEP_MAX_BYTES = 64 * 1024 * 1024;

const kept: Uint8Array[] = [];

/** A buffer of at least `bytes` bytes (contents undefined) for the caller alone, until giveBack. */
export function borrowScratch(bytes: number): Uint8Array {
  for (let i = 0; i < kept.length; i++) {
    const b = kept[i]!;
    if (b.length >= bytes) {
      kept.splice(i, 1);
      return b;
    }
  }
  return new Uint8Array(bytes);
}

/** Returns a buffer from borrowScratch; the caller must not use it afterwards. */
export function giveBackScratch(b: Uint8Array): void {
  if (b.length > KEEP_MAX_BYTES) return;
  if (kept.length < KEEP) {
    kept.push(b);
    return;
  }
  // Keep the larger ones: a thread that needs big scratch once tends to need it again.
  let smallest = 0;
  for (let i = 1; i < kept.length; i++) if (kept[i]!.length < kept[smallest]!.length) smallest = i;
  if (kept[smallest]!.length < b.length) kept[smallest] = b;
}
