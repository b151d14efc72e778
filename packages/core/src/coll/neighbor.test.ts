// Neighborhood exchange over the simulator: halo pairing when a neighbour appears twice (periodic
// rings of 1 and 2 ranks, a periodic 2x2 grid), PROC_NULL blocks untouched, rendezvous-sized blocks,
// both algorithms of the equal-block form (one message per neighbour, one per block), the object form.
import { describe, expect, it } from 'vitest';
import { ERR_COUNT, ERR_TRUNCATE, MPIError, PROC_NULL } from '../util/index.ts';
import { neighborAlltoall, neighborAlltoallBytes, neighborAlltoallv, type NeighborPlan } from './neighbor.ts';
import { DEFAULT_COLL_TUNING, type CollOptions } from './select.ts';
import { Sim, grid } from './sim.test-util.ts';

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


/** Options that force one algorithm of the equal-block form, and record the one chosen. */
function forced(algorithm: 'per-peer' | 'per-block'): CollOptions & { seen: Set<string> } {
  const seen = new Set<string>();
  return {
    seen,
    tuning: { ...DEFAULT_COLL_TUNING, neighborPackBytes: algorithm === 'per-peer' ? Infinity : -1 },
    onSelect: (c, a) => seen.add(`${c}:${a}`),
  };
}

