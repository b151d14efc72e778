import { describe, expect, it } from 'vitest';
import { ERR_TRUNCATE, MPIError } from '../util/index.ts';
import { allgather } from './allgather.ts';
import { allreduce } from './allreduce.ts';
import { barrier } from './barrier.ts';
import { bcast } from './bcast.ts';
import { gatherv } from './gather.ts';
import { reduce } from './reduce.ts';
import { scan } from './scan.ts';
import { ALGORITHMS, DEFAULT_COLL_TUNING, SELECTION_TABLE, selectAlgorithm, type Collective } from './select.ts';
import { MATMUL, SUM_I32, Sim, diff, foldLeft, randomBytes } from './sim.test-util.ts';

describe('concurrent collectives on one communicator', () => {
  it.each([2, 3, 5, 8])('p=%i: two to four collectives with different tags, posted in different orders per rank', async (p) => {
    for (const seed of [1, 2, 3]) {
      const n = 2000 * MATMUL.itemBytes;
      const xs = Array.from({ length: p }, (_, r) => randomBytes(n, r + seed, MATMUL));
      const ys = Array.from({ length: p }, (_, r) => randomBytes(4 * 3000, 50 + r + seed));
      const data = randomBytes(30_000, seed);
      const sim = new Sim(p, { seed });
      const out = await sim.run(async (pt, r) => {
        const a = new Uint8Array(n);
        const b = new Uint8Array(4 * 3000);
        const c = r === 1 % p ? data.slice() : new Uint8Array(data.length);
        const g = new Uint8Array(p * 4);
        // Each rank starts the operations in its own order; all are in flight together.
        const ops = [
          () => allreduce(pt, 100, xs[r]!, a, MATMUL),
          () => scan(pt, 101, ys[r]!, b, SUM_I32),
          () => bcast(pt, 102, c, 1 % p),
          () => allgather(pt, 103, new Uint8Array([r, r, r, r]), g, 4),
        ];
        const order = r % 2 === 0 ? [0, 1, 2, 3] : [3, 2, 1, 0];
        await Promise.all(order.map((i) => ops[i]!()));
        await barrier(pt, 104);
        return { a, b, c, g };
      });
      const wantA = foldLeft(MATMUL, xs);
      out.forEach(({ a, b, c, g }, r) => {
        expect(diff(a, wantA)).toBe('');
        expect(diff(b, foldLeft(SUM_I32, ys.slice(0, r + 1)))).toBe('');
        expect(diff(c, data)).toBe('');
        expect(Array.from(g)).toEqual(Array.from({ length: p }, (_, i) => [i, i, i, i]).flat());
      });
    }
  });

  it('the same collective twice with different tags, second one started first on odd ranks', async () => {
    const p = 7;
    const sim = new Sim(p, { seed: 9 });
    const out = await sim.run(async (pt, r) => {
      const one = new Uint8Array(4);
      const two = new Uint8Array(4);
      new DataView(one.buffer).setInt32(0, r, true);
      new DataView(two.buffer).setInt32(0, 100 * r, true);
      const first = (): Promise<void> => reduce(pt, 1, null, one, SUM_I32, 3);
      const second = (): Promise<void> => reduce(pt, 2, r === 3 ? null : two, r === 3 ? two : null, SUM_I32, 3);
      // In-place only at the root: the others pass their vector as send.
      const f = r === 3 ? first : (): Promise<void> => reduce(pt, 1, one, null, SUM_I32, 3);
      await (r % 2 === 1 ? Promise.all([second(), f()]) : Promise.all([f(), second()]));
      return [new DataView(one.buffer).getInt32(0, true), new DataView(two.buffer).getInt32(0, true)];
    });
    expect(out[3]).toEqual([21, 2100]);
  });
});

