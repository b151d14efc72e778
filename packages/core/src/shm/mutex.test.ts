import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Mutex } from './mutex.ts';

const MUTEX_URL = new URL('./mutex.ts', import.meta.url).href;

/**
 * Worker body (plain JS, evaluated): registers tsx so it can import mutex.ts,
 * waits at a start line, then increments a plain (non-atomic) counter under the
 * lock `iterations` times. `mode` picks lockSync, runLockedAsync or a tryLock loop.
 */
const WORKER_SOURCE = `
import('node:worker_threads').then(async ({ parentPort, workerData }) => {
  const { register } = await import('tsx/esm/api');
  register();
  const { Mutex } = await import(workerData.mutexUrl);
  const { cells, iterations, mode } = workerData;
  const mutex = new Mutex(cells, 0);
  const counter = cells;            // cell 1: counter, cell 2: start line
  Atomics.add(counter, 3, 1);       // cell 3: ready count
  Atomics.wait(counter, 2, 0);
  const increment = (n) => {
    const v = counter[1];           // deliberately non-atomic read-modify-write
    if ((n & 63) === 0) for (let k = 0; k < 50; k++) counter[4] = k;   // widen the race window
    counter[1] = v + 1;
  };
  for (let n = 0; n < iterations; n++) {
    if (mode === 'async') {
      await mutex.runLockedAsync(() => increment(n));
      continue;
    }
    if (mode === 'sync') mutex.lockSync();
    else while (!mutex.tryLock()) {}
    increment(n);
    mutex.unlock();
  }
  parentPort.postMessage('done');
});
`;

async function contend(modes: readonly string[], iterations: number): Promise<number> {
  const cells = new Int32Array(new SharedArrayBuffer(8 * 4));
  const workers = modes.map(
    (mode) => new Worker(WORKER_SOURCE, { eval: true, workerData: { mutexUrl: MUTEX_URL, cells, iterations, mode } }),
  );
  const done = workers.map(
    (w) =>
      new Promise<void>((resolve, reject) => {
        w.once('message', () => resolve());
        w.once('error', reject);
        w.once('exit', (code) => reject(new Error(`worker exited (code ${code}) before it finished`)));
      }),
  );
  while (Atomics.load(cells, 3) < workers.length) await new Promise((r) => setTimeout(r, 5));
  Atomics.store(cells, 2, 1);
  Atomics.notify(cells, 2);
  try {
    await Promise.all(done);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  expect(Atomics.load(cells, 0)).toBe(0); // unlocked at the end
  return Atomics.load(cells, 1);
}

describe('Mutex (single thread)', () => {
  it('tryLock takes a free mutex once, unlock frees it', () => {
    const m = Mutex.create();
    expect(m.isLocked).toBe(false);
    expect(m.tryLock()).toBe(true);
    expect(m.isLocked).toBe(true);
    expect(m.tryLock()).toBe(false);
    m.unlock();
    expect(m.isLocked).toBe(false);
    expect(m.tryLock()).toBe(true);
    m.unlock();
  });

  it('lockSync on a free mutex returns at once', () => {
    const m = Mutex.create();
    m.lockSync();
    expect(m.isLocked).toBe(true);
    m.unlock();
  });

  it('runLockedAsync on a free mutex runs the section holding it and releases it before returning', async () => {
    const m = Mutex.create();
    let wasHeld = false;
    const result = m.runLockedAsync(() => {
      wasHeld = m.isLocked;
      return 7;
    });
    // Released in the same synchronous run: no other code of this thread can find it held (issue 34).
    expect([wasHeld, m.isLocked]).toEqual([true, false]);
    expect(await result).toBe(7);
  });

  it('runLockedAsync rejects with what the section threw, the mutex released', async () => {
    const m = Mutex.create();
    const boom = new Error('boom');
    await expect(m.runLockedAsync(() => { throw boom; })).rejects.toBe(boom);
    expect(m.isLocked).toBe(false);
    expect(m.tryLock()).toBe(true);
    const waiting = m.runLockedAsync(() => { throw boom; }); // the contended path too
    m.unlock();
    await expect(waiting).rejects.toBe(boom);
    expect(m.isLocked).toBe(false);
  });

  it('runLockedAsync waiters run their sections one at a time, in turn, as the mutex is released', async () => {
    const m = Mutex.create();
    expect(m.tryLock()).toBe(true); // as another thread would hold it
    const order: number[] = [];
    const waiters = [1, 2, 3].map((id) =>
      m.runLockedAsync(() => {
        expect(m.isLocked).toBe(true);
        order.push(id);
        return id;
      }),
    );
    await new Promise((r) => setTimeout(r, 10)); // timers run: the waiters sleep without blocking the loop
    expect(order).toEqual([]); // all three wait while the mutex is held
    m.unlock();
    expect(await Promise.all(waiters)).toEqual([1, 2, 3]);
    expect(order.sort()).toEqual([1, 2, 3]);
    expect(m.isLocked).toBe(false);
  });

  it('wraps a shared cell: two Mutex objects over one cell are one mutex', () => {
    const a = Mutex.create();
    const b = new Mutex(a.cells, a.index);
    expect(a.tryLock()).toBe(true);
    expect(b.tryLock()).toBe(false);
    b.unlock(); // any wrapper may release
    expect(a.tryLock()).toBe(true);
    a.unlock();
  });

  it('rejects a non-shared buffer and a bad index', () => {
    expect(() => new Mutex(new Int32Array(4))).toThrow(TypeError);
    expect(() => new Mutex(new Int32Array(new SharedArrayBuffer(4)), 1)).toThrow(RangeError);
  });
});

describe('Mutex (worker_threads contending)', () => {
  it('4 workers x 10,000 lockSync increments are exact', async () => {
    expect(await contend(['sync', 'sync', 'sync', 'sync'], 10_000)).toBe(40_000);
  });

  it('4 workers x 10,000 runLockedAsync increments are exact', async () => {
    expect(await contend(['async', 'async', 'async', 'async'], 10_000)).toBe(40_000);
  });

  it('mixed lockSync, runLockedAsync and tryLock workers: 4 x 10,000 increments are exact', async () => {
    expect(await contend(['sync', 'async', 'try', 'async'], 10_000)).toBe(40_000);
  });
});
