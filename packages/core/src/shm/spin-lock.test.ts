// SpinLocks alone (docs/RELIABILITY.md section 5): the word a thread writes names it (its holder id),
// and a contended lock() in a real worker thread throws its LockHolders' error once the holder has
// ended, without taking the lock, or gets through once a live holder releases it. A dead holder is
// only ever tested from another thread: in the test's own thread, a lock() that failed to notice it
// would spin where no timeout can end it. device/lock-holders.test.ts tests SharedState's holders.
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { SpinLocks, lockHolder, setLockHolder, type LockHolders } from './spin-lock.ts';
import { WORKER_START_MS, workerReport } from './worker-report.test-util.ts';

const SPIN_LOCK_URL = new URL('./spin-lock.ts', import.meta.url).href;
/** How long a started worker may spin before the test calls it a hang (the ended check fires within milliseconds). */
const HANG_MS = 10_000;

/**
 * Worker body (plain JS, evaluated): registers tsx, takes holder id 8 (row 7), says it is about to
 * spin, then takes lock 0 of `cells` with LockHolders over the shared `ended` table (one word per
 * row) and reports what it saw: taken (and its word), or the error it threw.
 */
const WORKER_SOURCE = `
import('node:worker_threads').then(async ({ parentPort, workerData }) => {
  const { register } = await import('tsx/esm/api');
  register();
  const { SpinLocks, setLockHolder } = await import(workerData.spinLockUrl);
  const { cells, ended } = workerData;
  const holders = {
    endedStamp: (holder) => Atomics.load(ended, holder - 1),
    heldByEnded: (lockName, holder) => new Error(lockName + ' held by ' + holder),
  };
  const locks = new SpinLocks(cells, true, 'test lock', holders);
  setLockHolder(7);
  parentPort.postMessage({ type: 'spinning' });
  try {
    locks.lock(0);
    const word = Atomics.load(cells, 0);
    locks.unlock(0);
    parentPort.postMessage({ type: 'took', word });
  } catch (e) {
    parentPort.postMessage({ type: 'threw', message: e.message });
  }
});
`;

type Outcome = { type: 'took'; word: number } | { type: 'threw'; message: string };

/** Runs the worker on lock 0 of `cells`; once it spins, runs `whileSpinning`. Rejects HANG_MS after that, saying it hung. */
function contend(cells: Int32Array, ended: Int32Array, whileSpinning: () => void): Promise<Outcome> {
  const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { spinLockUrl: SPIN_LOCK_URL, cells, ended } });
  return workerReport(w, (m): m is Outcome => (m as { type: string }).type !== 'spinning', HANG_MS, `the worker still spun on the lock after ${HANG_MS} ms: a dead holder was not detected`, whileSpinning);
}

function sharedInts(n: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(n * 4));
}

describe('SpinLocks holder ids (one thread)', () => {
  afterEach(() => setLockHolder(0));

  it('the uncontended path writes this thread\'s holder id (statistics row + 1), unlock writes 0', () => {
    const locks = new SpinLocks(new Int32Array(2), true, 'test lock');
    expect(lockHolder()).toBe(1); // the main thread's row 0 until a Device sets it
    setLockHolder(65); // channel engine 1
    locks.lock(1);
    expect(Array.from(locks.cells)).toEqual([0, 66]);
    locks.unlock(1);
    expect(Array.from(locks.cells)).toEqual([0, 0]);
  });

  it('a disabled lock writes nothing', () => {
    const locks = new SpinLocks(new Int32Array(1), false, 'test lock');
    locks.lock(0);
    expect(locks.cells[0]).toBe(0);
  });
});

describe('SpinLocks: a holder seen ended had released the lock first (one thread, scripted holders)', () => {
  afterEach(() => setLockHolder(0));

  /**
   * A lock word held by worker thread 12 (holder id 13) and the lock call of a spinner (the main thread) on it,
   * with LockHolders whose i-th endedStamp call runs step i (what the other threads did meanwhile) and returns its answer.
   */
  function heldBy13(steps: (() => number)[]): { cells: Int32Array; lock: () => void; looks: () => number } {
    const cells = sharedInts(1);
    Atomics.store(cells, 0, 13);
    let n = 0;
    const holders: LockHolders = {
      endedStamp: () => steps[Math.min(n++, steps.length - 1)]!(),
      heldByEnded: (lockName, holder) => new Error(`${lockName} held by ${holder}`),
    };
    setLockHolder(0);
    return { cells, lock: () => new SpinLocks(cells, true, 'test lock', holders).lock(0), looks: () => n };
  }

  it('the holder released the lock and exited between the spinner\'s compareExchange and its look: the spinner takes it', () => {
    const { cells, lock, looks } = heldBy13([() => { Atomics.store(cells, 0, 0); return 1; }]);
    lock();
    expect(Atomics.load(cells, 0)).toBe(1);
    expect(looks()).toBe(1);
  });

  it('the ended holder\'s id was recycled and its new thread took the lock: the spinner waits for it', () => {
    const { cells, lock, looks } = heldBy13([
      () => 1, // the old thread with id 13 has ended; the new one starts and takes the lock
      () => 0, // second look: the new thread is alive
      () => { Atomics.store(cells, 0, 0); return 0; }, // a later look: it released the lock
    ]);
    lock();
    expect(Atomics.load(cells, 0)).toBe(1);
    expect(looks()).toBe(3);
  });

  it('between the two looks the recycled id\'s new thread took the lock, released it and ended: the spinner takes it', () => {
    // Seen ended both times, but not the same thread: only the stamp tells them apart.
    const { cells, lock, looks } = heldBy13([
      () => { Atomics.store(cells, 0, 13); return 1; }, // the old thread with id 13 has ended; after the look, a new one starts and takes the lock
      () => { Atomics.store(cells, 0, 0); return 2; }, // before the second look it released the lock and ended too
    ]);
    lock();
    expect(Atomics.load(cells, 0)).toBe(1);
    expect(looks()).toBe(2);
  });

  it('the holder ended holding the lock: seen ended twice with the same stamp, the spinner throws without taking it', () => {
    const { cells, lock, looks } = heldBy13([() => 1]);
    expect(lock).toThrow('test lock held by 13');
    expect(Atomics.load(cells, 0)).toBe(13);
    expect(looks()).toBe(2);
  });
});

describe('SpinLocks with the holder in another thread (real worker threads)', () => {
  it('a worker spinning on a lock whose holder ends throws the holders\' error, without taking the lock', async () => {
    const cells = sharedInts(1);
    const ended = sharedInts(72);
    Atomics.store(cells, 0, 4); // row 3 holds it and never releases it
    const outcome = await contend(cells, ended, () => Atomics.store(ended, 3, 1));
    expect(outcome).toEqual({ type: 'threw', message: 'test lock held by 4' });
    expect(Atomics.load(cells, 0)).toBe(4);
  }, WORKER_START_MS + HANG_MS + 5_000);

  it('a worker spinning on a lock whose live holder releases it takes it with its own holder id', async () => {
    const cells = sharedInts(1);
    const ended = sharedInts(72);
    Atomics.store(cells, 0, 66); // channel engine 1 holds it, alive
    const outcome = await contend(cells, ended, () => Atomics.store(cells, 0, 0));
    expect(outcome).toEqual({ type: 'took', word: 8 });
    expect(Atomics.load(cells, 0)).toBe(0);
  }, WORKER_START_MS + HANG_MS + 5_000);
});
