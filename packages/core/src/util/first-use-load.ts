/**
 * A module loaded synchronously at its first use (ADR 0057: msgpackr at the first object message),
 * and what runs before it: every registered flush, which is how this thread's transports write
 * the frames they hold for their turn's flush (device-wiring.ts registers them).
 *
 * Why. A transport writes the frames queued in one synchronous stretch of code in one flush, at the
 * next microtask (docs/adr/0061). A load at first use inside that stretch (msgpackr: ~10-30 ms, more
 * on a loaded host), for example an object `isend` right after a buffer `Isend`, would hold the
 * frames queued before it for that long; when the flush ran at process.nextTick it held the reply a
 * benchmark's peer waited for (docs/notebook/performance-2026-11.md 4.68). Module state: each thread
 * has its own, as it has its own transports.
 */

/** Flushes run before each first-use load, in the order they were registered. */
const flushes = new Set<() => void>();

/**
 * Runs `flush` before each load at first use on this thread, until the returned function removes it.
 * @param flush - writes what this thread's transports hold now (it must not throw)
 * @returns the removal
 */
export function flushBeforeFirstUseLoads(flush: () => void): () => void {
  flushes.add(flush);
  return () => {
    flushes.delete(flush);
  };
}

/**
 * Runs the registered flushes, then `load`.
 * @param load - the synchronous load (a require)
 * @returns what `load` returns
 */
export function loadAtFirstUse<T>(load: () => T): T {
  for (const flush of flushes) flush();
  return load();
}
