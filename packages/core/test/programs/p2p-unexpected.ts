// 10,000 small messages arrive before any receive is posted, then drain in order.
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const N = 10_000;
if (world.rank === 0) {
  const reqs = [];
  for (let i = 0; i < N; i++) reqs.push(world.Isend(Int32Array.of(i), 1, i % 3));
  reqs.push(world.isend('done', 1, 99));
  await MPI.Request.waitall(reqs);
} else if (world.rank === 1) {
  await world.recv(0, 99); // same pair, so every earlier message has arrived: all are unexpected
  // Rank 0's barrier message may also be queued by now, hence >=.
  equal(MPI.stats().unexpectedQueued >= N, true, 'all messages queued as unexpected');
  const b = new Int32Array(1);
  for (let i = 0; i < N; i++) {
    await world.Recv(b, 0, MPI.ANY_TAG);
    if (b[0] !== i) equal(b[0], i, `message ${i} in order`);
  }
  equal(world.iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG), null, 'no point-to-point message left');
}
await world.barrier();
if (world.rank === 0) console.log('p2p-unexpected OK');
await MPI.finalize();
