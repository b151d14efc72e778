/**
 * LeanAllreduce (lean-allreduce.ts) over in-memory queues: the byte views it keeps from one call
 * to the next are the right arrays' bytes, whether the next call passes the same arrays (changed
 * in between), other ones, a small vector cut from a large buffer (never kept) or IN_PLACE.
 */
import { describe, expect, it } from 'vitest';
import { LeanAllreduce, LEAN_ALLREDUCE_MAX_BYTES, LEAN_DONE } from './lean-allreduce.ts';
import { SUM_I32, Sim } from './sim.test-util.ts';

describe('LeanAllreduce', () => {
  it('sums into the array of each call, across repeated, changed, new, large-buffer and in-place arrays', async () => {
    const sim = new Sim(2, { seed: 3 });
    const out = await sim.run(async (pt, r) => {
      const lean = new LeanAllreduce(pt, pt, new Int32Array(1), 0);
      const results: number[][] = [];
      const send = new Int32Array([r + 1, 10 * (r + 1)]);
      const recv = new Int32Array(2);
      // The same arrays three times, the send array changed between calls: the kept views see the change.
      for (let i = 0; i < 3; i++) {
        send[0] = r + 1 + i;
        await lean.start(true, send, recv, 8, SUM_I32);
        results.push([...recv]);
      }
      // New arrays: the result lands in them, the previous recv is left as it was.
      const send2 = new Int32Array([100 * (r + 1), 1]);
      const recv2 = new Int32Array(2);
      await lean.start(false, send2, recv2, 8, SUM_I32);
      results.push([...recv2], [...recv]);
      // A vector cut from a buffer larger than LEAN_ALLREDUCE_MAX_BYTES (not kept), twice.
      const big = new Int32Array(LEAN_ALLREDUCE_MAX_BYTES);
      const recv3 = big.subarray(5, 7);
      for (let i = 0; i < 2; i++) {
        await lean.start(true, send2, recv3, 8, SUM_I32);
        results.push([...recv3]);
      }
      // IN_PLACE on the first recv array (it holds the third call's sum).
      await lean.start(true, null, recv, 8, SUM_I32);
      results.push([...recv]);
      return results;
    });
    const want = [[3, 30], [5, 30], [7, 30], [300, 2], [7, 30], [300, 2], [300, 2], [14, 60]];
    expect(out[0]).toEqual(want);
    expect(out[1]).toEqual(want);
  });

  it('overlapping calls of both forms each get their own machine and result, and machines are reused after', async () => {
    const sim = new Sim(3, { seed: 11 });
    const out = await sim.run(async (pt, r) => {
      const lean = new LeanAllreduce(pt, pt, new Int32Array(1), 0);
      const results: number[][] = [];
      for (let round = 0; round < 3; round++) {
        const a = new Int32Array([r + round, 1]);
        const b = new Int32Array([10 * (r + 1), round]);
        const c = new Int32Array([100, r]);
        const ra = new Int32Array(2);
        const rb = new Int32Array(2);
        await Promise.all([lean.start(true, a, ra, 8, SUM_I32), lean.start(false, b, rb, 8, SUM_I32), lean.start(true, null, c, 8, SUM_I32)]);
        results.push([...ra], [...rb], [...c]);
      }
      return results;
    });
    const want = [0, 1, 2].flatMap((round) => [[3 * round + 3, 3], [60, 3 * round], [300, 3]]);
    for (const o of out) expect(o).toEqual(want);
  });

  it('a call that finishes within start() (one rank) returns LEAN_DONE itself, the result in place', async () => {
    const sim = new Sim(1, { seed: 1 });
    const [same] = await sim.run(async (pt) => {
      const lean = new LeanAllreduce(pt, pt, new Int32Array(1), 0);
      const recv = new Int32Array(2);
      const p = lean.start(true, new Int32Array([4, 5]), recv, 8, SUM_I32);
      await p;
      return p === LEAN_DONE && recv[0] === 4 && recv[1] === 5;
    });
    expect(same).toBe(true);
  });
});
