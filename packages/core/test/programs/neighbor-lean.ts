// The neighbourhood collectives' step-machine path (coll/neighbor-peers.ts) over real processes:
// many rounds of NeighborAlltoall, IneighborAlltoall, NeighborAllgather and NeighborAlltoallInit on
// plain typed arrays (the lean path: some rounds find their messages there and finish within the
// call, others wait), each round's every block checked against what its source sent: periodic
// grids whose neighbours repeat (adjacent blocks), non-periodic edges (PROC_NULL slots untouched),
// a distributed graph with a repeated edge whose blocks are not adjacent, overlapping nonblocking
// calls, alternating arrays, zero counts, and block sizes that differ between ranks (an MPIError
// naming the call, and the communicator still usable). Run with 2, 4 or 6 processes.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const ROUNDS = 60;
const B = 16; // doubles per block (128 bytes: the per-peer algorithm)

/** The value of item k of block j that rank `from` sends in round `round`. */
const value = (from: number, j: number, k: number, round: number): number => from * 1e6 + round * 1e3 + j * 100 + k;

/** Block j of `from` in `round`, for `outdegree` blocks. */
function sendOf(from: number, outdegree: number, round: number): Float64Array {
  const out = new Float64Array(outdegree * B);
  for (let j = 0; j < outdegree; j++) for (let k = 0; k < B; k++) out[j * B + k] = value(from, j, k, round);
  return out;
}

/** Checks every slot i of `got`: from sources[i] its block pairs[i], or the sentinel -1 for PROC_NULL. */
function expectBlocks(got: Float64Array, sources: readonly number[], pairs: readonly number[], round: number, what: string): void {
  const want = new Float64Array(sources.length * B).fill(-1);
  sources.forEach((s, i) => {
    if (s === MPI.PROC_NULL) return;
    for (let k = 0; k < B; k++) want[i * B + k] = value(s, pairs[i]!, k, round);
  });
  equal(Array.from(got), Array.from(want), `${what} round ${round}`);
}

/** A Cartesian communicator's sources in neighbour order, and the block each sends to the slot (2d takes 2d + 1, and back). */
function cartSources(cart: MPI.CartComm): { sources: number[]; pairs: number[] } {
  const sources: number[] = [];
  const pairs: number[] = [];
  for (let d = 0; d < cart.ndims; d++) {
    const [lo, hi] = cart.shift(d, 1);
    sources.push(lo, hi);
    pairs.push(2 * d + 1, 2 * d);
  }
  return { sources, pairs };
}

