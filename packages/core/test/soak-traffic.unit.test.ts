/** The soak's deterministic traffic (programs/soak-traffic.ts): plans agree, and verify catches every kind of damage. */
import { describe, expect, it } from 'vitest';
import { MiB, pattern, planRound, verify } from './programs/soak-traffic.ts';

describe('soak traffic', () => {
  it('computes the same plan for the same seed and round, a different one otherwise', () => {
    expect(planRound(7, 3, 4, 12)).toEqual(planRound(7, 3, 4, 12));
    expect(planRound(7, 3, 4, 12)).not.toEqual(planRound(8, 3, 4, 12));
    expect(planRound(7, 3, 4, 12)).not.toEqual(planRound(7, 4, 4, 12));
  });

  it('plans sizes from 0 B to 4 MiB and every receive class', () => {
    const all = Array.from({ length: 200 }, (_, r) => planRound(1, r, 4, 12)).flat();
    const sizes = all.map((m) => m.size);
    expect(Math.min(...sizes)).toBe(0);
    expect(Math.max(...sizes)).toBe(4 * MiB);
    expect(new Set(all.map((m) => m.cls))).toEqual(new Set([0, 1, 2]));
  });

  it('accepts the exact pattern and flags a flipped byte, a wrong length and a wrong sequence number', () => {
    for (const size of [0, 1, 11, 12, 13, 4096]) {
      expect(verify(pattern(5, 2, 9, 1, size), 5, 2, 9, 1, size)).toBe('ok');
    }
    const p = pattern(5, 2, 9, 1, 4096);
    p[4000]! ^= 1;
    expect(verify(p, 5, 2, 9, 1, 4096)).toBe('corrupt');
    const small = pattern(5, 2, 9, 1, 5);
    small[4]! ^= 0x80;
    expect(verify(small, 5, 2, 9, 1, 5)).toBe('corrupt');
    expect(verify(pattern(5, 2, 9, 1, 100), 5, 2, 9, 1, 101)).toBe('corrupt');
    expect(verify(pattern(5, 2, 10, 1, 100), 5, 2, 9, 1, 100)).toBe('sequence');
    expect(verify(pattern(5, 2, 9, 0, 100), 5, 2, 9, 1, 100)).toBe('sequence');
  });
});
