// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019 Consequences: a reader
// that ends while its senders compute). Rank 0's worker R reads endpoint 1; rank 1's worker S
// (endpoint 2) sends message 0 by the engine path and, once its connection to R carries frames,
// messages 1-9 on it, then computes without returning to its event loop (so it cannot send its FIN)
// and says so in a file. R receives all ten, waits for that file and ends (its event loop empties:
// it hands endpoint 1 back). R's thread must not end before S's FIN: S writes a second file when it
// stops computing, and R's exit must find it. S then returns to its event loop, sends its FIN when
// it sees the route closing, and its connection to R ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { readerConnectionReady, waitFor } from './ep-reader-sockets.ts';

const key = (process.env.TSMPI_PMI_URL ?? 'none').replace(/\W/g, '') /* one job's (its wire-up port); the key leaves process.env at init */;
const computing = path.join(os.tmpdir(), `tsmpi-ep-reader-ends-computing-${key}`);
const computed = path.join(os.tmpdir(), `tsmpi-ep-reader-ends-computed-${key}`);
/** How long S computes once R may end: pacing only (R's end must wait for S whatever this is). */
const COMPUTE_MS = 3_000;

if (!isMainThread) {
  await MPI.init();
  if (MPI.COMM_WORLD.rank === 0) {
    MPI.threadAttach(1);
    // The route's opening went out before `go` on this thread's connection.
    await MPI.COMM_ENDPOINTS.send('go', 2, 8);
    for (let i = 0; i < 10; i++) equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), i, `message ${i} from the sender`);
    await waitFor(() => fs.existsSync(computing), 'the sender to compute');
    parentPort!.postMessage('ending');
    // Returns: the event loop empties and the thread hands endpoint 1 back, then waits for S's FIN.
  } else {
    equal(MPI.attachedEndpoint(), 2, 'the sender is on endpoint 2');
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 8), 'go', 'go from the reader');
    await MPI.COMM_ENDPOINTS.send(0, 1, 9);
    await readerConnectionReady();
    for (let i = 1; i < 10; i++) await MPI.COMM_ENDPOINTS.send(i, 1, 9);
    equal(MPI.stats().readerRoutes.framesSent, 9, 'messages 1-9 took the reader\'s path');
    fs.writeFileSync(computing, 'computing');
    const until = Date.now() + COMPUTE_MS;
    while (Date.now() < until) { /* computes: no event loop, so no FIN */ }
    fs.writeFileSync(computed, 'computed');
    // Back in the event loop: the route watcher sends the FIN and the connection to R ends.
    await waitFor(() => MPI.stats().readerRoutes.ready === 0, 'this thread\'s connection to the reader to end after its FIN');
    parentPort!.postMessage('done');
  }
} else {
  await MPI.init({ threadLevel: 'multiple' });
  const rank = MPI.COMM_WORLD.rank;
  const worker = new MPI.Worker(new URL(import.meta.url));
  const exited = new Promise<boolean>((resolve) => worker.once('exit', () => resolve(fs.existsSync(computed))));
  const [said] = await new Promise<unknown[]>((resolve) => worker.once('message', (m) => resolve([m])));
  equal(said, rank === 0 ? 'ending' : 'done', 'the worker\'s report');
  const afterSender = await exited;
  if (rank === 0) check(afterSender, 'the reader ended only after its sender stopped computing (its FIN)');
  await MPI.COMM_WORLD.barrier();
  if (rank === 0) {
    fs.rmSync(computing, { force: true });
    fs.rmSync(computed, { force: true });
    console.log(`ep-reader-ends OK ${MPI.config().progress}`);
  }
  await MPI.finalize();
}
