// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019 "The reader computes"):
// rank 0's worker reads endpoint 1; rank 1's main thread, once it has the route, sends message 0 (by
// the engine path: it starts its connection to the reader) and, once that connection carries frames
// (readerConnectionReady), message 1 on it. Having received both, the worker computes without
// returning to its event loop until rank 1 says (in a file: no MPI message can reach a thread that
// does not run) that its isends of messages 2-199 (eager) to endpoint 1 have all completed. Then the
// worker receives them, in order, from its socket, where they waited as in a busy process's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { readerConnectionReady } from './ep-reader-sockets.ts';

const N = 200;
const marker = path.join(os.tmpdir(), `tsmpi-ep-reader-computes-${(process.env.TSMPI_PMI_URL ?? 'none').replace(/\W/g, '') /* one job's (its wire-up port); the key leaves process.env at init */}`);

if (!isMainThread) {
  await MPI.init();
  MPI.threadAttach(1);
  // The route's opening went out before `go` on this thread's connection: rank 1 has the route when it gets `go`.
  await MPI.COMM_ENDPOINTS.send('go', 2, 8);
  equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), 0, 'message 0, by the engine path');
  equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), 1, 'message 1, on this reader\'s socket: the sender\'s connection is up');
  const until = Date.now() + 30_000;
  while (!fs.existsSync(marker)) check(Date.now() < until, 'rank 1\'s isends to complete while this reader computes (deadlock guard, 30 s)');
  for (let i = 2; i < N; i++) equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), i, `message ${i} in order after the computation`);
  parentPort!.postMessage('done');
} else {
  await MPI.init({ threadLevel: 'multiple' });
  if (MPI.COMM_WORLD.rank === 0) {
    const worker = new MPI.Worker(new URL(import.meta.url));
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    const [done] = await new Promise<unknown[]>((resolve) => worker.once('message', (m) => resolve([m])));
    equal(done, 'done', 'the reader received every message');
    await exited;
  } else {
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 8), 'go', 'go from the reader');
    await MPI.COMM_ENDPOINTS.send(0, 1, 9);
    await readerConnectionReady();
    await MPI.COMM_ENDPOINTS.send(1, 1, 9);
    await MPI.Request.waitall(Array.from({ length: N - 2 }, (_, i) => MPI.COMM_ENDPOINTS.isend(i + 2, 1, 9)));
    fs.writeFileSync(marker, 'sent');
  }
  await MPI.COMM_WORLD.barrier();
  if (MPI.COMM_WORLD.rank === 1) fs.rmSync(marker, { force: true });
  if (MPI.COMM_WORLD.rank === 0) console.log(`ep-reader-computes OK ${MPI.config().progress}`);
  await MPI.finalize();
}
