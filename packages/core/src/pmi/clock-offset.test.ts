import { describe, expect, it } from 'vitest';
import { estimateClockOffset } from './clock-offset.ts';

describe('estimateClockOffset', () => {
  it('takes the midpoint of the shortest round trip', () => {
    // mpiexec's clock is 1000 ms ahead; the second ping had symmetric 1 ms legs, the others were delayed.
    const r = estimateClockOffset([
      { sentMs: 0, serverMs: 1000 + 9, receivedMs: 10 },
      { sentMs: 20, serverMs: 1000 + 21, receivedMs: 22 },
      { sentMs: 30, serverMs: 1000 + 31, receivedMs: 45 },
    ]);
    expect(r.offsetMs).toBe(1000);
    expect(r.roundTripMs).toBe(2);
  });

  it('bounds the error by half the round trip when the legs differ', () => {
    // true offset -500; the answer took 3 ms out, 1 ms back
    const r = estimateClockOffset([{ sentMs: 100, serverMs: 100 + 3 - 500, receivedMs: 104 }]);
    expect(Math.abs(r.offsetMs - -500)).toBeLessThanOrEqual(r.roundTripMs / 2);
  });

  it('is zero with no samples', () => {
    expect(estimateClockOffset([])).toEqual({ offsetMs: 0, roundTripMs: 0 });
  });
});
