import { describe, expect, it } from 'vitest';
import { LATE_TURN_MS, pollPolicy } from './poll-policy.ts';

describe('pollPolicy', () => {
  it('yields in every turn, sleeps after spinTurns turns and after a late turn when the job has more processes on this host than cores', () => {
    expect(pollPolicy({ localSize: 4, cores: 2, spinTurns: 10 })).toEqual({ isOversubscribed: true, spinTurns: 0, sleepAfterTurns: 10, lateTurnMs: LATE_TURN_MS });
    expect(pollPolicy({ localSize: 3, cores: 2, spinTurns: 0 })).toEqual({ isOversubscribed: true, spinTurns: 0, sleepAfterTurns: 0, lateTurnMs: LATE_TURN_MS });
  });

  it('spins the configured turns first, and never counts turns late, when every process has a core', () => {
    expect(pollPolicy({ localSize: 2, cores: 2, spinTurns: 10 })).toEqual({ isOversubscribed: false, spinTurns: 10, sleepAfterTurns: Infinity, lateTurnMs: Infinity });
    expect(pollPolicy({ localSize: 1, cores: 8, spinTurns: 0 })).toEqual({ isOversubscribed: false, spinTurns: 0, sleepAfterTurns: Infinity, lateTurnMs: Infinity });
  });

  it('counts a turn late only beyond a peer rank\'s step and within the scheduler\'s slice', () => {
    expect(LATE_TURN_MS).toBeGreaterThan(0.25);
    expect(LATE_TURN_MS).toBeLessThan(1.5);
  });
});
