// Worker of ep-route.ts: reads endpoint 1 in `rounds` readings, receiving `perRound` messages from
// the other process's endpoint 0 in each, every one checked in order; after each reading it
// attaches to endpoint 0 (the hand-back) and waits until the reading's socket is gone (every
// sender has left), so the next attach opens a new reading.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { readerSocketName, unixSocketsNamed, waitFor } from './ep-reader-sockets.ts';

await MPI.init();
const { mode, rounds, perRound } = MPI.workerData as { mode: string; rounds: number; perRound: number };
const from = (1 - MPI.COMM_WORLD.rank) * 2;
let inOrder = 0;
for (let r = 0; r < rounds; r++) {
  MPI.threadAttach(1);
  const name = await readerSocketName(MPI.attachedEndpoint(), r + 1);
  // At least the listener: a sender that already saw the route open may have connected too.
  check(unixSocketsNamed(name) >= 1, `round ${r}: this thread reads endpoint 1 in epoch ${r + 1}`);
  if (mode === 'handshake' || r === 0) await MPI.COMM_ENDPOINTS.send(r, from, 8);
  for (let k = 0; k < perRound; k++) {
    const i = r * perRound + k;
    const got = await MPI.COMM_ENDPOINTS.recv<number | { i: number; pad: Uint8Array }>(from, 9);
    const n = typeof got === 'number' ? got : got.i;
    equal(n, i, `round ${r}: message ${i} from endpoint ${from} in order`);
    if (typeof got !== 'number') equal([got.pad.length, got.pad[got.pad.length - 1]], [200_000, i & 0xff], `message ${i}: the rendezvous payload`);
    inOrder++;
  }
  MPI.threadAttach(0);
  await waitFor(() => unixSocketsNamed(name) === 0, `round ${r}: the reader socket of epoch ${r + 1} to close once every sender has left`);
}
parentPort!.postMessage({ inOrder });
