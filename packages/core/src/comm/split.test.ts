import { describe, expect, it } from 'vitest';
import { decodeSplitEntry, encodeSplitEntry, splitRanks, type SplitEntry } from './split.ts';

describe('split entries', () => {
  it('round-trip colors, UNDEFINED and keys at any byte offset', () => {
    const entries: SplitEntry[] = [
      { color: '0', key: 0 },
      { color: null, key: -5 },
      { color: '2147483647', key: 2147483647 },
      { color: 'host:nœud-é', key: -2147483648 },
    ];
    for (const e of entries) {
      const bytes = encodeSplitEntry(e);
      const shifted = new Uint8Array(bytes.length + 3).subarray(3);
      shifted.set(bytes);
      expect(decodeSplitEntry(shifted)).toEqual(e);
    }
  });

  it('orders a color by key, ties by parent rank, and leaves out the others', () => {
    const entries: SplitEntry[] = [
      { color: 'a', key: 2 },
      { color: 'b', key: 0 },
      { color: 'a', key: 1 },
      { color: null, key: 0 },
      { color: 'a', key: 2 },
      { color: 'a', key: -1 },
      { color: 'b', key: 0 },
    ];
    expect(splitRanks(entries, 'a')).toEqual([5, 2, 0, 4]);
    expect(splitRanks(entries, 'b')).toEqual([1, 6]);
    expect(splitRanks(entries, 'c')).toEqual([]);
  });
});
