/** thread-cpu.ts: work done on the main thread counts as the main thread's, a worker thread's as the other threads'. */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread, Worker } from 'node:worker_threads';
import { ownThreadCpuNs, threadCpu } from './thread-cpu.ts';

const HAS_SCHEDSTAT = existsSync(`/proc/self/task/${process.pid}/schedstat`);

/**
 * Spins the calling thread until it has spent `ms` more on a core by its own count
 * (/proc/thread-self/schedstat): a loaded machine only makes it take longer. What the
 * tests check is where threadCpu() puts that time. The worker runs the same loop from source.
 */
const SPIN_SOURCE = `
  const { readFileSync } = require('node:fs');
  const own = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  const spin = (ms) => { const t0 = own(); let x = 0; while (own() - t0 < ms * 1e6) x += Math.sqrt(x + 1); return x; };`;
const spinCpu = new Function('require', `${SPIN_SOURCE} return spin;`)(createRequire(import.meta.url)) as (ms: number) => number;

// The test must run on the process's main thread (vitest's forks pool) for "main" to mean this code.
describe.skipIf(!HAS_SCHEDSTAT || !isMainThread)('threadCpu', () => {
  it('ownThreadCpuNs counts the calling thread\'s own work', () => {
    const before = ownThreadCpuNs();
    spinCpu(50);
    const after = ownThreadCpuNs();
    expect(before).not.toBeNull();
    expect(after! - before!).toBeGreaterThanOrEqual(50e6);
  });

  it('counts work done on the main thread as the main thread\'s', () => {
    const before = threadCpu();
    spinCpu(50);
    const after = threadCpu();
    expect(after.mainNs - before.mainNs).toBeGreaterThanOrEqual(50e6);
  });

  it('counts a worker thread\'s work as the other threads\'', async () => {
    const before = threadCpu();
    const worker = new Worker(`${SPIN_SOURCE} require('node:worker_threads').parentPort.postMessage(spin(50));`, { eval: true });
    // Read while the worker still exists: a thread that has exited leaves /proc/self/task, and its time with it.
    const during = await new Promise<ReturnType<typeof threadCpu>>((resolve, reject) => {
      worker.once('message', () => resolve(threadCpu()));
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(during.otherNs - before.otherNs).toBeGreaterThanOrEqual(50e6);
  });
});
