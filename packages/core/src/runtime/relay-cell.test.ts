// The relay cell in one thread: two views of one buffer stand for the origin and the waiting thread
// (packages/core/test/threads.it.test.ts drives it across real threads through MPI.revive).
import { describe, expect, it } from 'vitest';
import { ERR_OTHER, SUCCESS, waitAsync } from '../util/index.ts';
import { RelayCell } from './relay-cell.ts';

const STATUS = { source: 3, tag: 7, count: 5, error: SUCCESS, cancelled: false };

describe('RelayCell', () => {
  it('carries the status and the value to another view of the same buffer, and wakes its waiter', async () => {
    const origin = RelayCell.create();
    const waiter = new RelayCell(origin.buffer);
    const done = waiter.whenDone();
    expect(done, 'a pending cell can be waited on').not.toBeNull();
    expect(waiter.isDone).toBe(false);
    origin.fill(STATUS, () => ({ value: { a: [1, 2, 3], s: 'x'.repeat(1000) } }));
    await done;
    expect(waiter.isDone).toBe(true);
    expect(waiter.status()).toEqual(STATUS);
    expect(waiter.content()).toEqual({ value: { a: [1, 2, 3], s: 'x'.repeat(1000) } });
    expect(waiter.whenDone(), 'a filled cell has nothing to wait for').toBeNull();
  });

  it('carries ERR_OTHER and the reason when the value cannot be produced', () => {
    const origin = RelayCell.create();
    origin.fill(STATUS, () => {
      throw new Error('no way');
    });
    const waiter = new RelayCell(origin.buffer);
    expect(waiter.status().error).toBe(ERR_OTHER);
    expect(waiter.content().message).toMatch(/could not be relayed to another thread: Error: no way/);
  });

  it('asks the origin to cancel while pending, and not once filled', async () => {
    const pending = RelayCell.create();
    const cancelled = new Promise<void>((resolve) => pending.watchCancel(resolve));
    new RelayCell(pending.buffer).requestCancel();
    await cancelled; // a hang here (test timeout) means the cancel never reached the origin

    const filled = RelayCell.create();
    let late = 0;
    filled.watchCancel(() => late++);
    // Queued behind the watch on the CANCEL word (index 1): once it wakes, the watch has run.
    const afterWatch = waitAsync(new Int32Array(filled.buffer, 0, 8), 1, 0);
    filled.fill(STATUS, () => ({ value: 1 }));
    new RelayCell(filled.buffer).requestCancel();
    await afterWatch;
    await Promise.resolve();
    expect(late, 'filling closes the cancel watch').toBe(0);
  });
});
