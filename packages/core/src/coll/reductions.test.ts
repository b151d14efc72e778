import { describe, expect, it } from 'vitest';
import { allreduce, planAllreduce, shortAllreduce } from './allreduce.ts';
import { runPlan } from './plan.ts';
import { doublingSchedule } from './short-allreduce.ts';
import type { ByteOp, CollPt2pt } from './pt2pt.ts';
import { reduceScatter, reduceScatterBlock } from './reduce-scatter.ts';
import { exscan, scan } from './scan.ts';
import { ERR_COUNT } from '../util/index.ts';
import { DEFAULT_COLL_TUNING, selectAlgorithm, type CollOptions, type CollTuning } from './select.ts';
import { MATMUL, SUM_I32, Sim, diff, foldLeft, nonCommutative, randomBytes, withCallbacks } from './sim.test-util.ts';

const SIZES = [1, 2, 3, 4, 5, 7, 8];
const OPS: Array<[string, ByteOp]> = [
  ['commutative sum', SUM_I32],
  ['sum as non-commutative', nonCommutative(SUM_I32)],
  ['matrix product', MATMUL],
];

function recorder(tuning: CollTuning = DEFAULT_COLL_TUNING): CollOptions & { seen: Set<string> } {
  const seen = new Set<string>();
  return { tuning, seen, onSelect: (c, a) => seen.add(`${c}:${a}`) };
}

const contributions = (p: number, n: number, op: ByteOp, salt: number): Uint8Array[] =>
  Array.from({ length: p }, (_, r) => randomBytes(n, 7919 * r + n + salt, op));

describe('allreduce', () => {
  const long: CollTuning = { ...DEFAULT_COLL_TUNING, allreduceShortBytes: 0 };
  const short: CollTuning = { ...DEFAULT_COLL_TUNING, allreduceShortBytes: Infinity };
  for (const [name, op] of OPS) {
    for (const [label, tuning] of [['short', short], ['long', long]] as const) {
      it.each(SIZES)(`${name}, ${label} table: p=%i, counts 0 / 1 / 3 / 10000, in place`, async (p) => {
        const expected = new Set<string>();
        for (const items of [0, 1, 3, 10_000]) {
          for (const inPlace of [false, true]) {
            const n = items * op.itemBytes;
            const xs = contributions(p, n, op, items);
            const want = foldLeft(op, xs);
            const opts = recorder(tuning);
            const sim = new Sim(p, { seed: items + p + (inPlace ? 5 : 0) });
            const out = await sim.run(async (pt, r) => {
              const send = xs[r]!.slice();
              if (inPlace) {
                await allreduce(pt, 9, null, send, op, opts);
                return send;
              }
              const recv = new Uint8Array(n);
              await allreduce(pt, 9, send, recv, op, opts);
              expect(diff(send, xs[r]!)).toBe('');
              return recv;
            });
            out.forEach((b) => expect(diff(b, want)).toBe(''));
            for (const s of opts.seen) if (s.startsWith('allreduce:')) expected.add(s);
          }
        }
        // The table picked what this case is meant to exercise.
        if (label === 'short') expect(expected).toEqual(new Set(['allreduce:recursive-doubling']));
        else if (op.commute) expect(expected.has('allreduce:rabenseifner')).toBe(true);
        else expect(expected.has('allreduce:reduce-bcast')).toBe(true);
      });
    }
  }

  // Without options, a vector of at most allreduceShortBytes takes the byte-only recursive doubling
  // (allreduce.ts shortAllreduce, short-allreduce.ts's machine) without asking the table: it must agree with the table
  // and give the rank-ordered result.
  it('the table picks recursive doubling for every short vector, whatever the op', () => {
    for (let size = 1; size <= 9; size++) {
      for (const bytes of [0, 1, 8, DEFAULT_COLL_TUNING.allreduceShortBytes]) {
        for (const commute of [true, false]) {
          expect(selectAlgorithm('allreduce', { size, bytes, items: bytes, commute })).toBe('recursive-doubling');
        }
      }
    }
  });

  for (const [name, op] of OPS) {
    it.each(SIZES)(`${name}, short vectors without options: p=%i, in place and not`, async (p) => {
      const maxItems = Math.floor(DEFAULT_COLL_TUNING.allreduceShortBytes / op.itemBytes);
      for (const items of [0, 1, 3, maxItems]) {
        for (const inPlace of [false, true]) {
          const n = items * op.itemBytes;
          const xs = contributions(p, n, op, items + 11);
          const want = foldLeft(op, xs);
          const sim = new Sim(p, { seed: items * 3 + p + (inPlace ? 1 : 0) });
          const out = await sim.run(async (pt, r) => {
            const send = xs[r]!.slice();
            if (inPlace) {
              await allreduce(pt, 9, null, send, op);
              return send;
            }
            const recv = new Uint8Array(n);
            await allreduce(pt, 9, send, recv, op);
            expect(diff(send, xs[r]!)).toBe('');
            return recv;
          });
          out.forEach((b) => expect(diff(b, want)).toBe(''));
        }
      }
    });
  }

  // The lean path (lean-allreduce.ts) enters shortAllreduce straight: one exchange with the peer on
  // 2 processes, log2(p) exchanges on a power of two, no extra rounds.
  it.each([
    [1, 0],
    [2, 2],
    [4, 8],
    [5, 2 + 8],
  ])('shortAllreduce: p=%i sends %i messages and leaves the sum in recv, in place and not', async (p, messages) => {
    for (const inPlace of [false, true]) {
      const xs = contributions(p, 8, SUM_I32, p + 5);
      const want = foldLeft(SUM_I32, xs);
      const sim = new Sim(p, { seed: p });
      const out = await sim.run(async (pt, r) => {
        const recv = inPlace ? xs[r]!.slice() : new Uint8Array(8);
        await shortAllreduce(pt, 4, inPlace ? null : xs[r]!, recv, SUM_I32);
        return recv;
      });
      out.forEach((b) => expect(diff(b, want)).toBe(''));
      expect(sim.messages).toBe(messages);
    }
  });

  it('recursive doubling uses 2 * rem + pof2 * log2(pof2) messages', async () => {
    const sim = new Sim(6);
    await sim.run((pt) => allreduce(pt, 1, new Uint8Array(4), new Uint8Array(4), SUM_I32));
    expect(sim.messages).toBe(2 + 2 + 4 * 2);
  });
});

