import { describe, expect, it } from 'vitest';
import { ChangedEntries } from './counter-deltas.ts';

describe('ChangedEntries', () => {
  it('returns only the entries that changed since the last call, as totals', () => {
    const c = new ChangedEntries();
    expect(c.take([0, 5, 0, 7])).toEqual([[1, 5], [3, 7]]);
    expect(c.take([0, 5, 0, 7])).toEqual([]);
    expect(c.take([2, 5, 0, 9])).toEqual([[0, 2], [3, 9]]);
    // A counter that went down (a socket replaced) is sent too.
    expect(c.take([2, 1, 0, 9])).toEqual([[1, 1]]);
  });
});
