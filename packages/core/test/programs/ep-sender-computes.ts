// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019 Left item 1: a sender
// that computes right after joining a route): rank 0's worker reads endpoint 1 and sends `go`; rank
// 1's worker (endpoint 2, not a reader: it never attaches) receives it, so it sees the route open,
// isends 100 eager messages to endpoint 1, awaits them and computes without returning to its event loop until
// the reader says (in a file: no MPI message can reach a thread that does not run) that it has
// received all of them, in order. Its connection to the reader needs its event loop to open, so
// every message must take the engine path: none waits for that connection.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const N = 100;
const marker = path.join(os.tmpdir(), `tsmpi-ep-sender-computes-${(process.env.TSMPI_PMI_URL ?? 'none').replace(/\W/g, '') /* one job's (its wire-up port); the key leaves process.env at init */}`);

if (!isMainThread) {
  await MPI.init();
  if (MPI.COMM_WORLD.rank === 0) {
    MPI.threadAttach(1);
    // The route's opening went out before `go` on this thread's connection.
    await MPI.COMM_ENDPOINTS.send('go', 2, 8);
    for (let i = 0; i < N; i++) equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), i, `message ${i} in order while the sender computes`);
    fs.writeFileSync(marker, 'received');
  } else {
    equal(MPI.attachedEndpoint(), 2, 'the sender is on endpoint 2');
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 8), 'go', 'go from the reader');
    // Eager isends complete at once; awaiting them ends this microtask, when a thread's frames go out
    // (interface.ts threadConnections), but runs no turn of the event loop, which the handshake of
    // its connection to the reader needs.
    await MPI.Request.waitall(Array.from({ length: N }, (_, i) => MPI.COMM_ENDPOINTS.isend(i, 1, 9)));
    const until = Date.now() + 30_000;
    while (!fs.existsSync(marker)) check(Date.now() < until, 'the reader to receive all 100 messages while this sender computes (deadlock guard, 30 s): its frames waited for this thread');
    // Joined no route: nothing went to the reader's socket.
    equal(MPI.stats().readerRoutes.framesSent, 0, 'frames this thread sent on a reader\'s path');
  }
  parentPort!.postMessage('done');
} else {
  await MPI.init({ threadLevel: 'multiple' });
  const worker = new MPI.Worker(new URL(import.meta.url));
  // Listen for the exit before the report arrives: the last message and the exit can come in one turn.
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const [done] = await new Promise<unknown[]>((resolve) => worker.once('message', (m) => resolve([m])));
  equal(done, 'done', 'the worker finished');
  await exited;
  await MPI.COMM_WORLD.barrier();
  if (MPI.COMM_WORLD.rank === 0) {
    fs.rmSync(marker, { force: true });
    console.log(`ep-sender-computes OK ${MPI.config().progress}`);
  }
  await MPI.finalize();
}