describe('scan / exscan', () => {
  for (const [name, op] of OPS) {
    it.each(SIZES)(`${name}: p=%i, counts 0 / 1 / 10000, in place`, async (p) => {
      for (const items of [0, 1, 10_000]) {
        for (const inPlace of [false, true]) {
          const n = items * op.itemBytes;
          const xs = contributions(p, n, op, 3 * items);
          const sim = new Sim(p, { seed: 3 + items + p });
          const out = await sim.run(async (pt, r) => {
            const send = xs[r]!.slice();
            const recv = inPlace ? send : new Uint8Array(n);
            await scan(pt, 4, inPlace ? null : send, recv, op);
            return recv;
          });
          out.forEach((b, r) => expect(diff(b, foldLeft(op, xs.slice(0, r + 1)))).toBe(''));

          const sim2 = new Sim(p, { seed: 4 + items + p });
          const sentinel = 0xab;
          const out2 = await sim2.run(async (pt, r) => {
            const send = xs[r]!.slice();
            const recv = inPlace ? send : new Uint8Array(n).fill(sentinel);
            await exscan(pt, 4, inPlace ? null : send, recv, op);
            return recv;
          });
          out2.forEach((b, r) => {
            if (r === 0) expect(diff(b, inPlace ? xs[0]! : new Uint8Array(n).fill(sentinel))).toBe(''); // untouched
            else expect(diff(b, foldLeft(op, xs.slice(0, r)))).toBe('');
          });
        }
      }
    });
  }
});

