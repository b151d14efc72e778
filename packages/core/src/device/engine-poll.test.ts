import { describe, expect, it } from 'vitest';
import { EnginePoll } from './engine-poll.ts';
import { turns } from '../util/event-loop-turns.test-util.ts';

describe('EnginePoll', () => {
  it('yields once per turn while frames keep coming, and stops budgetMs after the last one', async () => {
    const clock = { ms: 0 };
    let yields = 0;
    const p = new EnginePoll(20, () => yields++, () => clock.ms);
    expect(p.polling).toBe(false);
    p.touch();
    expect(p.polling).toBe(true);
    await turns(10);
    expect(yields).toBeGreaterThanOrEqual(8);
    clock.ms = 15;
    p.touch(); // a frame at 15 ms: the deadline moves to 35
    await turns(2);
    clock.ms = 30;
    await turns(3);
    expect(p.polling).toBe(true);
    clock.ms = 36;
    await turns(3);
    expect(p.polling).toBe(false);
    const after = yields;
    await turns(5);
    expect(yields).toBe(after);
  });

  it('queues at most one turn however many frames come, and never polls after stop()', async () => {
    const clock = { ms: 0 };
    let yields = 0;
    const p = new EnginePoll(20, () => yields++, () => clock.ms);
    for (let i = 0; i < 100; i++) p.touch();
    await turns(5);
    expect(yields).toBeLessThanOrEqual(5);
    p.stop();
    await turns(3);
    expect(p.polling).toBe(false);
    p.touch();
    expect(p.polling).toBe(false);
  });
});
