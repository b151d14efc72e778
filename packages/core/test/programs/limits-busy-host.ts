// A full injection ring while the thread that hosts the channel is busy (issue 17, limits):
// in --progress inline the main thread hosts the channels; a worker issues 300 eager isends of
// 64 KiB (about 19 MiB, against a 4 MiB ring) while the main thread computes for BUSY_MS without
// entering MPI. The worker waits for room (it sleeps, it does not fail), and once the main thread
// returns to its event loop every message arrives, in order. 2 processes; argv[2] = BUSY_MS.
import { once } from 'node:events';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';
import { fillPattern, patternMismatch } from './limits-pattern.ts';

const N = 300;
const SIZE = 64 << 10;

if (isMainThread) {
  const busyMs = Number(process.argv[2] ?? 3000);
  await MPI.init({ threadLevel: 'multiple' });
  const world = MPI.COMM_WORLD;
  equal(MPI.config().progress, 'inline', 'progress mode of the test');
  if (world.rank === 0) {
    const w = new MPI.Worker(new URL(import.meta.url), { workerData: {} });
    await once(w, 'message'); // 'sending'
    const until = Date.now() + busyMs;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1); // busy: the injection ring is not drained
    const [err] = await Promise.race([once(w, 'exit').then(() => [null]), once(w, 'error')]);
    if (err !== null) throw err;
  } else {
    for (let k = 0; k < N; k++) {
      const b = new Uint8Array(SIZE);
      await world.Recv(b, 0, 7);
      equal(patternMismatch(b, k), -1, `message ${k} whole and in order`);
    }
  }
  await world.barrier();
  if (world.rank === 0) console.log('limits-busy-host OK');
  await MPI.finalize();
} else {
  await MPI.init();
  const world = MPI.COMM_WORLD;
  parentPort!.postMessage('sending');
  const reqs = Array.from({ length: N }, (_, k) => world.Isend(fillPattern(new Uint8Array(SIZE), k), 1, 7));
  await MPI.Request.waitall(reqs);
}