describe('reduceScatterBlock', () => {
  // The long table sends every commutative input to pairwise exchange (the 8 MiB case's choice).
  const long: CollTuning = { ...DEFAULT_COLL_TUNING, reduceScatterLongBytes: 0 };
  for (const [name, op] of OPS) for (const [label, tuning] of [['default', DEFAULT_COLL_TUNING], ['long', long]] as const) {
    it.each(SIZES)(`${name}, ${label} table: p=%i, blocks of 0 / 1 / 2500 items, in place`, async (p) => {
      const seen = new Set<string>();
      for (const items of [0, 1, 2500]) {
        for (const inPlace of [false, true]) {
          const bb = items * op.itemBytes;
          const xs = contributions(p, p * bb, op, 5 * items);
          const want = foldLeft(op, xs);
          const opts = recorder(tuning);
          const sim = new Sim(p, { seed: 6 + items + p });
          const out = await sim.run(async (pt, r) => {
            if (inPlace) {
              const buf = xs[r]!.slice();
              await reduceScatterBlock(pt, 8, null, buf, bb, op, opts);
              return buf.subarray(0, bb);
            }
            const recv = new Uint8Array(bb);
            await reduceScatterBlock(pt, 8, xs[r]!, recv, bb, op, opts);
            return recv;
          });
          out.forEach((b, r) => expect(diff(b, want.subarray(r * bb, r * bb + bb))).toBe(''));
          for (const s of opts.seen) if (s.startsWith('reduceScatterBlock:')) seen.add(s);
        }
      }
      const halving = op.commute && (p & (p - 1)) === 0;
      const algorithm = op.commute && tuning === long ? 'pairwise' : halving ? 'recursive-halving' : 'reduce-scatter';
      expect(seen).toEqual(new Set([`reduceScatterBlock:${algorithm}`]));
    });
  }
});

describe('reduceScatterBlock selection', () => {
  const x = (size: number, bytes: number, commute = true) => ({ size, bytes, items: bytes / 4, commute });
  it('takes pairwise from REDSCAT_COMMUTATIVE_LONG_MSG_SIZE (512 KiB in all) up, commutative only, any p', () => {
    expect(selectAlgorithm('reduceScatterBlock', x(4, 8 * 1024 * 1024))).toBe('pairwise');
    expect(selectAlgorithm('reduceScatterBlock', x(3, 524288))).toBe('pairwise');
    expect(selectAlgorithm('reduceScatterBlock', x(4, 524284))).toBe('recursive-halving');
    expect(selectAlgorithm('reduceScatterBlock', x(4, 8 * 1024 * 1024, false))).toBe('reduce-scatter');
  });
  it('pairwise on 1 MiB in 4 ranks, in place and not, results where MPI puts them, scratch reused', async () => {
    const op = SUM_I32;
    const p = 4;
    const bb = 256 * 1024;
    const rounds = [0, 1].map((k) => contributions(p, p * bb, op, 3 + k));
    const sim = new Sim(p, { seed: 12, rendezvousBytes: 4096 });
    const out = await sim.run(async (pt, r) => {
      const recv = new Uint8Array(bb);
      const opts = recorder();
      await reduceScatterBlock(pt, 8, rounds[0]![r]!, recv, bb, op, opts);
      expect([...opts.seen]).toEqual(['reduceScatterBlock:pairwise']);
      const buf = rounds[1]![r]!.slice();
      await reduceScatterBlock(pt, 9, null, buf, bb, op);
      return [recv, buf.subarray(0, bb)];
    });
    rounds.forEach((xs, k) => {
      const want = foldLeft(op, xs);
      out.forEach((res, r) => expect(diff(res[k]!, want.subarray(r * bb, r * bb + bb))).toBe(''));
    });
  });
});