describe('neighborAlltoall (equal blocks)', () => {
  it.each([
    ['per-peer', 2, 2], ['per-block', 2, 2], ['per-peer', 1, 2], ['per-peer', 2, 3], ['per-peer', 3, 3], ['per-block', 3, 1],
  ] as const)('%s on a periodic %ix%i grid: block i holds what sources[i] sent towards this rank', async (algorithm, rows, cols) => {
    const p = rows * cols;
    for (const bb of [0, 5, 300]) {
      const sim = new Sim(p, { seed: p + bb, rendezvousBytes: 256 });
      const got: Uint8Array[] = [];
      const opts = forced(algorithm);
      await sim.run(async (pt, r) => {
        // send block j: (sender, direction j) in every byte
        const send = new Uint8Array(4 * bb);
        for (let j = 0; j < 4; j++) send.fill(16 * r + j, j * bb, (j + 1) * bb);
        const recv = new Uint8Array(4 * bb).fill(255);
        await neighborAlltoall(pt, 6, grid(rows, cols, r), send, bb, recv, bb, 'NeighborAlltoall', opts);
        got[r] = recv;
      });
      expect([...opts.seen]).toEqual(bb === 0 && algorithm === 'per-block' ? ['neighborAlltoall:per-block'] : [`neighborAlltoall:${algorithm}`]);
      if (bb === 0) continue;
      for (let r = 0; r < p; r++) {
        const { sources } = grid(rows, cols, r);
        // slot 2d (negative side) gets the source's positive-direction block 2d + 1, and back
        const want = sources.map((s, i) => 16 * s + (i % 2 === 0 ? i + 1 : i - 1));
        for (let i = 0; i < 4; i++) {
          expect(got[r]![i * bb], `rank ${r} slot ${i}`).toBe(want[i]);
          expect(got[r]![(i + 1) * bb - 1], `rank ${r} slot ${i} end`).toBe(want[i]);
        }
      }
    }
  });

  it('per-peer on a periodic 2x2 grid sends one message per distinct neighbour: 2 per rank, not 4', async () => {
    const sim = new Sim(4, { seed: 11 });
    await sim.run(async (pt, r) => {
      await neighborAlltoall(pt, 1, grid(2, 2, r), new Uint8Array(4 * 8), 8, new Uint8Array(4 * 8), 8, 'NeighborAlltoall');
    });
    expect(sim.messages).toBe(8);
  });

  it.each([8, 300])('per-peer reuses its packed buffers only once a call has completed: consecutive and overlapping calls (blocks of %i bytes)', async (bb) => {
    const p = 4;
    const plans = Array.from({ length: p }, (_, r) => grid(2, 2, r));
    const sim = new Sim(p, { seed: 21 + bb, rendezvousBytes: 256 });
    const got: Uint8Array[][] = [];
    const sendOf = (r: number, call: number) => {
      const send = new Uint8Array(4 * bb);
      for (let j = 0; j < 4; j++) send.fill(64 * call + 16 * r + j, j * bb, (j + 1) * bb);
      return send;
    };
    await sim.run(async (pt, r) => {
      got[r] = [];
      const one = async (call: number) => {
        const recv = new Uint8Array(4 * bb);
        await neighborAlltoall(pt, 10 + call, plans[r]!, sendOf(r, call), bb, recv, bb, 'NeighborAlltoall');
        got[r]![call] = recv;
      };
      await one(0);
      await one(1);
      await Promise.all([one(2), one(3)]); // two calls in flight on one plan
    });
    for (let r = 0; r < p; r++) {
      const { sources } = plans[r]!;
      for (let call = 0; call < 4; call++) {
        const want = sources.map((s, i) => 64 * call + 16 * s + (i % 2 === 0 ? i + 1 : i - 1));
        expect(Array.from({ length: 4 }, (_, i) => got[r]![call]![i * bb]), `rank ${r} call ${call}`).toEqual(want);
        expect(Array.from({ length: 4 }, (_, i) => got[r]![call]![(i + 1) * bb - 1]), `rank ${r} call ${call} ends`).toEqual(want);
      }
    }
  });

  it('the allgather form (stride 0) sends its one block to each neighbour, packed twice for a repeated one', async () => {
    const sim = new Sim(4, { seed: 2 });
    const got: Uint8Array[] = [];
    await sim.run(async (pt, r) => {
      const recv = new Uint8Array(4 * 3);
      await neighborAlltoall(pt, 3, grid(2, 2, r), Uint8Array.of(r, r, r), 0, recv, 3, 'NeighborAllgather');
      got[r] = recv;
    });
    for (let r = 0; r < 4; r++) {
      expect(Array.from(got[r]!), `rank ${r}`).toEqual(grid(2, 2, r).sources.flatMap((s) => [s, s, s]));
    }
  });

  it('per-peer with a repeated edge whose blocks are not adjacent, and PROC_NULL slots untouched', async () => {
    // rank 0 lists 1 at 0 and 2 (PROC_NULL between); rank 1 lists 0 at 1 and 2
    const plans: NeighborPlan[] = [
      { sources: [1, PROC_NULL, 1], destinations: [1, PROC_NULL, 1], sendOrder: [0, 1, 2] },
      { sources: [PROC_NULL, 0, 0], destinations: [PROC_NULL, 0, 0], sendOrder: [0, 1, 2] },
    ];
    const sim = new Sim(2, { seed: 4 });
    const got: Uint8Array[] = [];
    await sim.run(async (pt, r) => {
      const send = Uint8Array.of(10 * r + 1, 10 * r + 1, 10 * r + 2, 10 * r + 2, 10 * r + 3, 10 * r + 3);
      const recv = new Uint8Array(6).fill(99);
      await neighborAlltoall(pt, 5, plans[r]!, send, 2, recv, 2, 'NeighborAlltoall', forced('per-peer'));
      got[r] = recv;
    });
    // k-th block from a to b meets b's k-th slot for a
    expect(Array.from(got[0]!)).toEqual([12, 12, 99, 99, 13, 13]);
    expect(Array.from(got[1]!)).toEqual([99, 99, 1, 1, 3, 3]);
  });

  it('per-peer: packed blocks of another size than this rank\'s are an ERR_COUNT naming the call', async () => {
    const sim = new Sim(2, { seed: 8 });
    const errors: unknown[] = [];
    await sim.run(async (pt, r) => {
      const bb = r === 0 ? 4 : 2; // rank 1 passes smaller blocks than rank 0
      const plan: NeighborPlan = { sources: [1 - r, 1 - r], destinations: [1 - r, 1 - r], sendOrder: [1, 0] };
      try {
        await neighborAlltoall(pt, 7, plan, new Uint8Array(2 * bb), bb, new Uint8Array(2 * bb), bb, 'NeighborAlltoall', forced('per-peer'));
      } catch (e) {
        errors[r] = e;
      }
    });
    expect(errors[0]).toBeInstanceOf(MPIError);
    expect((errors[0] as MPIError).errorClass).toBe(ERR_COUNT);
    expect((errors[0] as MPIError).message).toMatch(/NeighborAlltoall.*rank 1 sent 4 bytes for 2 blocks of 4 bytes/);
    // rank 0's 8 bytes do not fit rank 1's two blocks of 2: truncation
    expect((errors[1] as MPIError).errorClass).toBe(ERR_TRUNCATE);
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
