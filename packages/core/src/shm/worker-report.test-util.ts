/**
 * Tests of a lock whose holder died run the spinning side in a real worker thread, so that a
 * lock() that misses the dead holder fails the test after a bound instead of hanging the whole
 * run. This waits for that worker's report.
 *
 * Two bounds, because the worker's start-up is not what is tested: it registers tsx and loads its
 * modules from source, which takes 0.25-0.37 s of CPU but measured 8.6-25 s of wall time at load
 * average 41-46 on this 2-core machine (2026-11-29, `node` + tsx + shared-state.ts alone); CI runs at
 * load 40-70, so 25 s x 70/46 = 38 s, and WORKER_START_MS gives three times that. The hang bound
 * (the caller's) counts only from the worker's first message, sent once it has started, when the
 * lock's look at the holder fires within milliseconds. With one 10 s bound for both, CI-like load
 * failed these tests on start-up alone, a live holder's included.
 */
import type { Worker } from 'node:worker_threads';

/** How long a test worker may take to start (register tsx, load its modules) before its first message: see the header. */
export const WORKER_START_MS = 120_000;

/**
 * Resolves with the first message of `w` that `isReport` accepts; any other message is a sign the
 * worker is spinning, and runs `onSpinning` 50 ms later (the lock must be contended when the test
 * changes its holder). Rejects if no message came within WORKER_START_MS, with `hungMessage` if the
 * report did not come within `hangMs` of the first message, or with the worker's error. The worker
 * is terminated either way, unless `terminate` is false (a worker the test still needs).
 */
export async function workerReport<T>(
  w: Worker, isReport: (m: unknown) => m is T, hangMs: number, hungMessage: string, onSpinning: () => void = () => undefined, { terminate = true } = {},
): Promise<T> {
  try {
    return await new Promise<T>((resolve, reject) => {
      let timer = setTimeout(() => reject(new Error(`the worker sent nothing within ${WORKER_START_MS} ms of its start: it never started`)), WORKER_START_MS);
      let hasStarted = false;
      w.on('message', (m: unknown) => {
        if (!hasStarted) {
          hasStarted = true;
          clearTimeout(timer);
          timer = setTimeout(() => reject(new Error(hungMessage)), hangMs);
        }
        if (!isReport(m)) {
          setTimeout(onSpinning, 50);
          return;
        }
        clearTimeout(timer);
        resolve(m);
      });
      w.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  } finally {
    if (terminate) await w.terminate();
  }
}