// 1. Cartesian grids: repeated neighbours (a periodic dimension of size 1 or 2), and non-periodic edges.
const grids: [number[], boolean[]][] = [
  [[1, size], [true, true]],
  [[size], [false]],
  [[size / 2, 2], [true, false]],
  [[size], [true]],
];
for (const [dims, periods] of grids) {
  if (!dims.every(Number.isInteger)) continue;
  const cart = await world.createCart(dims, periods);
  check(cart !== null, 'a CartComm for every rank');
  const { sources, pairs } = cartSources(cart);
  const deg = sources.length;
  const what = `dims ${dims} periods ${periods}`;
  const got = new Float64Array(deg * B);
  const other = new Float64Array(deg * B);
  const persistentSend = new Float64Array(deg * B);
  const persistentRecv = new Float64Array(deg * B);
  const persistent = cart.NeighborAlltoallInit(persistentSend, persistentRecv);
  for (let round = 0; round < ROUNDS; round++) {
    // blocking, into alternating arrays (the lean path's kept views change)
    const into = round % 2 === 0 ? got : other;
    into.fill(-1);
    await cart.NeighborAlltoall(sendOf(rank, deg, round), into);
    expectBlocks(into, sources, pairs, round, `${what} NeighborAlltoall`);
    // two nonblocking calls in flight at once
    const a = new Float64Array(deg * B).fill(-1);
    const b = new Float64Array(deg * B).fill(-1);
    const ra = cart.IneighborAlltoall(sendOf(rank, deg, round + 1000), a);
    const rb = cart.IneighborAlltoall(sendOf(rank, deg, round + 2000), b);
    await MPI.Request.waitall([rb, ra]);
    expectBlocks(a, sources, pairs, round + 1000, `${what} IneighborAlltoall (first)`);
    expectBlocks(b, sources, pairs, round + 2000, `${what} IneighborAlltoall (second)`);
    // persistent, planned at init: every start sends the buffer's contents of that moment
    persistentSend.set(sendOf(rank, deg, round + 3000));
    persistentRecv.fill(-1);
    persistent.start();
    await persistent.wait();
    expectBlocks(persistentRecv, sources, pairs, round + 3000, `${what} NeighborAlltoallInit`);
    // allgather: the one block goes to every neighbour
    const ag = new Float64Array(deg * B).fill(-1);
    await cart.NeighborAllgather(sendOf(rank, 1, round), ag);
    expectBlocks(ag, sources, sources.map(() => 0), round, `${what} NeighborAllgather`);
  }
  persistent.free();
  // zero counts: nothing moves, every form completes
  await cart.NeighborAlltoall(new Float64Array(0), new Float64Array(0));
  await cart.IneighborAllgather(new Float64Array(0), new Float64Array(0)).wait();
  const empty = cart.NeighborAlltoallInit(new Int32Array(0), new Int32Array(0));
  for (let i = 0; i < 3; i++) {
    empty.start();
    await empty.wait();
  }
  empty.free();
  cart.free();
}

// 2. A distributed graph with a repeated edge whose receive blocks are not adjacent: r -> next twice.
const next = (rank + 1) % size;
const prev = (rank + size - 1) % size;
const dg = await world.createDistGraphAdjacent([prev, next, prev], [next, prev, next]);
for (let round = 0; round < ROUNDS; round++) {
  const got = new Float64Array(3 * B).fill(-1);
  await dg.NeighborAlltoall(sendOf(rank, 3, round), got);
  // the k-th block from a to b meets b's k-th slot for a: slots 0 and 2 get prev's blocks 0 and 2
  expectBlocks(got, [prev, next, prev], [0, 1, 2], round, 'dist graph with a repeated edge');
}

// 3. Block sizes that differ between ranks: rank 0 passes blocks twice as long. Its neighbours get
// ERR_TRUNCATE (its message does not fit their blocks); rank 0, on 2 processes (one neighbour,
// two packed blocks), ERR_COUNT (the message is not two of its blocks), on more (a neighbour per
// block) nothing: a message shorter than its receive block is allowed, as for any receive. Ranks
// that do not neighbour rank 0 succeed; every message is consumed, so the communicator works afterwards.
const ring = await world.createCart([size], [true]);
check(ring !== null, 'a ring');
const mine = rank === 0 ? 2 * B : B;
const touches0 = rank === 0 || ring.shift(0, 1).includes(0);
const call = () => ring.NeighborAlltoall(new Float64Array(2 * mine).fill(rank), new Float64Array(2 * mine));
if (rank === 0 && size === 2) await throwsMPI(call, MPI.ERR_COUNT, 'NeighborAlltoall', 'rank 0 with longer blocks, two packed from its one neighbour');
else if (rank === 0) await call();
else if (touches0) await throwsMPI(call, MPI.ERR_TRUNCATE, 'NeighborAlltoall', 'a neighbour of rank 0 with shorter blocks');
else await call();
await world.barrier();
const after = new Float64Array(2 * B).fill(-1);
await ring.NeighborAlltoall(sendOf(rank, 2, 7), after);
expectBlocks(after, [prev, next], [1, 0], 7, 'the ring after a mismatch');

dg.free();
ring.free();
await MPI.finalize();
console.log(`neighbor-lean OK rank ${rank}`);