describe('errors', () => {
  it('a message longer than its block is ERR_TRUNCATE naming the call', async () => {
    const sim = new Sim(2);
    const run = sim.run(async (pt, r) => {
      if (r === 1) return pt.send(0, 1, new Uint8Array(10));
      const buf = new Uint8Array(8);
      await gatherv(pt, 1, new Uint8Array(0), { buf, counts: [0, 8], displs: [0, 0] }, 0);
    }, false);
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MPIError);
    expect((err as MPIError).errorClass).toBe(ERR_TRUNCATE);
    expect((err as MPIError).call).toBe('Gatherv');
  });

  it('the simulator reports a deadlock instead of hanging', async () => {
    const sim = new Sim(2);
    await expect(sim.run((pt) => pt.recv(1 - pt.rank, 1))).rejects.toThrow(/deadlock/);
  });

  it('the simulator reports messages left unmatched', async () => {
    const sim = new Sim(2);
    await expect(sim.run((pt) => pt.send(1 - pt.rank, 1, new Uint8Array(1)))).rejects.toThrow(/unmatched/);
  });
});

describe('selection table', () => {
  it('covers every collective, and each list ends with an unconditional rule naming a known algorithm', () => {
    expect(Object.keys(SELECTION_TABLE).sort()).toEqual(Object.keys(ALGORITHMS).sort());
    for (const c of Object.keys(SELECTION_TABLE) as Collective[]) {
      const rules = SELECTION_TABLE[c];
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) expect(ALGORITHMS[c] as readonly string[]).toContain(rule.algorithm);
      expect(rules[rules.length - 1]!.when({ size: 1, bytes: 0, items: 0, commute: false }, DEFAULT_COLL_TUNING)).toBe(true);
    }
  });

  it('follows the documented thresholds', () => {
    const t = DEFAULT_COLL_TUNING;
    const x = (size: number, bytes: number, items = bytes / 4, commute = true) => ({ size, bytes, items, commute });
    expect(selectAlgorithm('bcast', x(8, t.bcastLongBytes))).toBe('scatter-allgather');
    expect(selectAlgorithm('bcast', x(8, t.bcastLongBytes - 1))).toBe('binomial');
    expect(selectAlgorithm('bcast', x(7, 1 << 20))).toBe('binomial');
    expect(selectAlgorithm('allreduce', x(4, t.allreduceShortBytes))).toBe('recursive-doubling');
    expect(selectAlgorithm('allreduce', x(4, t.allreduceShortBytes + 4))).toBe('rabenseifner');
    expect(selectAlgorithm('allreduce', x(64, 4096, 32))).toBe('recursive-doubling'); // fewer items than ranks
    expect(selectAlgorithm('allreduce', x(4, 1 << 20, 1 << 18, false))).toBe('reduce-bcast');
    expect(selectAlgorithm('allreduce', x(4, 64, 16, false))).toBe('recursive-doubling');
    expect(selectAlgorithm('allgather', x(8, 1024))).toBe('recursive-doubling');
    expect(selectAlgorithm('allgather', x(6, 1024))).toBe('ring');
    expect(selectAlgorithm('allgather', x(8, t.allgatherLongBytes))).toBe('ring');
    expect(selectAlgorithm('alltoall', x(8, 256))).toBe('bruck');
    expect(selectAlgorithm('alltoall', x(8, 257))).toBe('pairwise');
    expect(selectAlgorithm('alltoall', x(4, 8))).toBe('pairwise');
    expect(selectAlgorithm('reduceScatterBlock', x(8, 64))).toBe('recursive-halving');
    expect(selectAlgorithm('reduceScatterBlock', x(8, 64, 16, false))).toBe('reduce-scatter');
    expect(selectAlgorithm('reduceScatterBlock', x(6, 64))).toBe('reduce-scatter');
    expect(selectAlgorithm('neighborAlltoall', x(4, t.neighborPackBytes))).toBe('per-peer');
    expect(selectAlgorithm('neighborAlltoall', x(4, t.neighborPackBytes + 8))).toBe('per-block');
  });
});
