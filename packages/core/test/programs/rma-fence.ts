// Fence epochs (MPICH test/mpi/rma putfence1, getfence1, accfence1, fetchandadd, compare_and_swap
// in spirit), any np >= 1: every rank puts a pattern into its right neighbour's window and gets its
// left neighbour's back, checked byte for byte, with Win.allocate and Win.create, small and larger
// than one frame (so operations travel in pieces); accumulates with SUM and REPLACE from every rank
// onto one element; GetAccumulate, FetchAndOp, CompareAndSwap; PSCW to the neighbours; the window's
// own rank as a target. Prints "rma-fence OK" per rank.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: (process.env.RMA_THREAD_LEVEL as MPI.ThreadLevel | undefined) ?? 'single' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const np = world.size;
const right = (rank + 1) % np;
const left = (rank + np - 1) % np;

function pattern(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return b;
}

for (const n of [8, 1000, 200_000]) {
  for (const flavor of ['allocate', 'create'] as const) {
    const win = flavor === 'allocate'
      ? await MPI.Win.allocate(2 * n, 1, world)
      : await MPI.Win.create(new Uint8Array(new SharedArrayBuffer(2 * n)), 1, world);
    await win.fence();
    // Put my pattern at [n, 2n) of my right neighbour.
    win.Put(pattern(n, rank), right, [n]);
    await win.fence();
    const mine = win.memory.subarray(n, 2 * n);
    const expected = pattern(n, left);
    for (let i = 0; i < n; i++) if (mine[i] !== expected[i]) check(false, `${flavor} ${n}: byte ${i} is ${mine[i]}, expected ${expected[i]} (from rank ${left})`);
    // Get it back from the right neighbour: it holds my pattern.
    const back = new Uint8Array(n);
    win.Get(back, right, [n, n, MPI.BYTE]);
    await win.fence(MPI.MODE_NOSUCCEED);
    const sent = pattern(n, rank);
    for (let i = 0; i < n; i++) if (back[i] !== sent[i]) check(false, `${flavor} ${n}: got byte ${i} = ${back[i]}, expected ${sent[i]}`);
    await win.free();
  }
}

// Accumulates: every rank adds (rank + 1) to element 0 of rank 0's FLOAT64 and INT64 windows, 10 times each.
{
  const win = await MPI.Win.allocate(8 * 4, 8, world);
  await win.fence();
  for (let i = 0; i < 10; i++) {
    win.Accumulate(new Float64Array([rank + 1]), 0, [0], MPI.SUM);
    win.Accumulate([new BigInt64Array([BigInt(rank + 1)]), MPI.INT64], 0, [1, 1, MPI.INT64], MPI.SUM);
  }
  // REPLACE of element 2 by rank 0 only; MAX of element 3 by all.
  if (rank === 0) win.Accumulate(new Float64Array([42]), 0, [2], MPI.REPLACE);
  win.Accumulate(new Float64Array([rank * 3]), 0, [3], MPI.MAX);
  await win.fence();
  if (rank === 0) {
    const f = new Float64Array(win.memory.buffer, win.memory.byteOffset, 4);
    const total = (10 * np * (np + 1)) / 2;
    equal(f[0], total, 'SUM of FLOAT64 accumulates');
    equal(new BigInt64Array(win.memory.buffer, win.memory.byteOffset + 8, 1)[0], BigInt(total), 'SUM of INT64 accumulates');
    equal(f[2], 42, 'REPLACE');
    equal(f[3], (np - 1) * 3, 'MAX');
  }
  // GetAccumulate with NO_OP reads; FetchAndOp and CompareAndSwap on rank 0's element 0.
  const read = new Float64Array(1);
  win.GetAccumulate(null, read, 0, [0], MPI.NO_OP);
  await win.fence();
  equal(read[0], (10 * np * (np + 1)) / 2, 'GetAccumulate NO_OP reads the sum');
  await win.fence();
  const old = new Float64Array(1);
  win.FetchAndOp(new Float64Array([1]), old, 0, 0, MPI.SUM);
  await win.fence();
  check(old[0]! >= read[0]! && old[0]! < read[0]! + np, `FetchAndOp fetched ${old[0]} (before: ${read[0]})`);
  // CompareAndSwap: only the rank whose compare value matches swaps (all compare with the current value; one wins).
  const cur = read[0]! + np;
  const res = new Float64Array(1);
  win.CompareAndSwap(new Float64Array([-(rank + 1)]), new Float64Array([cur]), res, 0, 0);
  await win.fence();
  const after = new Float64Array(1);
  win.Get(after, 0, [0]);
  await win.fence();
  check(after[0]! < 0 && after[0]! >= -np, `CompareAndSwap: one rank swapped (now ${after[0]})`);
  const winners = new Int32Array(1);
  await world.Allreduce(new Int32Array([res[0] === cur ? 1 : 0]), winners, MPI.SUM);
  equal(winners[0], 1, 'exactly one CompareAndSwap found the compare value (the others found its swap)');
  await win.free();
}

// PSCW: each rank exposes to its left neighbour and accesses its right one.
{
  const win = await MPI.Win.allocate(4 * np, 4, world);
  const wg = world.group;
  const toRight = wg.incl([right]);
  const fromLeft = wg.incl([left]);
  await win.post(fromLeft);
  await win.start(toRight);
  win.Put(new Int32Array([1000 + rank]), right, [rank]);
  await win.complete();
  await win.wait();
  equal(new Int32Array(win.memory.buffer, 0, np)[left], 1000 + left, 'PSCW put from the left neighbour');
  await win.free();
}

console.log(`rma-fence OK rank ${rank}`);
await MPI.finalize();
