// Which ring links init's lean warm-up uses (lean-warm-up.ts warmUpLinks): only where both ends
// published the same positive count, so that no message is sent to a rank that will not receive it;
// and which pairs run its blocking round trips (roundTripPartner): ranks 0-1, 2-3, ... over such links.
import { describe, expect, it } from 'vitest';
import { roundTripPartner, warmUpLinks } from './lean-warm-up.ts';

describe('warmUpLinks', () => {
  it('names the ring neighbours', () => {
    expect(warmUpLinks(0, 4, 300, 300, 300)).toEqual({ left: 3, right: 1, fromLeft: 300, toRight: 300 });
    expect(warmUpLinks(3, 4, 300, 300, 300)).toEqual({ left: 2, right: 0, fromLeft: 300, toRight: 300 });
    expect(warmUpLinks(1, 2, 300, 300, 300)).toEqual({ left: 0, right: 0, fromLeft: 300, toRight: 300 });
  });

  it('skips a link whose other end published another count, nothing, or 0', () => {
    expect(warmUpLinks(1, 3, 300, 100, 300)).toMatchObject({ fromLeft: 0, toRight: 300 });
    expect(warmUpLinks(1, 3, 300, 300, null)).toMatchObject({ fromLeft: 300, toRight: 0 });
    expect(warmUpLinks(1, 3, 300, 0, 0)).toMatchObject({ fromLeft: 0, toRight: 0 });
  });

  it('uses no link where this rank publishes 0', () => {
    expect(warmUpLinks(0, 2, 0, 0, 0)).toMatchObject({ fromLeft: 0, toRight: 0 });
  });
});

describe('roundTripPartner', () => {
  const all = (rank: number, size: number) => warmUpLinks(rank, size, 300, 300, 300);

  it('pairs ranks 0-1, 2-3, ... and leaves the last rank of an odd job alone', () => {
    expect([0, 1, 2, 3].map((r) => roundTripPartner(r, 4, all(r, 4)))).toEqual([1, 0, 3, 2]);
    expect([0, 1, 2].map((r) => roundTripPartner(r, 3, all(r, 3)))).toEqual([1, 0, null]);
    expect([0, 1].map((r) => roundTripPartner(r, 2, all(r, 2)))).toEqual([1, 0]);
    expect(roundTripPartner(0, 1, all(0, 1))).toBeNull();
  });

  it('pairs no ranks whose link the exchange skipped, on either side', () => {
    // Rank 2 published 100, rank 3 300: neither end of the 2-3 link uses it.
    expect(roundTripPartner(2, 4, warmUpLinks(2, 4, 100, 300, 300))).toBeNull();
    expect(roundTripPartner(3, 4, warmUpLinks(3, 4, 300, 100, 300))).toBeNull();
    expect(roundTripPartner(0, 4, warmUpLinks(0, 4, 0, 0, 0))).toBeNull();
  });
});
