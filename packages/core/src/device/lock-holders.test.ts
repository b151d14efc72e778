// SharedState as the LockHolders of the process's spin locks (docs/RELIABILITY.md section 5): its
// ended table, the error naming the lock and the thread, and, in a real worker thread, the request
// table's lock held by a thread that ended (ERR_PROC_FAILED, the lock not taken), by one that was
// terminated with nobody to mark it (the kernel says it is gone), or by a live one that releases it
// (taken). shm/spin-lock.test.ts tests SpinLocks alone. A dead holder is only ever
// tested from another thread: in the test's own thread, a lock() that failed to notice it would spin
// where no timeout can end it.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ERR_PROC_FAILED, MPIError } from '../util/index.ts';
import { SharedState } from './shared-state.ts';
import { WORKER_START_MS, workerReport } from '../shm/worker-report.test-util.ts';

const SHARED_STATE_URL = new URL('./shared-state.ts', import.meta.url).href;
const SPIN_LOCK_URL = new URL('../shm/spin-lock.ts', import.meta.url).href;
/** How long a started worker may spin before the test calls it a hang (the ended check fires within milliseconds). */
const HANG_MS = 10_000;

/**
 * Worker body (plain JS, evaluated): registers tsx, attaches the shared state, names itself with
 * statistics row 7, says it is about to spin, then takes one request slot (the request table's
 * lock) and reports either the slot count it got or the error it threw.
 */
const WORKER_SOURCE = `
import('node:worker_threads').then(async ({ parentPort, workerData }) => {
  const { register } = await import('tsx/esm/api');
  register();
  const { SharedState } = await import(workerData.sharedStateUrl);
  const { setLockHolder } = await import(workerData.spinLockUrl);
  const shared = SharedState.attach(workerData.buffers);
  setLockHolder(7);
  parentPort.postMessage({ type: 'spinning' });
  try {
    const got = shared.table.takeBatch([], 1);
    parentPort.postMessage({ type: 'took', got });
  } catch (e) {
    parentPort.postMessage({ type: 'threw', name: e.name, errorClass: e.errorClass, message: e.message });
  }
});
`;

/**
 * Holder body (plain JS, evaluated): attaches the shared state, starts statistics row 5 as its own
 * (markStarted: its kernel id), takes the request table's lock as worker thread 5 and keeps it,
 * computing until it is terminated.
 */
const HOLDER_SOURCE = `
import('node:worker_threads').then(async ({ parentPort, workerData }) => {
  const { register } = await import('tsx/esm/api');
  register();
  const { SharedState } = await import(workerData.sharedStateUrl);
  const shared = SharedState.attach(workerData.buffers);
  shared.markStarted(5);
  Atomics.store(new Int32Array(workerData.buffers.slotFree), workerData.lockIndex, 6);
  parentPort.postMessage({ type: 'holding' });
  for (;;);
});
`;

function multithreadedState(): SharedState {
  return SharedState.create({
    processCount: 2, endpointsPerProcess: 1, channels: 2, matching: 'parallel', requestSlots: 1024, multithreaded: true, blockedSlotBytes: 4,
  });
}

/** The request table's lock word (request-table.ts: the word after the free stack). */
function tableLockWord(shared: SharedState): { cells: Int32Array; index: number } {
  return { cells: new Int32Array(shared.buffers.slotFree), index: shared.table.capacity + 1 };
}

type Outcome = { type: 'took'; got: number } | { type: 'threw'; name: string; errorClass: number; message: string };

/**
 * Starts a worker that takes the request table's lock; once it spins, runs `whileSpinning`. Resolves
 * with what the worker reported, or rejects HANG_MS after it spins with a message that says it hung.
 */
function contend(shared: SharedState, whileSpinning: () => void): Promise<Outcome> {
  const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { sharedStateUrl: SHARED_STATE_URL, spinLockUrl: SPIN_LOCK_URL, buffers: shared.buffers } });
  return workerReport(w, (m): m is Outcome => (m as { type: string }).type !== 'spinning', HANG_MS, `the worker still spun on the lock after ${HANG_MS} ms: a dead holder was not detected`, whileSpinning);
}

