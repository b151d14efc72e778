/** RankTable: a rank-indexed map whose add and remove allocate nothing once grown. */
import { describe, expect, it } from 'vitest';
import { RankTable } from './rank-table.ts';

describe('RankTable', () => {
  it('sets, gets, counts and deletes entries like a Map', () => {
    const t = new RankTable<string>();
    expect(t.size).toBe(0);
    expect(t.has(3)).toBe(false);
    t.set(3, 'c');
    t.set(0, 'a');
    t.set(3, 'C');
    expect(t.size).toBe(2);
    expect(t.get(3)).toBe('C');
    expect(t.get(1)).toBeUndefined();
    expect(t.get(99)).toBeUndefined();
    expect(t.has(0)).toBe(true);
    expect(t.delete(3)).toBe(true);
    expect(t.delete(3)).toBe(false);
    expect(t.delete(42)).toBe(false);
    expect(t.size).toBe(1);
    expect(t.has(3)).toBe(false);
  });

  it('lists its ranks in ascending order, in an array the caller may keep while the table changes', () => {
    const t = new RankTable<boolean>();
    for (const r of [5, 1, 3]) t.set(r, true);
    const keys = t.keys();
    expect(keys).toEqual([1, 3, 5]);
    t.delete(1);
    expect(keys).toEqual([1, 3, 5]);
    expect(t.keys()).toEqual([3, 5]);
  });

  it('agrees with a Map over a random sequence of sets and deletes', () => {
    const t = new RankTable<number>();
    const m = new Map<number, number>();
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    for (let i = 0; i < 2000; i++) {
      const r = next() % 16;
      if (next() % 2 === 0) {
        t.set(r, i);
        m.set(r, i);
      } else {
        expect(t.delete(r)).toBe(m.delete(r));
      }
      expect(t.size).toBe(m.size);
      expect(t.get(r)).toBe(m.get(r));
    }
    expect(t.keys()).toEqual([...m.keys()].sort((a, b) => a - b));
  });
});
