import { afterEach, describe, expect, it } from 'vitest';
import { BULK_BYTES, beginWait, configureWaitPoll, endWait, noteRendezvous, stopWaitPoll, waitPolls } from './wait-poll.ts';
import { turns } from '../util/event-loop-turns.test-util.ts';

function setUp(budgetMs: number): { yields: () => number; clock: { ms: number } } {
  let count = 0;
  const clock = { ms: 0 };
  configureWaitPoll({ budgetMs, yieldCore: () => count++, now: () => clock.ms });
  return { yields: () => count, clock };
}

describe('wait-poll', () => {
  afterEach(async () => {
    stopWaitPoll();
    await turns(3); // let a queued turn see the stop
  });

  it('yields once per event-loop turn while a blocking call waits, and stops when it ends', async () => {
    const { yields } = setUp(20);
    expect(waitPolls()).toBe(true);
    beginWait();
    await turns(20);
    expect(yields()).toBeGreaterThanOrEqual(18);
    endWait();
    await turns(3);
    const after = yields();
    await turns(20);
    expect(yields()).toBe(after);
  });

  it('spins the first spinTurns turns of each blocking call without yielding (poll-policy.ts)', async () => {
    let count = 0;
    configureWaitPoll({ budgetMs: 20, yieldCore: () => count++, now: () => 0, spinTurns: 10 });
    beginWait();
    await turns(8);
    expect(count, 'no yield within the first turns').toBe(0);
    await turns(20);
    expect(count, 'every turn yields after the spin turns').toBeGreaterThanOrEqual(10);
    endWait();
    // A new blocking call spins again first.
    const before = count;
    beginWait();
    await turns(5);
    expect(count).toBe(before);
    endWait();
  });

  it('keeps one poll turn queued however many calls begin and end', async () => {
    const { yields } = setUp(20);
    for (let i = 0; i < 100; i++) {
      beginWait();
      endWait();
    }
    beginWait();
    await turns(10);
    // One chain of turns yields at most once per turn; a chain per call would yield ~100 times per turn.
    expect(yields()).toBeLessThanOrEqual(11);
    expect(yields()).toBeGreaterThanOrEqual(8);
    endWait();
  });

  it('sleeps once the budget since the newest call is spent, and polls again for the next call', async () => {
    const { yields, clock } = setUp(20);
    beginWait();
    await turns(5);
    clock.ms = 21;
    await turns(3);
    const spent = yields();
    await turns(20);
    expect(yields()).toBe(spent);
    beginWait(); // a second call, while the first still waits
    await turns(10);
    expect(yields()).toBeGreaterThan(spent);
    endWait();
    endWait();
  });

  it('sleeps for the budget after a bulk rendezvous begins, whether or not a call is waiting; smaller ones change nothing', async () => {
    const { yields, clock } = setUp(20);
    noteRendezvous(BULK_BYTES - 1);
    beginWait();
    await turns(5);
    expect(yields()).toBeGreaterThanOrEqual(3);
    noteRendezvous(BULK_BYTES); // during a call: its turns stop
    await turns(3);
    const stopped = yields();
    await turns(10);
    expect(yields()).toBe(stopped);
    endWait();
    clock.ms = 19;
    beginWait(); // a new call inside the bulk window does not poll either
    await turns(10);
    expect(yields()).toBe(stopped);
    endWait();
    clock.ms = 21;
    beginWait(); // the window has passed
    await turns(10);
    expect(yields()).toBeGreaterThan(stopped);
    endWait();
  });

  it('never polls with a zero budget or without a way to yield', async () => {
    const { yields } = setUp(0);
    expect(waitPolls()).toBe(false);
    beginWait();
    await turns(10);
    expect(yields()).toBe(0);
    endWait();
    configureWaitPoll({ budgetMs: 20, yieldCore: null });
    expect(waitPolls()).toBe(false);
  });
});
