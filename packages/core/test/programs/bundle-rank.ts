// Which build of core a rank runs (ADR 0052, issue 38: the bundle its exports name) and that the
// parts core loads at first use load from it: each rank prints the file '@tsmpi/core' resolves to, then sums the ranks, puts its
// rank into its right neighbour's window (windows' origin side: a chunk loaded at the first window)
// and writes and reads back its own block of a file (File's implementation: loaded at the first
// open). Prints "bundle-rank RANK FILE" and "bundle-rank OK" per rank. Any np >= 1; the file goes
// to the directory named by BUNDLE_RANK_DIR.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
console.log(`bundle-rank ${rank} ${fileURLToPath(import.meta.resolve('@tsmpi/core'))}`);

equal(await world.allreduce(rank + 1, MPI.SUM), (size * (size + 1)) / 2, 'allreduce of rank + 1');

const win = await MPI.Win.allocate(4, 4, world);
await win.fence();
win.Put(new Int32Array([rank]), (rank + 1) % size, [0]);
await win.fence();
equal(new Int32Array(win.memory.buffer, win.memory.byteOffset, 1)[0], (rank + size - 1) % size, 'Put from the left neighbour');
await win.free();

const f = await MPI.File.open(world, path.join(process.env.BUNDLE_RANK_DIR!, 'blocks'), MPI.MODE_CREATE | MPI.MODE_RDWR);
await f.WriteAt(rank * 4, new Int32Array([rank * 10]));
await world.barrier();
const back = new Int32Array(1);
await f.ReadAt(((rank + 1) % size) * 4, back);
equal(back[0], ((rank + 1) % size) * 10, 'the right neighbour\'s block');
await f.close();

console.log(`bundle-rank OK`);
await MPI.finalize();
