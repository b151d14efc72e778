/**
 * channelOf (interface.ts): the channel of an endpoint pair. The transports'
 * use of it is in the conformance suite; this pins the function's promises.
 */
import { describe, expect, it } from 'vitest';
import { channelOf } from './interface.ts';

describe('channelOf', () => {
  it('is (s + d) mod C with one endpoint per process (the paper\'s rule)', () => {
    for (const C of [1, 2, 3, 4]) for (let s = 0; s < 9; s++) for (let d = 0; d < 9; d++) expect(channelOf(s, d, 1, C)).toBe((s + d) % C);
  });

  it('gives (s, d) and (d, s) the same channel (answers come back on it)', () => {
    for (const J of [2, 3, 4]) for (const C of [1, 2, 3, 4]) {
      for (let s = 0; s < 4 * J; s++) for (let d = 0; d < 4 * J; d++) expect(channelOf(s, d, J, C)).toBe(channelOf(d, s, J, C));
    }
  });

  it('puts endpoint i of one process and endpoint i of another on a channel per i (pair layout)', () => {
    // J = C = 2: 0 <-> 2 and 1 <-> 3; (s + d) mod C put both on channel 0.
    expect([channelOf(0, 2, 2, 2), channelOf(1, 3, 2, 2)].sort()).toEqual([0, 1]);
    for (const J of [2, 4]) {
      const used = new Set<number>();
      for (let i = 0; i < J; i++) used.add(channelOf(i, J + i, J, J));
      expect(used.size).toBe(J);
    }
  });

  it('loads every channel equally over all endpoint pairs of two processes when C divides J', () => {
    for (const [J, C] of [[2, 2], [4, 2], [4, 4], [6, 3]] as const) {
      for (const [p, q] of [[0, 1], [1, 2], [0, 3]] as const) {
        const load = new Array<number>(C).fill(0);
        for (let a = 0; a < J; a++) for (let b = 0; b < J; b++) load[channelOf(p * J + a, q * J + b, J, C)]!++;
        expect(load).toEqual(new Array<number>(C).fill((J * J) / C));
      }
    }
  });

  it('takes u32 endpoint numbers without 32-bit overflow', () => {
    expect(channelOf(0xffff_fffe, 1, 1, 4)).toBe((0xffff_fffe + 1) % 4);
    expect(channelOf(0xffff_fffe, 0xffff_ffff, 2, 3)).toBe((Math.floor(0xffff_fffe / 2) * 2 + 0) % 3);
  });
});
