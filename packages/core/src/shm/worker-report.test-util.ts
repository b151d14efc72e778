/**
 * Tests of a lock whose holder died run the spinning side in a real worker thread, so that a
 * lock() that misses the dead holder fails the test after a bound instead of hanging the whole
 * run. This waits for that worker's report.
 */
import type { Worker } from 'node:worker_threads';

/**
 * Resolves with the first message of `w` that `isReport` accepts; any other message is a sign the
 * worker is spinning, and runs `onSpinning` 50 ms later (the lock must be contended when the test
 * changes its holder). Rejects with `hungMessage` after `hangMs`, or with the worker's error. The
 * worker is terminated either way, unless `terminate` is false (a worker the test still needs).
 */
export async function workerReport<T>(
  w: Worker, isReport: (m: unknown) => m is T, hangMs: number, hungMessage: string, onSpinning: () => void = () => undefined, { terminate = true } = {},
): Promise<T> {
  try {
    return await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(hungMessage)), hangMs);
      w.on('message', (m: unknown) => {
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
