// PendingReceives (the trace recorder's irecvs waiting to complete): in order, out of order, holes compacted.
import { describe, expect, it } from 'vitest';
import { PendingReceives } from './trace-pending-receives.ts';

describe('PendingReceives', () => {
  it('gives back each request\'s post order once, in and out of post order', () => {
    const p = new PendingReceives<object>();
    const rs = Array.from({ length: 5 }, () => ({}));
    rs.forEach((r, i) => p.add(r, 100 + i));
    expect(p.take(rs[0]!)).toBe(100);
    expect(p.take(rs[3]!)).toBe(103);
    expect(p.take(rs[3]!)).toBe(-1);
    expect(p.take({})).toBe(-1);
    expect(p.size).toBe(3);
    expect([p.take(rs[4]!), p.take(rs[1]!), p.take(rs[2]!)]).toEqual([104, 101, 102]);
    expect(p.size).toBe(0);
    // Emptied: it refills from the start and still finds everything.
    const r = {};
    p.add(r, 7);
    expect(p.take(r)).toBe(7);
  });

  it('keeps finding requests behind one that never completes, across compactions', () => {
    const p = new PendingReceives<object>();
    const stuck = {};
    p.add(stuck, 0);
    let order = 1;
    for (let round = 0; round < 50; round++) {
      const rs = Array.from({ length: 100 }, () => ({}));
      const orders = rs.map((r) => { p.add(r, order); return order++; });
      // Newest first: every take leaves a hole behind the stuck one.
      for (let i = rs.length - 1; i >= 0; i--) expect(p.take(rs[i]!)).toBe(orders[i]);
      expect(p.size).toBe(1);
    }
    expect(p.take(stuck)).toBe(0);
    expect(p.size).toBe(0);
  });
});