describe('reduceScatter (varying blocks)', () => {
  /** Block sizes in items for rank count p: some zero, some large, uneven. */
  const countsOf = (p: number, scale: number): number[] => Array.from({ length: p }, (_, i) => (i % 3 === 1 ? 0 : (i + 1) * scale + (i % 2)));
  for (const [name, op] of OPS) {
    it.each(SIZES)(`${name}: p=%i, uneven blocks with zeros, small and large, in place`, async (p) => {
      const seen = new Set<string>();
      for (const scale of [0, 1, 700]) {
        for (const inPlace of [false, true]) {
          const blockBytes = countsOf(p, scale).map((c) => c * op.itemBytes);
          const total = blockBytes.reduce((a, b) => a + b, 0);
          const displs = blockBytes.map((_, i) => blockBytes.slice(0, i).reduce((a, b) => a + b, 0));
          const xs = contributions(p, total, op, 11 * scale);
          const want = foldLeft(op, xs);
          const opts = recorder();
          const sim = new Sim(p, { seed: 17 + scale + p });
          const out = await sim.run(async (pt, r) => {
            if (inPlace) {
              const buf = xs[r]!.slice();
              await reduceScatter(pt, 8, null, buf, blockBytes, op, 'ReduceScatter', opts);
              return buf.subarray(0, blockBytes[r]!);
            }
            const recv = new Uint8Array(blockBytes[r]!);
            await reduceScatter(pt, 8, xs[r]!, recv, blockBytes, op, 'ReduceScatter', opts);
            expect(diff(xs[r]!, foldLeft(op, [xs[r]!]))).toBe('');
            return recv;
          });
          out.forEach((b, r) => expect(diff(b, want.subarray(displs[r]!, displs[r]! + blockBytes[r]!))).toBe(''));
          for (const s of opts.seen) if (s.startsWith('reduceScatter:')) seen.add(s);
        }
      }
      expect(seen).toEqual(new Set([`reduceScatter:${op.commute ? 'pairwise' : 'reduce-scatterv'}`]));
    });
  }
});


describe('planAllreduce (persistent allreduce, planned at init)', () => {
  // A plan is started again and again on the same buffers with new inputs: each start must reduce
  // the inputs of that start, in place or not, short or long; the choice is made once, at init.
  for (const [name, op] of OPS) {
    for (const callbacks of [false, true]) {
      it.each([1, 2, 3, 4, 5, 6, 7])(`${name}: p=%i, three starts of a short and a long vector, in place and not${callbacks ? ', callback entries' : ''}`, async (p) => {
        for (const items of [0, 3, 1500]) {
          for (const inPlace of [false, true]) {
            const n = items * op.itemBytes;
            let allreduceChoices = 0;
            const opts: CollOptions | undefined = items > 3 ? { onSelect: (c) => { if (c === 'allreduce') allreduceChoices++; } } : undefined;
            const sim = new Sim(p, { seed: 41 + p + items });
            const starts = [0, 1, 2].map((k) => contributions(p, n, op, 31 * k + items));
            const out = await sim.run(async (pt, r) => {
              const send = new Uint8Array(n);
              const recv = new Uint8Array(n);
              const plan = planAllreduce(p, inPlace ? null : send, recv, op, opts)(callbacks ? withCallbacks(pt) : pt, 20);
              const results: Uint8Array[] = [];
              for (let k = 0; k < starts.length; k++) {
                (inPlace ? recv : send).set(starts[k]![r]!);
                await runPlan(plan);
                results.push(recv.slice());
              }
              return results;
            });
            starts.forEach((xs, k) => {
              const want = foldLeft(op, xs);
              out.forEach((results) => expect(diff(results[k], want)).toBe(''));
            });
            // One choice per rank, at init, whatever the number of starts.
            if (opts !== undefined) expect(allreduceChoices).toBe(p === 1 ? 1 : p);
          }
        }
      });
    }
  }

  it('a short plan names a rank whose vector has another length (ERR_COUNT), on both ranks', async () => {
    const sim = new Sim(2, { seed: 5 });
    const out = await sim.run(async (pt, r) => {
      const n = r === 0 ? 8 : 12;
      const plan = planAllreduce(2, new Uint8Array(n), new Uint8Array(n), SUM_I32)(withCallbacks(pt), 3);
      return runPlan(plan).then(() => 'resolved', (e: { errorClass?: number; message?: string }) => `${e.errorClass}: ${e.message}`);
    });
    for (const o of out) expect(o).toMatch(new RegExp(`^${ERR_COUNT}: MPI_ERR_COUNT: collective: rank [01] contributed (8|12) bytes where this rank`));
  });

  it('doublingSchedule: every send has its receive, in the same step order on both sides', () => {
    for (let p = 1; p <= 9; p++) {
      const pairs = new Map<string, number[]>();
      for (let r = 0; r < p; r++) {
        const s = doublingSchedule(r, p);
        expect(s.length % 2).toBe(0);
        for (let i = 0; i < s.length; i += 2) {
          const kind = s[i]!;
          const peer = s[i + 1]!;
          expect(peer).toBeGreaterThanOrEqual(0);
          expect(peer).toBeLessThan(p);
          expect(peer).not.toBe(r);
          // 1 sends, 2 and 4 receive, 3 does both: record what r sends to peer and what peer must receive from r.
          if (kind & 1) (pairs.get(`${r}>${peer}`) ?? pairs.set(`${r}>${peer}`, []).get(`${r}>${peer}`)!).push(i);
          if (kind !== 1) (pairs.get(`${peer}>${r}:recv`) ?? pairs.set(`${peer}>${r}:recv`, []).get(`${peer}>${r}:recv`)!).push(i);
        }
      }
      for (const [k, v] of pairs) if (!k.endsWith(':recv')) expect(pairs.get(`${k}:recv`)?.length, `p=${p} ${k}`).toBe(v.length);
      for (const [k, v] of pairs) if (k.endsWith(':recv')) expect(pairs.get(k.slice(0, -5))?.length, `p=${p} ${k}`).toBe(v.length);
    }
  });
});

