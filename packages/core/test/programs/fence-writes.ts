// A fence epoch of Puts costs one socket write at the origin (np 2, --progress inline: the main
// thread's transport writes). The transport writes what a synchronous stretch queued at the next
// microtask (ADR 0061), so a fence must queue its notice in the same stretch as the epoch's Puts:
// an await before it (one with nothing to wait for, as WinOrigin.noticeExchange had) writes the
// Puts alone and then the notice, two writes per epoch, and the 1 MiB Put's epoch took 1.7-2.3x as
// long (notebook 4.78). Counts net.Socket's write calls on rank 0 over EPOCHS epochs of a 1 MiB Put then
// fence, and over as many of a fence alone; prints "fence-writes OK" per rank.
import net from 'node:net';
import * as MPI from '@tsmpi/core';
import { check } from './check.ts';

const EPOCHS = 40;
const BYTES = 1 << 20;

await MPI.init();
const world = MPI.COMM_WORLD;
check(world.size === 2, 'fence-writes runs on 2 processes');
const rank = world.rank;

let writes = 0;
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function counted(this: net.Socket, ...args: Parameters<typeof write>) {
  writes++;
  return write.apply(this, args);
} as typeof write;

const win = await MPI.Win.allocate(BYTES, 1, world);
const data = new Uint8Array(BYTES).fill(7);

async function epochs(put: boolean): Promise<number> {
  await win.fence();
  const before = writes;
  for (let i = 0; i < EPOCHS; i++) {
    if (put && rank === 0) win.Put(data, 1, [0]);
    await win.fence();
  }
  return writes - before;
}

const fenceOnly = await epochs(false);
const withPut = await epochs(true);
// Each epoch: the Put and the notice in one write. A few more for a write the transport splits
// around a payload it sends by reference would still be far from two per epoch.
if (rank === 0) {
  check(fenceOnly <= EPOCHS + 4, `${EPOCHS} fences without Puts made ${fenceOnly} socket writes (one per fence expected)`);
  check(withPut <= EPOCHS + 4, `${EPOCHS} fences after a 1 MiB Put made ${withPut} socket writes (one per epoch expected: the notice joins the Put's write)`);
}
if (rank === 1) check(win.memory[BYTES - 1] === 7, 'the last Put arrived');
await win.free();
console.log(`fence-writes OK rank ${rank}: ${withPut} writes in ${EPOCHS} epochs`);
await MPI.finalize();
