import { describe, expect, it } from 'vitest';
import { allgather, allgatherv } from './allgather.ts';
import { alltoall, alltoallv } from './alltoall.ts';
import { barrier } from './barrier.ts';
import { DEFAULT_COLL_TUNING, type CollOptions, type CollTuning } from './select.ts';
import { Sim, diff, randomBytes } from './sim.test-util.ts';

const SIZES = [1, 2, 3, 4, 5, 7, 8];

function recorder(tuning: CollTuning = DEFAULT_COLL_TUNING): CollOptions & { seen: Set<string> } {
  const seen = new Set<string>();
  return { tuning, seen, onSelect: (c, a) => seen.add(`${c}:${a}`) };
}

describe('barrier', () => {
  it.each(SIZES)('p=%i: nobody leaves before the last one enters', async (p) => {
    const sim = new Sim(p, { seed: p });
    const entered: number[] = [];
    let leftEarly = false;
    await sim.run(async (pt, r) => {
      // Stagger the arrivals over several event-loop turns.
      for (let i = 0; i < r * 3; i++) await new Promise((res) => setImmediate(res));
      entered.push(r);
      await barrier(pt, 1);
      if (entered.length !== p) leftEarly = true;
    });
    expect(leftEarly).toBe(false);
    expect(sim.messages).toBe(p * Math.ceil(Math.log2(p)));
  });
});

describe('allgather', () => {
  const ring: CollTuning = { ...DEFAULT_COLL_TUNING, allgatherLongBytes: 0 };
  for (const [label, tuning] of [['default table', DEFAULT_COLL_TUNING], ['ring forced', ring]] as const) {
    it.each(SIZES)(`${label}: p=%i, blocks 0 / 1 / 13 / 40000 bytes, in place`, async (p) => {
      for (const bb of [0, 1, 13, 40_000]) {
        for (const inPlace of [false, true]) {
          const blocks = Array.from({ length: p }, (_, r) => randomBytes(bb, r + 3 * bb));
          const all = new Uint8Array(p * bb);
          blocks.forEach((b, r) => all.set(b, r * bb));
          const opts = recorder(tuning);
          const sim = new Sim(p, { seed: bb + p });
          const out = await sim.run(async (pt, r) => {
            const recv = new Uint8Array(p * bb);
            if (inPlace) recv.set(blocks[r]!, r * bb);
            await allgather(pt, 2, inPlace ? null : blocks[r]!, recv, bb, opts);
            return recv;
          });
          out.forEach((b) => expect(diff(b, all)).toBe(''));
          const pow2 = (p & (p - 1)) === 0;
          const want = tuning === ring || !pow2 || p * bb >= tuning.allgatherLongBytes ? 'ring' : 'recursive-doubling';
          expect(opts.seen).toEqual(new Set([`allgather:${want}`]));
        }
      }
    });
  }

  it.each(SIZES)('allgatherv p=%i: varying counts (some 0), gaps, in place', async (p) => {
    for (const inPlace of [false, true]) {
      const counts = Array.from({ length: p }, (_, r) => (r === 1 ? 0 : 100 * r + 7));
      const displs: number[] = [];
      let at = 1;
      for (let r = 0; r < p; r++) {
        displs.push(at);
        at += counts[r]! + 5;
      }
      const blocks = counts.map((c, r) => randomBytes(c, r + 99));
      const sim = new Sim(p, { seed: 21 + p });
      const out = await sim.run(async (pt, r) => {
        const buf = new Uint8Array(at);
        if (inPlace) buf.set(blocks[r]!, displs[r]);
        await allgatherv(pt, 3, inPlace ? null : blocks[r]!, { buf, counts, displs });
        return buf;
      });
      for (const buf of out) for (let r = 0; r < p; r++) expect(diff(buf.subarray(displs[r]!, displs[r]! + counts[r]!), blocks[r]!)).toBe('');
    }
  });
});

describe('alltoall', () => {
  const bruck: CollTuning = { ...DEFAULT_COLL_TUNING, alltoallShortBytes: Infinity, alltoallBruckMinProcs: 1 };
  const pairwise: CollTuning = { ...DEFAULT_COLL_TUNING, alltoallShortBytes: -1 };
  for (const [name, tuning] of [['bruck', bruck], ['pairwise', pairwise]] as const) {
    it.each(SIZES)(`${name}: p=%i, blocks 0 / 1 / 9 / 4000 bytes, in place`, async (p) => {
      for (const bb of [0, 1, 9, 4000]) {
        for (const inPlace of [false, true]) {
          // block (s -> d) is randomBytes(bb, s * 64 + d)
          const block = (s: number, d: number): Uint8Array => randomBytes(bb, s * 64 + d + bb);
          const opts = recorder(tuning);
          const sim = new Sim(p, { seed: p + bb });
          const out = await sim.run(async (pt, r) => {
            const send = new Uint8Array(p * bb);
            for (let d = 0; d < p; d++) send.set(block(r, d), d * bb);
            const recv = inPlace ? send : new Uint8Array(p * bb);
            await alltoall(pt, 4, inPlace ? null : send, recv, bb, opts);
            return recv;
          });
          out.forEach((recv, r) => {
            for (let s = 0; s < p; s++) expect(diff(recv.subarray(s * bb, s * bb + bb), block(s, r))).toBe('');
          });
          expect(opts.seen).toEqual(new Set([`alltoall:${name}`]));
        }
      }
    });
  }

  it.each(SIZES)('alltoallv p=%i: per-pair counts (some 0), reversed displacements, in place', async (p) => {
    const count = (s: number, d: number): number => ((s + 2 * d) % 3 === 0 ? 0 : 50 * s + d + 1);
    const block = (s: number, d: number): Uint8Array => randomBytes(count(s, d), 1000 * s + d);
    const layout = (counts: number[]): number[] => {
      const displs = new Array<number>(counts.length);
      let at = 3;
      for (let i = counts.length - 1; i >= 0; i--) {
        displs[i] = at;
        at += counts[i]! + 2;
      }
      return displs;
    };
    for (const inPlace of [false, true]) {
      // In place (MPI): the send layout is the receive layout, so counts must be symmetric.
      const c = inPlace ? (s: number, d: number): number => count(Math.min(s, d), Math.max(s, d)) : count;
      const b = inPlace ? (s: number, d: number): Uint8Array => randomBytes(c(s, d), 1000 * s + d) : block;
      const sim = new Sim(p, { seed: 33 + p });
      const out = await sim.run(async (pt, r) => {
        const sendCounts = Array.from({ length: p }, (_, d) => c(r, d));
        const recvCounts = Array.from({ length: p }, (_, s) => c(s, r));
        const sd = layout(sendCounts);
        const rd = layout(recvCounts);
        const sendBuf = new Uint8Array(sd[0]! + sendCounts[0]! + 2);
        for (let d = 0; d < p; d++) sendBuf.set(b(r, d), sd[d]);
        const recvBuf = new Uint8Array(rd[0]! + recvCounts[0]! + 2);
        if (inPlace) {
          for (let d = 0; d < p; d++) recvBuf.set(b(r, d), rd[d]);
          await alltoallv(pt, 5, null, { buf: recvBuf, counts: recvCounts, displs: rd });
        } else {
          await alltoallv(pt, 5, { buf: sendBuf, counts: sendCounts, displs: sd }, { buf: recvBuf, counts: recvCounts, displs: rd });
        }
        return recvCounts.map((n, s) => recvBuf.subarray(rd[s]!, rd[s]! + n));
      });
      out.forEach((blocks, r) => blocks.forEach((got, s) => expect(diff(got, b(s, r))).toBe('')));
    }
  });
});
