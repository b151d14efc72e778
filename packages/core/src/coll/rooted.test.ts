import { describe, expect, it } from 'vitest';
import { bcast } from './bcast.ts';
import { gather, gatherv } from './gather.ts';
import { reduce } from './reduce.ts';
import { scatter, scatterv } from './scatter.ts';
import { DEFAULT_COLL_TUNING, type CollOptions } from './select.ts';
import { MATMUL, SUM_I32, Sim, diff, foldLeft, nonCommutative, randomBytes } from './sim.test-util.ts';

const SIZES = [1, 2, 3, 4, 5, 7, 8];
const rootsOf = (p: number): number[] => [...new Set([0, p - 1, p >> 1])];
const ITEMS = [0, 1, 10_000];

/** Options that record the algorithms chosen. */
function recorder(tuning = DEFAULT_COLL_TUNING): CollOptions & { seen: Set<string> } {
  const seen = new Set<string>();
  return { tuning, seen, onSelect: (c, a) => seen.add(`${c}:${a}`) };
}

describe('bcast', () => {
  const longTuning = { ...DEFAULT_COLL_TUNING, bcastLongBytes: 0, bcastMinProcs: 1 };
  const shortTuning = { ...DEFAULT_COLL_TUNING, bcastLongBytes: Infinity };
  for (const [name, tuning] of [['binomial', shortTuning], ['scatter-allgather', longTuning]] as const) {
    it.each(SIZES)(`${name}: p=%i, every root, 0 / 1 / 7 / 40000 bytes`, async (p) => {
      for (const root of rootsOf(p)) {
        for (const n of [0, 1, 7, 40_000]) {
          const sim = new Sim(p, { seed: p * 100 + root + n });
          const data = randomBytes(n, n + root);
          const opts = recorder(tuning);
          const out = await sim.run(async (pt, r) => {
            const buf = r === root ? data.slice() : new Uint8Array(n);
            await bcast(pt, 7, buf, root, opts);
            return buf;
          });
          for (const b of out) expect(diff(b, data)).toBe('');
          expect(opts.seen).toEqual(new Set([`bcast:${name}`]));
        }
      }
    });
  }

  it('binomial uses p - 1 messages', async () => {
    const sim = new Sim(7);
    await sim.run((pt, r) => bcast(pt, 1, new Uint8Array(3).fill(r === 2 ? 9 : 0), 2));
    expect(sim.messages).toBe(6);
  });
});

describe('reduce', () => {
  for (const [name, op] of [['commutative sum', SUM_I32], ['sum as non-commutative', nonCommutative(SUM_I32)], ['matrix product', MATMUL]] as const) {
    it.each(SIZES)(`${name}: p=%i, several roots and counts, in place at the root`, async (p) => {
      for (const root of rootsOf(p)) {
        for (const items of ITEMS) {
          for (const inPlace of [false, true]) {
            const n = items * op.itemBytes;
            const xs = Array.from({ length: p }, (_, r) => randomBytes(n, 1000 * r + items, op));
            const sim = new Sim(p, { seed: root * 7 + items + (inPlace ? 1 : 0) });
            const out = await sim.run(async (pt, r) => {
              const send = xs[r]!.slice();
              if (r !== root) {
                await reduce(pt, 3, send, null, op, root);
                expect(diff(send, xs[r]!)).toBe(''); // the send buffer is never modified
                return null;
              }
              const recv = inPlace ? send : new Uint8Array(n);
              await reduce(pt, 3, inPlace ? null : send, recv, op, root);
              return recv;
            });
            expect(diff(out[root], foldLeft(op, xs))).toBe('');
          }
        }
      }
    });
  }
});

describe('gather / scatter (equal blocks)', () => {
  it.each(SIZES)('p=%i: gather and scatter, several roots and block sizes, in place', async (p) => {
    for (const root of rootsOf(p)) {
      for (const bb of [0, 1, 5, 40_000]) {
        for (const inPlace of [false, true]) {
          const blocks = Array.from({ length: p }, (_, r) => randomBytes(bb, r * 31 + bb));
          const all = new Uint8Array(p * bb);
          blocks.forEach((b, r) => all.set(b, r * bb));

          const sim = new Sim(p, { seed: root + bb });
          const gathered = await sim.run(async (pt, r) => {
            if (r !== root) {
              await gather(pt, 5, blocks[r]!, null, bb, root);
              return null;
            }
            const recv = new Uint8Array(p * bb);
            if (inPlace) recv.set(blocks[r]!, r * bb);
            await gather(pt, 5, inPlace ? null : blocks[r]!, recv, bb, root);
            return recv;
          });
          expect(diff(gathered[root], all)).toBe('');

          const sim2 = new Sim(p, { seed: root + bb + 1 });
          const scattered = await sim2.run(async (pt, r) => {
            if (r === root && inPlace) {
              await scatter(pt, 6, all.slice(), null, bb, root);
              return blocks[r]!;
            }
            const recv = new Uint8Array(bb);
            await scatter(pt, 6, r === root ? all.slice() : null, recv, bb, root);
            return recv;
          });
          scattered.forEach((b, r) => expect(diff(b, blocks[r]!)).toBe(''));
        }
      }
    }
  });
});

describe('gatherv / scatterv', () => {
  it.each(SIZES)('p=%i: varying counts (some 0), permuted displacements, in place', async (p) => {
    for (const root of rootsOf(p)) {
      for (const inPlace of [false, true]) {
        const counts = Array.from({ length: p }, (_, r) => (r % 3 === 1 ? 0 : (r * 977) % 5000 + r));
        // Blocks stored in reverse rank order with a gap of 3 bytes.
        const displs = new Array<number>(p);
        let at = 2;
        for (let r = p - 1; r >= 0; r--) {
          displs[r] = at;
          at += counts[r]! + 3;
        }
        const total = at;
        const blocks = counts.map((c, r) => randomBytes(c, r + 11));

        const sim = new Sim(p, { seed: 17 + root });
        const out = await sim.run(async (pt, r) => {
          if (r !== root) {
            await gatherv(pt, 2, blocks[r]!, null, root);
            return null;
          }
          const buf = new Uint8Array(total);
          if (inPlace) buf.set(blocks[r]!, displs[r]);
          await gatherv(pt, 2, inPlace ? null : blocks[r]!, { buf, counts, displs }, root);
          return buf;
        });
        const buf = out[root]!;
        for (let r = 0; r < p; r++) expect(diff(buf.subarray(displs[r]!, displs[r]! + counts[r]!), blocks[r]!)).toBe('');

        const sim2 = new Sim(p, { seed: 19 + root });
        const got = await sim2.run(async (pt, r) => {
          if (r === root && inPlace) {
            await scatterv(pt, 2, { buf, counts, displs }, null, root);
            return blocks[r]!;
          }
          const recv = new Uint8Array(counts[r]!);
          await scatterv(pt, 2, r === root ? { buf, counts, displs } : null, recv, root);
          return recv;
        });
        got.forEach((b, r) => expect(diff(b, blocks[r]!)).toBe(''));
      }
    }
  });
});
