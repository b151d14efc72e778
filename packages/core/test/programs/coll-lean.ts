// Many small allreduces of every predefined op (and a non-commutative user op) on COMM_WORLD,
// whose collective context the lean path serves (docs/adr/0022-small-collectives-lean.md):
// results against a sequential computation, with the ranks out of step (one rank computes
// between calls, so its peers' messages wait in the lanes as unexpected ones), overlapping
// nonblocking allreduces, messages of two collectives matched out of their order on the wire
// (by tag), other collectives (barrier, bcast, object allreduce) on the same
// context, and a rendezvous-sized allreduce that moves the context to the general path
// (demotion) in the middle, after which the small ones must stay right.
// Args: [progress] the job's --progress (inline: the lean send and receive lanes; threads: neither,
// the general path), to check the lane state.
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { CTX_COLL } from '../../src/api/pt2pt-comm.ts';
import { check, equal, throwsMPI } from './check.ts';
import { affineOf, affineOp, affineSeq } from './affine-op.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const lanes = (process.argv[2] ?? 'inline') === 'inline';
/** receive-lanes.ts LANE_STATE */
const LANE_LEAN = 1;
const LANE_GENERAL = 2;
const ROUNDS = 300;
const collState = (): number => runtime('coll-lean').device.laneState(world.contextId + CTX_COLL);

