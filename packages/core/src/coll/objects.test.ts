import { describe, expect, it } from 'vitest';
import { allgatherBytes } from './allgather.ts';
import { allreduceObjects } from './allreduce.ts';
import { alltoallBytes } from './alltoall.ts';
import { bcastBytes } from './bcast.ts';
import { decodeFrames, encodeFrames } from './frames.ts';
import { gatherBytes } from './gather.ts';
import type { Codec, ObjectOp } from './pt2pt.ts';
import { reduceObjects } from './reduce.ts';
import { scatterBytes } from './scatter.ts';
import { exscanObjects, scanObjects } from './scan.ts';
import { Sim, diff, randomBytes } from './sim.test-util.ts';

const SIZES = [1, 2, 3, 4, 5, 7, 8];
const rootsOf = (p: number): number[] => [...new Set([0, p - 1, p >> 1])];
const text = new TextEncoder();
const untext = new TextDecoder();
const STRING: Codec<string> = { encode: (s) => text.encode(s), decode: (b) => untext.decode(b) };
const CONCAT: ObjectOp<string> = { combine: (a, b) => a + b, commute: false };
const NUMBER: Codec<number> = { encode: (n) => text.encode(String(n)), decode: (b) => Number(untext.decode(b)) };
const MAX: ObjectOp<number> = { combine: (a, b) => Math.max(a, b), commute: true };
const item = (r: number): string => `<${r}>`;
/** Sizes that differ per rank, including empty. */
const bytesOf = (r: number, salt: number): Uint8Array => randomBytes((r * 37 + salt) % 5 === 0 ? 0 : r * 300 + salt, r + salt);

describe('frames', () => {
  it('round-trips empty and varied parts, from any byte offset', () => {
    const parts = [new Uint8Array(0), randomBytes(5, 1), randomBytes(1000, 2), new Uint8Array(0)];
    const bundle = encodeFrames(parts);
    const shifted = new Uint8Array(bundle.length + 3).subarray(3);
    shifted.set(bundle);
    const back = decodeFrames(shifted);
    expect(back.length).toBe(4);
    back.forEach((b, i) => expect(diff(b, parts[i]!)).toBe(''));
    expect(decodeFrames(encodeFrames([]))).toEqual([]);
  });
});

describe('object (variable-size) collectives', () => {
  it.each(SIZES)('bcastBytes / gatherBytes / scatterBytes p=%i, several roots', async (p) => {
    for (const root of rootsOf(p)) {
      for (const n of [0, 3, 20_000]) {
        const data = randomBytes(n, root + n);
        const out = await new Sim(p, { seed: root + n }).run((pt, r) => bcastBytes(pt, 1, r === root ? data : null, root));
        out.forEach((b) => expect(diff(b, data)).toBe(''));
      }
      const gathered = await new Sim(p, { seed: root + 1 }).run((pt, r) => gatherBytes(pt, 2, bytesOf(r, root), root));
      gathered.forEach((g, r) => {
        if (r !== root) expect(g).toBeUndefined();
        else g!.forEach((b, i) => expect(diff(b, bytesOf(i, root))).toBe(''));
      });
      const datas = Array.from({ length: p }, (_, i) => bytesOf(i, root + 7));
      const scattered = await new Sim(p, { seed: root + 2 }).run((pt, r) => scatterBytes(pt, 3, r === root ? datas : undefined, root));
      scattered.forEach((b, r) => expect(diff(b, datas[r]!)).toBe(''));
    }
  });

  it.each(SIZES)('allgatherBytes / alltoallBytes p=%i', async (p) => {
    const all = await new Sim(p, { seed: p }).run((pt, r) => allgatherBytes(pt, 4, bytesOf(r, 3)));
    all.forEach((parts) => parts.forEach((b, i) => expect(diff(b, bytesOf(i, 3))).toBe('')));
    const pair = (s: number, d: number): Uint8Array => randomBytes((s + d) % 3 === 0 ? 0 : 10 * s + d, s * 100 + d);
    const out = await new Sim(p, { seed: p + 1 }).run((pt, r) =>
      alltoallBytes(pt, 5, Array.from({ length: p }, (_, d) => pair(r, d))),
    );
    out.forEach((parts, r) => parts.forEach((b, s) => expect(diff(b, pair(s, r))).toBe('')));
  });

  it.each(SIZES)('object reductions keep rank order (string concatenation) p=%i', async (p) => {
    const full = Array.from({ length: p }, (_, r) => item(r)).join('');
    for (const root of rootsOf(p)) {
      const red = await new Sim(p, { seed: root }).run((pt, r) => reduceObjects(pt, 1, item(r), CONCAT, STRING, root));
      red.forEach((v, r) => expect(v).toBe(r === root ? full : undefined));
    }
    const all = await new Sim(p, { seed: 5 }).run((pt, r) => allreduceObjects(pt, 1, item(r), CONCAT, STRING));
    all.forEach((v) => expect(v).toBe(full));
    const sc = await new Sim(p, { seed: 6 }).run((pt, r) => scanObjects(pt, 1, item(r), CONCAT, STRING));
    sc.forEach((v, r) => expect(v).toBe(full.slice(0, 3 * (r + 1))));
    const ex = await new Sim(p, { seed: 7 }).run((pt, r) => exscanObjects(pt, 1, item(r), CONCAT, STRING));
    ex.forEach((v, r) => expect(v).toBe(r === 0 ? undefined : full.slice(0, 3 * r)));
  });

  it.each(SIZES)('commutative object reduce (max) p=%i', async (p) => {
    const v = (r: number): number => (r * 7919) % 13;
    const want = Math.max(...Array.from({ length: p }, (_, r) => v(r)));
    for (const root of rootsOf(p)) {
      const red = await new Sim(p, { seed: root }).run((pt, r) => reduceObjects(pt, 1, v(r), MAX, NUMBER, root));
      expect(red[root]).toBe(want);
    }
    const all = await new Sim(p).run((pt, r) => allreduceObjects(pt, 1, v(r), MAX, NUMBER));
    all.forEach((x) => expect(x).toBe(want));
  });
});
