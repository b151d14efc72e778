import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BULK_BYTES, CLOCK_TURNS, WaitPoll, type WaitPollOptions } from './wait-poll.ts';
import { turns } from '../util/event-loop-turns.test-util.ts';

/** The thread's WaitPoll of the running test (each test makes its own, as each thread does at init). */
let poll = new WaitPoll();

/** The policy's options other than the budget and the yield (which setUp supplies). */
type MoreOptions = Omit<WaitPollOptions, 'budgetMs' | 'yieldCore' | 'now'>;

/**
 * Configures `poll` with `budgetMs` and `more`, counting its yields on a clock the test sets;
 * `reconfigure` configures it again with the same counter and clock.
 */
function setUp(budgetMs: number, more: MoreOptions = {}): { yields: () => number; clock: { ms: number }; reconfigure: (next: MoreOptions) => void } {
  let count = 0;
  const clock = { ms: 0 };
  const reconfigure = (next: MoreOptions): void => poll.configure({ budgetMs, yieldCore: () => count++, now: () => clock.ms, ...next });
  reconfigure(more);
  return { yields: () => count, clock, reconfigure };
}

describe('wait-poll', () => {
  beforeEach(() => {
    poll = new WaitPoll();
  });

  afterEach(async () => {
    poll.stop();
    await turns(3); // let a queued turn see the stop
  });

  it('yields once per event-loop turn while a blocking call waits, and stops when it ends', async () => {
    const { yields } = setUp(20);
    expect(poll.isEnabled).toBe(true);
    poll.begin();
    await turns(20);
    expect(yields()).toBeGreaterThanOrEqual(18);
    poll.end();
    await turns(3);
    const after = yields();
    await turns(20);
    expect(yields()).toBe(after);
  });

  it('spins the first spinTurns turns of each blocking call without yielding (poll-policy.ts)', async () => {
    const { yields } = setUp(20, { spinTurns: 10 });
    poll.begin();
    await turns(8);
    expect(yields(), 'no yield within the first turns').toBe(0);
    await turns(20);
    expect(yields(), 'every turn yields after the spin turns').toBeGreaterThanOrEqual(10);
    poll.end();
    // A new blocking call spins again first.
    const before = yields();
    poll.begin();
    await turns(5);
    expect(yields()).toBe(before);
    poll.end();
  });

  it('stops polling after sleepAfterTurns turns of a blocking call, and polls again for the next call (poll-policy.ts)', async () => {
    const { yields } = setUp(20, { sleepAfterTurns: 5 });
    poll.begin();
    await turns(30);
    expect(yields(), 'five yielding turns, then asleep although the call still waits').toBe(5);
    poll.end();
    poll.begin();
    await turns(30);
    expect(yields(), 'a new blocking call polls its turns again').toBe(10);
    poll.end();
  });

  it('keeps one poll turn queued however many calls begin and end', async () => {
    const { yields } = setUp(20);
    for (let i = 0; i < 100; i++) {
      poll.begin();
      poll.end();
    }
    poll.begin();
    await turns(10);
    // One chain of turns yields at most once per turn; a chain per call would yield ~100 times per turn.
    expect(yields()).toBeLessThanOrEqual(11);
    expect(yields()).toBeGreaterThanOrEqual(8);
    poll.end();
  });

  it('sleeps once the budget since the newest call is spent, and polls again for the next call', async () => {
    const { yields, clock } = setUp(20);
    poll.begin();
    await turns(5);
    clock.ms = 21;
    await turns(CLOCK_TURNS + 2); // the clock is read once in CLOCK_TURNS turns
    const spent = yields();
    await turns(20);
    expect(yields()).toBe(spent);
    poll.begin(); // a second call, while the first still waits
    await turns(10);
    expect(yields()).toBeGreaterThan(spent);
    poll.end();
    poll.end();
  });

  it('polls again for the budget when the thread serves a one-sided request during a long wait (renew), and not outside a blocking call', async () => {
    const { yields, clock } = setUp(20);
    poll.renew(); // no call waits: nothing starts
    await turns(5);
    expect(yields()).toBe(0);
    poll.begin();
    await turns(5);
    clock.ms = 21;
    await turns(CLOCK_TURNS + 2);
    const asleep = yields();
    await turns(20);
    expect(yields(), 'the budget is spent: the wait sleeps').toBe(asleep);
    poll.renew(); // a served frame woke the thread: it polls for the next 20 ms
    await turns(20);
    const renewed = yields();
    expect(renewed).toBeGreaterThanOrEqual(asleep + 18);
    poll.renew(); // served again while polling: one chain of turns, not two
    await turns(10);
    expect(yields()).toBeLessThanOrEqual(renewed + 11);
    clock.ms = 42;
    await turns(CLOCK_TURNS + 2);
    const after = yields();
    await turns(20);
    expect(yields(), '20 ms after the last request the wait sleeps again').toBe(after);
    poll.end();
    await turns(3);
    poll.renew(); // the call ended: a later request starts nothing
    await turns(10);
    expect(yields()).toBe(after);
  });

  it('does not renew past sleepAfterTurns (a host with more processes than cores) or during a bulk suspension', async () => {
    const { yields, reconfigure } = setUp(20, { sleepAfterTurns: 5 });
    poll.begin();
    await turns(20);
    expect(yields()).toBe(5);
    poll.renew();
    await turns(20);
    expect(yields(), 'the turns of the call are spent').toBe(5);
    poll.end();
    reconfigure({});
    poll.noteRendezvous(BULK_BYTES);
    poll.begin();
    poll.renew();
    await turns(20);
    expect(yields(), 'bulk traffic keeps the wait asleep').toBe(5);
    poll.end();
  });

  it('sleeps for the budget after a bulk rendezvous begins, whether or not a call is waiting; smaller ones change nothing', async () => {
    const { yields, clock } = setUp(20);
    poll.noteRendezvous(BULK_BYTES - 1);
    poll.begin();
    await turns(5);
    expect(yields()).toBeGreaterThanOrEqual(3);
    poll.noteRendezvous(BULK_BYTES); // during a call: its turns stop
    await turns(3);
    const stopped = yields();
    await turns(10);
    expect(yields()).toBe(stopped);
    poll.end();
    clock.ms = 19;
    poll.begin(); // a new call inside the bulk window does not poll either
    await turns(10);
    expect(yields()).toBe(stopped);
    poll.end();
    clock.ms = 21;
    poll.begin(); // the window has passed
    await turns(10);
    expect(yields()).toBeGreaterThan(stopped);
    poll.end();
  });

  it('suspends polling for the budget when a turn comes back more than lateTurnMs after the previous one (poll-policy.ts)', async () => {
    const { yields, clock } = setUp(20, { lateTurnMs: 0.5 });
    poll.begin();
    await turns(5);
    expect(yields(), 'turns that come back at once keep polling').toBeGreaterThanOrEqual(3);
    clock.ms = 0.4; // within the limit
    await turns(3);
    expect(yields()).toBeGreaterThanOrEqual(5);
    clock.ms = 1.5; // the next turn runs 1.1 ms after the previous one: the core went elsewhere
    await turns(3);
    const late = yields();
    await turns(10);
    expect(yields(), 'no turn after the late one').toBe(late);
    poll.end();
    clock.ms = 20;
    poll.begin(); // a new call within the budget after the late turn does not poll either
    await turns(10);
    expect(yields()).toBe(late);
    poll.end();
    clock.ms = 22;
    poll.begin(); // the suspension has passed
    await turns(10);
    expect(yields()).toBeGreaterThan(late);
    poll.end();
  });

  it('counts no gap across blocking calls as late: the first turn of a call only sets the mark', async () => {
    const { yields, clock } = setUp(20, { lateTurnMs: 0.5 });
    poll.begin();
    await turns(3);
    poll.end();
    await turns(3); // this call's turns have stopped
    clock.ms = 5; // the program computed between calls
    const before = yields();
    poll.begin();
    await turns(5);
    expect(yields(), 'the new call polls').toBeGreaterThan(before + 2);
    poll.end();
  });

  it('never counts turns late without lateTurnMs (a core per process)', async () => {
    const { yields, clock } = setUp(20);
    poll.begin();
    await turns(3);
    clock.ms = 10;
    await turns(CLOCK_TURNS + 2);
    expect(yields(), 'a 10 ms gap within the budget changes nothing').toBeGreaterThanOrEqual(CLOCK_TURNS + 3);
    poll.end();
  });

  it('reads the clock once in CLOCK_TURNS turns of a blocking call, and not when a call begins', async () => {
    let reads = 0;
    let count = 0;
    poll.configure({ budgetMs: 20, yieldCore: () => count++, now: () => { reads++; return 0; } });
    poll.begin();
    expect(reads, 'begin reads no clock').toBe(0);
    await turns(4 * CLOCK_TURNS);
    expect(count).toBeGreaterThanOrEqual(3 * CLOCK_TURNS);
    expect(reads).toBeLessThanOrEqual(Math.ceil(count / CLOCK_TURNS) + 1);
    expect(reads).toBeGreaterThanOrEqual(3);
    poll.end();
  });

  it('never polls with a zero budget or without a way to yield', async () => {
    const { yields } = setUp(0);
    expect(poll.isEnabled).toBe(false);
    poll.begin();
    await turns(10);
    expect(yields()).toBe(0);
    poll.end();
    poll.configure({ budgetMs: 20, yieldCore: null });
    expect(poll.isEnabled).toBe(false);
  });

  it('is one thread\'s: calls on another WaitPoll neither start nor stop its turns', async () => {
    const { yields } = setUp(20);
    let otherYields = 0;
    const other = new WaitPoll();
    other.configure({ budgetMs: 20, yieldCore: () => otherYields++, now: () => 0 });
    other.begin();
    await turns(5);
    expect(yields(), 'this one has no blocking call').toBe(0);
    poll.begin();
    other.end();
    await turns(10);
    expect(yields(), 'the other one\'s end does not end this one\'s call').toBeGreaterThanOrEqual(5);
    poll.end();
    other.stop();
  });
});