describe('reduceScatter pairwise: pipelined steps and reused scratch', () => {
  // Overlapping calls on one thread (every simulated rank shares the scratch pool) must each get
  // their own receive blocks; the one-step-ahead receive must not overwrite a block before it is combined.
  it.each([3, 4, 5, 8])('p=%i: three overlapping calls, then a fourth reusing the kept scratch', async (p) => {
    const op = SUM_I32;
    const blockBytes = Array.from({ length: p }, (_, i) => (300 + 7 * i) * op.itemBytes);
    const total = blockBytes.reduce((a, b) => a + b, 0);
    const displs = blockBytes.map((_, i) => blockBytes.slice(0, i).reduce((a, b) => a + b, 0));
    const rounds = [0, 1, 2, 3].map((k) => contributions(p, total, op, 101 * k));
    const sim = new Sim(p, { seed: 29 + p, rendezvousBytes: 16 });
    const out = await sim.run(async (pt, r) => {
      const recvs = rounds.map(() => new Uint8Array(blockBytes[r]!));
      // Round 3 runs in place, after the others: its scratch comes from the pool the others filled.
      await Promise.all([0, 1, 2].map((k) => reduceScatter(pt, 10 + k, rounds[k]![r]!, recvs[k]!, blockBytes, op, 'ReduceScatter')));
      const buf = rounds[3]![r]!.slice();
      await reduceScatter(pt, 13, null, buf, blockBytes, op, 'ReduceScatter');
      recvs[3] = buf.subarray(0, blockBytes[r]!);
      return recvs;
    });
    rounds.forEach((xs, k) => {
      const want = foldLeft(op, xs);
      out.forEach((recvs, r) => expect(diff(recvs[k], want.subarray(displs[r]!, displs[r]! + blockBytes[r]!))).toBe(''));
    });
  });
});

describe('mismatched operands (coll/mismatch.ts)', () => {
  // Two ranks with vectors of different lengths: a user's mistake, reported as ERR_COUNT, never ERR_INTERN.
  const lengths = [8, 12];
  it.each([
    ['allreduce (short: recursive doubling on bytes)', (pt: CollPt2pt, v: Uint8Array) => allreduce(pt, 3, v, new Uint8Array(v.length), SUM_I32)],
    ['allreduce (non-commutative: the byte fold)', (pt: CollPt2pt, v: Uint8Array) => allreduce(pt, 3, v, new Uint8Array(v.length), nonCommutative(SUM_I32))],
    ['scan', (pt: CollPt2pt, v: Uint8Array) => scan(pt, 3, v, new Uint8Array(v.length), SUM_I32)],
  ])('%s', async (_name, call) => {
    const sim = new Sim(2, { seed: 1 });
    await expect(sim.run((pt, r) => call(pt, new Uint8Array(lengths[r]!)))).rejects.toMatchObject({ errorClass: ERR_COUNT, call: 'collective' });
  });
});
