// Worker of ep-channels.ts: attaches to endpoint `index`, exchanges with endpoint
// `index` of the other process: `eager` small messages, then (after the parent's
// 'go') ssends and messages above the eager limit, checking content and order.
import { once } from 'node:events';
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init();
const { index, eager } = MPI.workerData as { index: number; eager: number };
MPI.threadAttach(index);
const comm = MPI.COMM_ENDPOINTS;
const J = MPI.COMM_CLIQUE.size;
const me = comm.rank;
const peer = me < J ? me + J : me - J;

const got = Array.from({ length: eager }, () => comm.irecv<number>(peer, 1));
for (let k = 0; k < eager; k++) await comm.isend(me * 1_000_000 + k, peer, 1).wait();
equal(await Promise.all(got.map((r) => r.wait())), Array.from({ length: eager }, (_, k) => peer * 1_000_000 + k), `thread ${index}: eager messages in order`);
parentPort!.postMessage('phase 1 done');
await once(parentPort!, 'message');

// Larger than the eager limit: rendezvous (RTS, CTS on the pair's channel, DATA).
const big = MPI.config().eagerLimit * 4 + 3;
const pattern = (from: number, k: number): Uint8Array => Uint8Array.from({ length: big }, (_, i) => (i * 7 + from * 13 + k) & 255);
for (let k = 0; k < 3; k++) {
  const into = new Uint8Array(big);
  const r = comm.Irecv(into, peer, 2 + k);
  const s = comm.Isend(pattern(me, k), peer, 2 + k);
  await MPI.Request.waitall([r, s]);
  equal(Buffer.compare(Buffer.from(into), Buffer.from(pattern(peer, k))), 0, `thread ${index}: rendezvous message ${k} intact`);
}
// Synchronous sends: complete only once matched (SYNC_ACK on the pair's channel).
const lower = me < peer;
for (let k = 0; k < 5; k++) {
  if (lower) {
    await comm.ssend(k, peer, 9);
    equal(await comm.recv<number>(peer, 9), k, `thread ${index}: ssend answer ${k}`);
  } else {
    equal(await comm.recv<number>(peer, 9), k, `thread ${index}: ssend ${k}`);
    await comm.ssend(k, peer, 9);
  }
}
parentPort!.postMessage(`thread ${index} ok`);
