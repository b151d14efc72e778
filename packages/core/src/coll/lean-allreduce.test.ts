/**
 * LeanAllreduce (lean-allreduce.ts) over in-memory queues: the byte views it keeps from one call
 * to the next are the right arrays' bytes, whether the next call passes the same arrays (changed
 * in between), other ones, a small vector cut from a large buffer (never kept) or IN_PLACE.
 */
import { describe, expect, it } from 'vitest';
import { ERR_COUNT } from '../util/index.ts';
import { LeanAllreduce, LEAN_ALLREDUCE_MAX_BYTES, LEAN_DONE, type BlockingWait } from './lean-allreduce.ts';
import { SUM_I32, Sim, withCallbacks } from './sim.test-util.ts';

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

  it('tells its BlockingWait once each way around every blocking call that waits, never for Iallreduce, and before the call settles', async () => {
    const sim = new Sim(2, { seed: 5 });
    const out = await sim.run(async (pt, r) => {
      const events: string[] = [];
      let open = 0;
      const wait: BlockingWait = {
        enter: () => { events.push('enter'); open++; },
        leave: () => { events.push('leave'); open--; },
      };
      const lean = new LeanAllreduce(withCallbacks(pt), withCallbacks(pt), new Int32Array(1), 0, wait);
      const recv = new Int32Array(1);
      const sums: number[] = [];
      let openWhenSettled = 0;
      for (let i = 0; i < 6; i++) {
        const p = lean.start(true, new Int32Array([r + i]), recv, 4, SUM_I32);
        await p.then(() => { openWhenSettled += open; });
        sums.push(recv[0]!);
      }
      const before = events.length;
      await lean.start(false, new Int32Array([r]), recv, 4, SUM_I32);
      return { sums, enters: events.filter((e) => e === 'enter').length, balanced: open === 0, paired: events.every((e, i) => e === (i % 2 === 0 ? 'enter' : 'leave')), openWhenSettled, nonblockingEvents: events.length - before };
    });
    for (const o of out) {
      expect(o.sums).toEqual([1, 3, 5, 7, 9, 11]);
      // The simulator delivers on later turns, so every blocking call here waits.
      expect(o.enters).toBe(6);
      expect(o.balanced).toBe(true);
      expect(o.paired).toBe(true);
      expect(o.openWhenSettled).toBe(0);
      expect(o.nonblockingEvents).toBe(0);
    }
  });

  it('a blocking call that fails leaves its wait and rejects with the run\'s error', async () => {
    const sim = new Sim(2, { seed: 9 });
    const out = await sim.run(async (pt, r) => {
      let open = 0;
      const lean = new LeanAllreduce(withCallbacks(pt), withCallbacks(pt), new Int32Array(1), 0, { enter: () => { open++; }, leave: () => { open--; } });
      // Rank 1 contributes 8 bytes, rank 0 4: an operand of another length (ERR_COUNT).
      const bytes = r === 0 ? 4 : 8;
      const error = await lean.start(true, new Int32Array(bytes / 4), new Int32Array(bytes / 4), bytes, SUM_I32).then(() => null, (e: unknown) => e);
      return { errorClass: (error as { errorClass?: number } | null)?.errorClass ?? null, open };
    });
    for (const o of out) {
      expect(o.errorClass).toBe(ERR_COUNT);
      expect(o.open).toBe(0);
    }
  });
});
