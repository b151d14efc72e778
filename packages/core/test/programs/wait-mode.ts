// argv[2]: the wait mode MPI.config() must report ('poll' or 'block'). Runs short blocking calls
// (allreduce), then a wait longer than the poll budget (the peer sleeps first), then short calls again:
// a rank that polled must still be woken once it has gone to sleep, and poll again afterwards.
import { setTimeout as sleep } from 'node:timers/promises';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

const expected = process.argv[2];
await MPI.init();
const world = MPI.COMM_WORLD;
equal(MPI.config().wait, expected, 'MPI.config().wait');
const sum = (world.size * (world.size + 1)) / 2;
const send = new Float64Array([world.rank + 1]);
const recv = new Float64Array(1);
const shortCalls = async (): Promise<void> => {
  for (let i = 0; i < 300; i++) {
    recv[0] = 0;
    await world.Allreduce(send, recv, MPI.SUM);
    equal(recv[0], sum, `allreduce ${i}`);
  }
};
await shortCalls();
// Rank 0 waits in recv for rank size-1, which sleeps well past the 20 ms budget first.
const last = world.size - 1;
if (world.rank === last) {
  await sleep(200);
  await world.send('late', 0, 7);
}
if (world.rank === 0) equal(await world.recv(last, 7), 'late', 'message after a long wait');
await world.barrier();
await shortCalls();
const rank = world.rank;
await MPI.finalize();
console.log(`wait-mode OK ${rank}`);
