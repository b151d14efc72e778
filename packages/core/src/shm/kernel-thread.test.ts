// kernel-thread.ts on this machine's procfs (Linux): each thread has its own kernel id, a running
// thread is not gone, and a terminated worker's thread is gone once the kernel removed it, even
// while the thread that asks never turns its event loop (the case the spin locks need).
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { waitAsync } from '../util/index.ts';
import { isKernelThreadGone, kernelThreadId } from './kernel-thread.ts';

/** Worker body: publishes its kernel id (the same call kernelThreadId makes), then computes until terminated. */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/')[2]);
Atomics.store(workerData, 0, tid);
Atomics.notify(workerData, 0);
for (;;);
`;

describe.runIf(process.platform === 'linux')('kernel thread ids (Linux procfs)', () => {
  it('names the calling thread, which is not gone; 0 is never gone', () => {
    const tid = kernelThreadId();
    expect(tid).toBeGreaterThan(0);
    expect(isKernelThreadGone(tid)).toBe(false);
    expect(isKernelThreadGone(0)).toBe(false);
  });

  it('a terminated worker thread is gone while the asking thread spins without its event loop', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: word });
    try {
      await waitAsync(word, 0, 0);
      const tid = Atomics.load(word, 0);
      expect(tid).not.toBe(kernelThreadId());
      expect(isKernelThreadGone(tid)).toBe(false);
      void w.terminate();
      // No await: this thread spins as a rank's main thread would, bounded so that a thread that never
      // goes fails the test instead of hanging it.
      const from = Date.now();
      while (!isKernelThreadGone(tid) && Date.now() - from < 10_000);
      expect(isKernelThreadGone(tid), `worker thread ${tid} still runs 10 s after terminate()`).toBe(true);
    } finally {
      await w.terminate();
    }
  }, 20_000);
});