/** Spins for about `ms` milliseconds (a rank that falls behind its peers). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

// The value of rank r in round k: small integers, so every op's result is exact in FLOAT64.
const v = (r: number, k: number): number => ((r * 7 + k * 3) % 11) - 3;
const ranks = Array.from({ length: size }, (_, r) => r);

const FLOAT_OPS: [MPI.Op, (a: number, b: number) => number][] = [
  [MPI.SUM, (a, b) => a + b], [MPI.PROD, (a, b) => a * b], [MPI.MAX, (a, b) => Math.max(a, b)], [MPI.MIN, (a, b) => Math.min(a, b)],
];
const INT_OPS: [MPI.Op, (a: number, b: number) => number][] = [
  [MPI.BAND, (a, b) => a & b], [MPI.BOR, (a, b) => a | b], [MPI.BXOR, (a, b) => a ^ b],
  [MPI.LAND, (a, b) => Number(a !== 0 && b !== 0)], [MPI.LOR, (a, b) => Number(a !== 0 || b !== 0)],
  [MPI.LXOR, (a, b) => Number((a !== 0) !== (b !== 0))],
];
const { PAIR, affine } = affineOp();

async function smallRounds(phase: string): Promise<void> {
  for (let k = 0; k < ROUNDS; k++) {
    // Rank (k mod size) falls behind this round: its peers run ahead into the next allreduces.
    if (k % 37 === rank) busy(2);
    for (const [op, f] of FLOAT_OPS) {
      const got = new Float64Array(1);
      await world.Allreduce(new Float64Array([v(rank, k)]), got, op);
      equal(got[0], ranks.map((r) => v(r, k)).reduce(f), `${phase} round ${k} Allreduce FLOAT64 ${op.name}`);
    }
    for (const [op, f] of INT_OPS) {
      const got = new Int32Array([v(rank, k) & 5, v(rank, k + 1)]);
      await world.Allreduce(MPI.IN_PLACE, got, op);
      equal([...got], [ranks.map((r) => v(r, k) & 5).reduce(f), ranks.map((r) => v(r, k + 1)).reduce(f)], `${phase} round ${k} Allreduce INT32 ${op.name}`);
    }
    const [a, b] = affineOf(rank, k);
    const pair = new Float64Array(2);
    await world.Allreduce([new Float64Array([a, b]), 1, PAIR], [pair, 1, PAIR], affine);
    equal([...pair], affineSeq(0, size, k), `${phase} round ${k} Allreduce affine (rank order)`);
    // MAXLOC on (value, index) pairs; ties keep the lower index.
    const loc = new Float64Array(2);
    await world.Allreduce(new Float64Array([v(rank, k), rank]), loc, MPI.MAXLOC);
    const best = Math.max(...ranks.map((r) => v(r, k)));
    equal([...loc], [best, ranks.find((r) => v(r, k) === best)!], `${phase} round ${k} Allreduce MAXLOC`);
    // Two nonblocking allreduces in flight at once, completed in reverse order.
    const x = new Float64Array(1);
    const y = new Float64Array(1);
    const rx = world.Iallreduce(new Float64Array([rank + k]), x, MPI.SUM);
    const ry = world.Iallreduce(new Float64Array([rank * k]), y, MPI.MAX);
    await ry.wait();
    await rx.wait();
    equal([x[0], y[0]], [ranks.reduce((s, r) => s + r + k, 0), (size - 1) * k], `${phase} round ${k} overlapping Iallreduce`);
    // Messages from one source out of their collectives' order (4 processes): rank 3 sends its
    // Ibcast's message to rank 1 before its Iallreduce's second-round one, and rank 1 (behind, and
    // starting the Ibcast only once its Iallreduce is done) must match the second one first, by tag.
    if (size === 4) {
      if (rank === 1) busy(1);
      const a = new Float64Array(1);
      const bval = new Float64Array([rank === 3 ? 1000 + k : -1]);
      const rA = world.Iallreduce(new Float64Array([rank + k]), a, MPI.SUM);
      if (rank === 1) {
        await rA.wait();
        await world.Ibcast(bval, 3).wait();
      } else {
        const rB = world.Ibcast(bval, 3);
        await rA.wait();
        await rB.wait();
      }
      equal([a[0], bval[0]], [6 + 4 * k, 1000 + k], `${phase} round ${k} Iallreduce then Ibcast, out of order on the wire`);
    }
    if (k % 50 === 0) {
      await world.barrier();
      equal(await world.bcast(k % size === rank ? `from ${rank}` : null, k % size), `from ${k % size}`, `${phase} round ${k} bcast`);
      equal(await world.allreduce(rank + k, MPI.SUM), ranks.reduce((s, r) => s + r + k, 0), `${phase} round ${k} object allreduce`);
    }
  }
}

// Bad arguments throw the general path's errors, on a first call and again (the lean path keeps
// what it checked per array kind and op, not what failed).
for (let i = 0; i < 2; i++) {
  await throwsMPI(() => world.Allreduce(new Float64Array(1), new Float64Array(1), MPI.BAND), MPI.ERR_OP, 'Allreduce', 'BAND on FLOAT64');
  await throwsMPI(() => world.Allreduce(new Float64Array(3), new Float64Array(3), MPI.MAXLOC), MPI.ERR_COUNT, 'Allreduce', 'MAXLOC on an odd count');
  await throwsMPI(() => world.Iallreduce(new Float64Array(2), new Float64Array(3), MPI.SUM), MPI.ERR_COUNT, 'Iallreduce', 'buffers of different sizes');
}

await smallRounds('first');
// lean=on: every receive of the collective context so far was lean, so the context is LEAN.
if (lanes && size > 1) equal(collState(), LANE_LEAN, 'the collective context is lean after the small allreduces');
if (!lanes) equal(collState(), -1, 'no lanes outside inline progress');
// Checked before this barrier: no peer can send the large allreduce's first frames until this rank has entered it.
await world.barrier();

// A rendezvous-sized allreduce (above the eager limit): its RTS frames move the context to the general path.
const n = 40_000;
const big = new Float64Array(n).fill(rank + 1);
const bigOut = new Float64Array(n);
await world.Allreduce(big, bigOut, MPI.SUM);
check(bigOut.every((x) => x === (size * (size + 1)) / 2), 'the large Allreduce sums every rank');
if (lanes && size > 1) equal(collState(), LANE_GENERAL, 'the collective context is general after a rendezvous');

await smallRounds('after demotion');
await MPI.finalize();
console.log(`coll-lean OK rank ${rank}`);