describe('SharedState as LockHolders (one thread)', () => {
  it('SharedState names the lock and the thread, and marks the process failed', () => {
    const shared = multithreadedState();
    const names = [
      [1, 'the main thread'],
      [4, 'worker thread 3'],
      [66, 'channel engine 1'],
    ] as const;
    for (const [holder, name] of names) {
      const err = shared.heldByEnded('matching queues', holder) as MPIError;
      expect(err).toBeInstanceOf(MPIError);
      expect(err.errorClass).toBe(ERR_PROC_FAILED);
      expect(err.message).toContain(`the lock of the matching queues is held by ${name}, which ended without releasing it`);
    }
    expect(shared.failedClass()).toBe(ERR_PROC_FAILED);
  });

  it('a recycled row is live again once its new thread starts, and its next end gives another stamp', () => {
    const shared = multithreadedState();
    shared.markEnded(3);
    const first = shared.endedStamp(4);
    expect(first).not.toBe(0);
    expect(shared.endedStamp(4)).toBe(first); // the same ended thread, looked at twice
    shared.markStarted(3);
    expect(shared.endedStamp(4)).toBe(0);
    shared.markEnded(3);
    const second = shared.endedStamp(4);
    expect(second).not.toBe(0);
    expect(second).not.toBe(first); // the row's second thread: a spinner that saw the first must not take it for the same
  });
});

describe('the request table\'s lock with its holder in another thread (real worker threads)', () => {
  it('a worker spinning on a lock whose holder ends throws ERR_PROC_FAILED naming the lock and the thread', async () => {
    const shared = multithreadedState();
    const { cells, index } = tableLockWord(shared);
    Atomics.store(cells, index, 4); // worker thread 3 holds the request table's lock and never releases it
    const before = shared.table.inUse();
    const outcome = await contend(shared, () => shared.markEnded(3)); // its Worker's exit event
    expect(outcome).toMatchObject({ type: 'threw', name: 'MPIError', errorClass: ERR_PROC_FAILED });
    expect((outcome as { message: string }).message).toContain('the lock of the request table is held by worker thread 3, which ended without releasing it');
    expect(shared.failedClass()).toBe(ERR_PROC_FAILED);
    // Thrown before the lock was taken: the word still names the dead holder, and no slot left the table.
    expect(Atomics.load(cells, index)).toBe(4);
    expect(shared.table.inUse()).toBe(before);
  }, WORKER_START_MS + HANG_MS + 5_000);

  it('a worker spinning on a lock whose holder was terminated, which nobody marks ended, throws ERR_PROC_FAILED', async () => {
    // The main thread of a rank spinning on a lock while the holder's Worker is terminated: its 'exit'
    // event, which would mark the row, waits for the spinning thread's own event loop. Here nothing
    // marks it; the spinner must learn from the kernel that the holder's thread is gone.
    const shared = multithreadedState();
    const { cells, index } = tableLockWord(shared);
    const holder = new Worker(HOLDER_SOURCE, { eval: true, workerData: { sharedStateUrl: SHARED_STATE_URL, buffers: shared.buffers, lockIndex: index } });
    try {
      await workerReport(holder, (m): m is { type: 'holding' } => (m as { type: string }).type === 'holding', HANG_MS, 'the holder never took the lock', () => undefined, { terminate: false });
      expect(Atomics.load(cells, index)).toBe(6);
      expect(shared.endedStamp(6)).toBe(0); // running, computing
      const outcome = await contend(shared, () => void holder.terminate());
      expect(outcome).toMatchObject({ type: 'threw', name: 'MPIError', errorClass: ERR_PROC_FAILED });
      expect((outcome as { message: string }).message).toContain('the lock of the request table is held by worker thread 5, which ended without releasing it');
      expect(Atomics.load(cells, index)).toBe(6);
    } finally {
      await holder.terminate();
    }
  }, 2 * WORKER_START_MS + HANG_MS + 5_000);

  it('a worker spinning on a lock whose live holder releases it gets through', async () => {
    const shared = multithreadedState();
    const { cells, index } = tableLockWord(shared);
    Atomics.store(cells, index, 66); // channel engine 1 holds it, alive
    const outcome = await contend(shared, () => Atomics.store(cells, index, 0));
    expect(outcome).toEqual({ type: 'took', got: 1 });
    expect(Atomics.load(cells, index)).toBe(0);
    expect(shared.failedClass()).toBe(0);
  }, WORKER_START_MS + HANG_MS + 5_000);
});
