// Intercommunicator collectives (coll/inter.ts) over in-memory queues: two groups of various sizes,
// each with a local view (its own Sim) and an inter view (one Sim over both groups, addressed by
// remote rank), against the results MPI 4.0 6.2.2 defines; and the block framing.
import { describe, expect, it } from 'vitest';
import { interAllgather, interAlltoall, interBarrier, interBcast, interGather, interScatter, leaderSwap, packBlocks, unpackBlocks, type InterRole } from './inter.ts';
import type { CollPt2pt } from './pt2pt.ts';
import { Sim } from './sim.test-util.ts';

const SHAPES: [number, number][] = [[1, 1], [1, 4], [2, 3], [4, 1], [3, 5], [4, 4]];

/** Runs `body` on every member of two groups of sizes a and b; resolves [group A results, group B results]. */
async function runInter<T>(a: number, b: number, body: (local: CollPt2pt, inter: CollPt2pt, side: 0 | 1) => Promise<T>): Promise<[T[], T[]]> {
  const all = new Sim(a + b, { seed: a * 10 + b });
  const locals = [new Sim(a, { seed: a }), new Sim(b, { seed: b + 100 })];
  const interOf = (side: 0 | 1, r: number): CollPt2pt => {
    const mine = all.endpoints[side === 0 ? r : a + r]!;
    const offset = side === 0 ? a : 0;
    return {
      rank: r,
      size: side === 0 ? b : a,
      send: (dest, tag, data) => mine.send(offset + dest, tag, data),
      recv: (source, tag) => mine.recv(offset + source, tag),
    };
  };
  const runs = [0, 1].map((side) => Promise.all(locals[side]!.endpoints.map((l, r) => body(l, interOf(side as 0 | 1, r), side as 0 | 1))));
  const [ra, rb] = await Promise.all(runs);
  return [ra!, rb!];
}

const bytes = (...xs: number[]): Uint8Array => Uint8Array.from(xs);
const roleOf = (side: 0 | 1, r: number, rootSide: 0 | 1, root: number): InterRole =>
  side === rootSide ? (r === root ? { kind: 'root' } : { kind: 'idle' }) : { kind: 'remote', root };

describe('intercommunicator collectives', () => {
  it('packBlocks / unpackBlocks round-trip blocks of any lengths', () => {
    const blocks = [bytes(), bytes(1, 2, 3), bytes(9), new Uint8Array(1000).fill(7)];
    expect(unpackBlocks(packBlocks(blocks)).map((b) => Array.from(b))).toEqual(blocks.map((b) => Array.from(b)));
    expect(unpackBlocks(packBlocks([]))).toEqual([]);
  });

  it.each(SHAPES)('leaderSwap and barrier: groups of %i and %i', async (a, b) => {
    const [ra, rb] = await runInter(a, b, async (l, i, side) => {
      await interBarrier(l, i, 3);
      return Array.from(await leaderSwap(l, i, 4, l.rank === 0 ? bytes(side, 42) : null));
    });
    expect(ra).toEqual(Array(a).fill([1, 42]));
    expect(rb).toEqual(Array(b).fill([0, 42]));
  });

  it.each(SHAPES)('bcast from each side and root: groups of %i and %i', async (a, b) => {
    for (const rootSide of [0, 1] as const) {
      const n = rootSide === 0 ? a : b;
      for (const root of new Set([0, n - 1])) {
        const [ra, rb] = await runInter(a, b, async (l, i, side) => {
          const role = roleOf(side, l.rank, rootSide, root);
          const got = await interBcast(l, i, 5, role.kind === 'root' ? bytes(root, 200) : null, role);
          return got === null ? null : Array.from(got);
        });
        const [rootGroup, other] = rootSide === 0 ? [ra, rb] : [rb, ra];
        expect(other).toEqual(Array(other.length).fill([root, 200]));
        expect(rootGroup).toEqual(rootGroup.map((_, r) => (r === root ? [root, 200] : null)));
      }
    }
  });

  it.each(SHAPES)('gather and scatter: groups of %i and %i', async (a, b) => {
    for (const rootSide of [0, 1] as const) {
      const root = 0;
      const [ga, gb] = await runInter(a, b, async (l, i, side) => {
        const role = roleOf(side, l.rank, rootSide, root);
        const all = await interGather(l, i, 6, role.kind === 'remote' ? bytes(side, l.rank, l.rank).subarray(0, 1 + (l.rank % 3)) : null, role);
        return all === null ? null : all.map((x) => Array.from(x));
      });
      const [rootGroup, other] = rootSide === 0 ? [ga, gb] : [gb, ga];
      const otherSide = rootSide === 0 ? 1 : 0;
      expect(rootGroup[0]).toEqual(other.map((_, r) => [otherSide, r, r].slice(0, 1 + (r % 3))));
      expect(rootGroup.slice(1).every((x) => x === null)).toBe(true);
      const [sa, sb] = await runInter(a, b, async (l, i, side) => {
        const role = roleOf(side, l.rank, rootSide, root);
        const blocks = role.kind === 'root' ? Array.from({ length: i.size }, (_, j) => bytes(j, 77)) : null;
        const mine = await interScatter(l, i, 7, blocks, role);
        return mine === null ? null : Array.from(mine);
      });
      const receivers = rootSide === 0 ? sb : sa;
      expect(receivers).toEqual(receivers.map((_, r) => [r, 77]));
    }
  });

  it.each(SHAPES)('allgather and alltoall: groups of %i and %i', async (a, b) => {
    const [ra, rb] = await runInter(a, b, async (l, i, side) => {
      const ag = (await interAllgather(l, i, 8, bytes(side, l.rank))).map((x) => Array.from(x));
      const a2a = (await interAlltoall(i, 9, Array.from({ length: i.size }, (_, j) => bytes(side, l.rank, j)))).map((x) => Array.from(x));
      return { ag, a2a };
    });
    ra.forEach((x, r) => {
      expect(x.ag).toEqual(Array.from({ length: b }, (_, j) => [1, j]));
      expect(x.a2a).toEqual(Array.from({ length: b }, (_, j) => [1, j, r]));
    });
    rb.forEach((x, r) => {
      expect(x.ag).toEqual(Array.from({ length: a }, (_, j) => [0, j]));
      expect(x.a2a).toEqual(Array.from({ length: a }, (_, j) => [0, j, r]));
    });
  });
});
