// Neighborhood exchange over the simulator: halo pairing when a neighbour appears twice (periodic
// rings of 1 and 2 ranks), PROC_NULL blocks untouched, rendezvous-sized blocks, the object form.
import { describe, expect, it } from 'vitest';
import { PROC_NULL } from '../util/index.ts';
import { neighborAlltoallBytes, neighborAlltoallv, type NeighborPlan } from './neighbor.ts';
import { Sim } from './sim.test-util.ts';

/** A 1-D ring or line of p ranks as a Cartesian topology sees it: [negative, positive], sends positive first. */
function line(p: number, rank: number, periodic: boolean): NeighborPlan {
  const left = rank > 0 ? rank - 1 : periodic ? p - 1 : PROC_NULL;
  const right = rank < p - 1 ? rank + 1 : periodic ? 0 : PROC_NULL;
  return { sources: [left, right], destinations: [left, right], sendOrder: [1, 0] };
}

describe('neighborAlltoallv', () => {
  it.each([
    [1, true], [2, true], [3, true], [5, true], [1, false], [2, false], [4, false],
  ])('p=%i periodic=%s: the negative slot gets what the left neighbour sent right, and back', async (p, periodic) => {
    for (const bb of [3, 200]) {
      const sim = new Sim(p, { seed: p * 7 + bb });
      const results: Uint8Array[] = [];
      await sim.run(async (pt, r) => {
        // block 0 goes left, block 1 goes right; each byte says who sent it and which way
        const send = new Uint8Array(2 * bb);
        send.fill(10 * r + 1, 0, bb);
        send.fill(10 * r + 2, bb);
        const recv = new Uint8Array(2 * bb).fill(99);
        const v = (buf: Uint8Array) => ({ buf, counts: [bb, bb], displs: [0, bb] });
        await neighborAlltoallv(pt, 4, line(p, r, periodic), v(send), v(recv), 'NeighborAlltoall');
        results[r] = recv;
      });
      for (let r = 0; r < p; r++) {
        const { sources } = line(p, r, periodic);
        const expectLeft = sources[0] === PROC_NULL ? 99 : 10 * sources[0]! + 2;
        const expectRight = sources[1] === PROC_NULL ? 99 : 10 * sources[1]! + 1;
        expect(results[r]![0], `rank ${r} left`).toBe(expectLeft);
        expect(results[r]![bb - 1], `rank ${r} left end`).toBe(expectLeft);
        expect(results[r]![bb], `rank ${r} right`).toBe(expectRight);
        expect(results[r]![2 * bb - 1], `rank ${r} right end`).toBe(expectRight);
      }
    }
  });

  it('pairs repeated edges of a graph in list order and delivers blocks of varying size', async () => {
    // rank 0 -> 1 twice, 1 -> 0 once; rank 1 lists 0 twice as a source
    const plans: NeighborPlan[] = [
      { sources: [1], destinations: [1, 1], sendOrder: [0, 1] },
      { sources: [0, 0], destinations: [0], sendOrder: [0] },
    ];
    const sim = new Sim(2, { seed: 3 });
    const got: Uint8Array[] = [];
    await sim.run(async (pt, r) => {
      const send = r === 0 ? { buf: Uint8Array.of(1, 2, 2), counts: [1, 2], displs: [0, 1] } : { buf: Uint8Array.of(7), counts: [1], displs: [0] };
      const recv = r === 0 ? { buf: new Uint8Array(1), counts: [1], displs: [0] } : { buf: new Uint8Array(3), counts: [1, 2], displs: [0, 1] };
      await neighborAlltoallv(pt, 9, plans[r]!, send, recv, 'NeighborAlltoallv');
      got[r] = recv.buf;
    });
    expect(Array.from(got[0]!)).toEqual([7]);
    expect(Array.from(got[1]!)).toEqual([1, 2, 2]);
  });
});

describe('neighborAlltoallBytes', () => {
  it('returns what each source sent, undefined for PROC_NULL', async () => {
    const p = 3;
    const sim = new Sim(p, { seed: 5 });
    const got: (Uint8Array | undefined)[][] = [];
    await sim.run(async (pt, r) => {
      got[r] = await neighborAlltoallBytes(pt, 2, line(p, r, false), [Uint8Array.of(r, 0), Uint8Array.of(r, 1)]);
    });
    expect(got[0]!.map((b) => b && Array.from(b))).toEqual([undefined, [1, 0]]);
    expect(got[1]!.map((b) => b && Array.from(b))).toEqual([[0, 1], [2, 0]]);
    expect(got[2]!.map((b) => b && Array.from(b))).toEqual([[1, 1], undefined]);
  });
});
