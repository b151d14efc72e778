// Worker of mt-busy.ts, in one of three roles:
//   chatty  keeps exchanging messages with its counterpart in the peer process
//   sender  on 'go' from its own process, sends the peer's busy thread its 20 messages
//   busy    posts 20 receives, reports ready, computes BUSY_MS without MPI, then testall
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { busyReceives, spinThenTest } from './mt-busy-body.ts';

await MPI.init();
const { role, index, busyMs } = MPI.workerData as { role: 'chatty' | 'sender' | 'busy'; index: number; busyMs: number };
const world = MPI.COMM_WORLD;
const peer = 1 - world.rank;
// Starting a worker needs its parent's event loop; the busy phase must not begin before every worker runs.
if (role !== 'busy') parentPort!.postMessage('running');
if (role === 'chatty') {
  for (let i = 0; i < 300; i++) {
    const r = world.irecv<number>(peer, 300 + index);
    await world.send(i, peer, 300 + index);
    if ((await r.wait()) !== i) throw new Error(`chatty thread ${index}: round ${i} out of order`);
  }
} else if (role === 'sender') {
  await world.recv(world.rank, 600);
  for (let i = 0; i < 20; i++) await world.Send(Int32Array.of(i), peer, 400 + i);
} else {
  const reqs = busyReceives(world, peer);
  parentPort!.postMessage('ready');
  await new Promise((resolve) => parentPort!.once('message', resolve)); // both processes' receives are posted
  parentPort!.postMessage(spinThenTest(reqs, busyMs));
}
