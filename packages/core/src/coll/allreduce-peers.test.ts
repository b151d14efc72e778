/**
 * recursiveDoublingPeers (allreduce.ts), what init's warm-up of the small allreduce takes out of
 * MPI.stats, against the messages a simulated short allreduce actually sends and receives.
 */
import { describe, expect, it } from 'vitest';
import { allreduce, recursiveDoublingPeers } from './allreduce.ts';
import type { CollPt2pt } from './pt2pt.ts';
import { SUM_I32, Sim } from './sim.test-util.ts';

describe('recursiveDoublingPeers', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16])('names every message of a short allreduce on p=%i', async (p) => {
    const sim = new Sim(p, { seed: p });
    const seen = await sim.run(async (pt, rank) => {
      const sendsTo: number[] = [];
      const receivesFrom: number[] = [];
      const counting: CollPt2pt = {
        rank: pt.rank,
        size: pt.size,
        send: (dest, tag, data) => (sendsTo.push(dest), pt.send(dest, tag, data)),
        recv: (source, tag) => (receivesFrom.push(source), pt.recv(source, tag)),
      };
      await allreduce(counting, 0, new Uint8Array(Int32Array.of(rank).buffer), new Uint8Array(4), SUM_I32);
      return { sendsTo, receivesFrom };
    });
    for (let rank = 0; rank < p; rank++) {
      const want = recursiveDoublingPeers(rank, p);
      expect([...seen[rank]!.sendsTo].sort()).toEqual([...want.sendsTo].sort());
      expect([...seen[rank]!.receivesFrom].sort()).toEqual([...want.receivesFrom].sort());
    }
  });
});
