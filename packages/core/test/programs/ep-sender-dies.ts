// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019 gap 4: a sending thread
// that dies on a reader's path): rank 0's worker reads endpoint 1; rank 1's worker W (endpoint 2,
// not a reader) sends message 0 (by the engine path: it starts W's connection to the reader) and,
// once that connection carries frames, messages 1-9 on it; the reader answers `got` once it has all
// ten, and rank 1's main thread then terminates W, which never sent its FIN. The reader must take
// the end of W's connection for it: the main thread's `after` still arrives, the reader hands the
// endpoint back and its socket closes, and the job ends normally.
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';
import { readerConnectionReady, readerSocketName, unixSocketsNamed, waitFor, workerEnv } from './ep-reader-sockets.ts';

if (!isMainThread) {
  await MPI.init();
  if (MPI.COMM_WORLD.rank === 0) {
    MPI.threadAttach(1);
    const name = await readerSocketName(1, 1);
    // The route's opening went out before `go` on this thread's connection.
    await MPI.COMM_ENDPOINTS.send('go', 2, 8);
    for (let i = 0; i < 10; i++) equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), i, `message ${i} from the sender that will die`);
    await MPI.COMM_ENDPOINTS.send('got', 2, 11);
    equal(await MPI.COMM_ENDPOINTS.recv<string>(2, 10), 'after', 'the main thread\'s message after the sender died');
    MPI.threadAttach(0);
    await waitFor(() => unixSocketsNamed(name) === 0, 'the reader socket to close: the dead sender\'s connection end taken for its FIN');
    parentPort!.postMessage('done');
  } else {
    equal(MPI.attachedEndpoint(), 2, 'the sender is on endpoint 2');
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 8), 'go', 'go from the reader');
    await MPI.COMM_ENDPOINTS.send(0, 1, 9);
    await readerConnectionReady();
    for (let i = 1; i < 10; i++) await MPI.COMM_ENDPOINTS.send(i, 1, 9);
    // Everything was read before the main thread terminates this thread (no bytes left in its socket).
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 11), 'got', 'the reader has all ten');
    equal(MPI.stats().readerRoutes.framesSent, 9, 'messages 1-9 took the reader\'s path');
    // Keep the event loop alive: an emptying loop would leave the route cleanly (the FIN) before the end.
    setInterval(() => {}, 1000);
    parentPort!.postMessage('sent');
  }
} else {
  await MPI.init({ threadLevel: 'multiple' });
  const worker = new MPI.Worker(new URL(import.meta.url), { env: workerEnv() });
  // Listen for the exit before the report arrives: the last message and the exit can come in one turn.
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const [said] = await new Promise<unknown[]>((resolve) => worker.once('message', (m) => resolve([m])));
  if (MPI.COMM_WORLD.rank === 0) {
    equal(said, 'done', 'the reader finished');
  } else {
    equal(said, 'sent', 'the sender is on the route');
    await worker.terminate();
    await MPI.COMM_ENDPOINTS.send('after', 1, 10);
  }
  await exited;
  await MPI.COMM_WORLD.barrier();
  if (MPI.COMM_WORLD.rank === 0) console.log(`ep-sender-dies OK ${MPI.config().progress}`);
  await MPI.finalize();
}
