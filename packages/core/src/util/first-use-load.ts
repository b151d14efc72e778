/**
 * A module loaded synchronously at its first use (ADR 0057: msgpackr at the first object message),
 * and what runs before it: every registered flush, which is how this thread's transports write
 * the frames they hold for their turn's flush (device-wiring.ts registers them).
 *
 * Why. A transport writes a turn's frames in one flush scheduled with process.nextTick, which runs
 * only once the microtask queue has drained. A blocking send completes with its frame in that
 * batch, and the program's continuation after `await comm.Send()` is a microtask: whatever it does
 * synchronously next runs before the flush. A load at first use is such a pause (msgpackr: ~10-30
 * ms, more on a loaded host): the ping-pong benchmark's allreduce right after its timed loop loaded
 * msgpackr while the responder's last reply waited in its batch, and that one round trip added ~10-20
 * µs to the mean of 1,000 (docs/notebook/performance-2026-11.md 4.68). Module state: each thread has
 * its own, as it has its own transports.
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
