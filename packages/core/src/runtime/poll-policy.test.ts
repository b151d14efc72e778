import { describe, expect, it } from 'vitest';
import { pollPolicy } from './poll-policy.ts';

describe('pollPolicy', () => {
  it('yields in every turn and sleeps after spinTurns turns when the job has more processes on this host than cores', () => {
    expect(pollPolicy({ localSize: 4, cores: 2, spinTurns: 10 })).toEqual({ isOversubscribed: true, spinTurns: 0, sleepAfterTurns: 10 });
    expect(pollPolicy({ localSize: 3, cores: 2, spinTurns: 0 })).toEqual({ isOversubscribed: true, spinTurns: 0, sleepAfterTurns: 0 });
  });

  it('spins the configured turns first when every process has a core', () => {
    expect(pollPolicy({ localSize: 2, cores: 2, spinTurns: 10 })).toEqual({ isOversubscribed: false, spinTurns: 10, sleepAfterTurns: Infinity });
    expect(pollPolicy({ localSize: 1, cores: 8, spinTurns: 0 })).toEqual({ isOversubscribed: false, spinTurns: 0, sleepAfterTurns: Infinity });
  });
});
