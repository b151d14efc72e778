// Worker of ep-reader.ts: reads endpoint 1 (epoch 1), moves to endpoint 0, reads endpoint 1 again
// (epoch 2), exchanging 500 messages with the other process's worker in each phase, each checked
// in order; then its event loop empties and the thread ends (the reader hands back at beforeExit).
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';
import { readerSocketName, unixSocketsNamed, waitFor } from './ep-reader-sockets.ts';

await MPI.init();
const { expectReader } = MPI.workerData as { expectReader: boolean };
const J = MPI.COMM_CLIQUE.size;
const N = 500;
let inOrder = 0;
let readings = 0;

/** N messages each way between this thread's endpoint and the same index in the other process, in order. */
async function exchange(round: number): Promise<void> {
  const ep = MPI.attachedEndpoint();
  const peer = ep < J ? ep + J : ep - J;
  const sends = Array.from({ length: N }, (_, i) => MPI.COMM_ENDPOINTS.isend(round * N + i, peer, 7));
  for (let i = 0; i < N; i++) {
    const got = await MPI.COMM_ENDPOINTS.recv<number>(peer, 7);
    equal(got, round * N + i, `round ${round}: message ${i} from endpoint ${peer} in order`);
    inOrder++;
  }
  await MPI.Request.waitall(sends);
}

/** Attaches to local endpoint 1 and checks that its reader socket of `epoch` listens (or, without readers, that none does). */
async function attachAndRead(epoch: number): Promise<void> {
  MPI.threadAttach(1);
  const name = await readerSocketName(MPI.attachedEndpoint(), epoch);
  if (expectReader) {
    // The listener, and maybe already the connections of senders that saw the route open.
    await waitFor(() => unixSocketsNamed(name) >= 1, `the reader socket of endpoint 1, epoch ${epoch}`);
    readings++;
  } else {
    equal(unixSocketsNamed(name), 0, 'no reader socket without endpointReceive=thread where it applies');
  }
}

await attachAndRead(1);
await exchange(0);
// Moving hands endpoint 1 back: its socket of epoch 1 closes.
MPI.threadAttach(0);
const first = await readerSocketName(MPI.attachedEndpoint() + 1, 1);
await waitFor(() => unixSocketsNamed(first) === 0, 'the reader socket of epoch 1 to close after threadAttach(0)');
await exchange(1);
await attachAndRead(2);
await exchange(2);
if (!expectReader) equal(unixSocketsNamed(await readerSocketName(MPI.attachedEndpoint(), 1)), 0, 'still no reader socket');
parentPort!.postMessage({ inOrder, readings });
