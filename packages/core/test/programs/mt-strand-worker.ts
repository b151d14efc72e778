// Worker of mt-strand.ts: 'compute' sends, then computes without MPI until its
// process has the peer's answer (or giveUpMs passes) and reports whether it
// came; 'exit' sends without waiting and ends at once.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const data = MPI.workerData as { role: 'compute' | 'exit'; flag?: Int32Array; giveUpMs?: number };
const world = MPI.COMM_WORLD;
if (data.role === 'compute') {
  await world.send('from the computing thread', 1, 700);
  const t0 = Date.now();
  let x = 0;
  while (Atomics.load(data.flag!, 0) === 0 && Date.now() - t0 < data.giveUpMs!) x += Math.sqrt(x + 1);
  parentPort!.postMessage(Atomics.load(data.flag!, 0) === 1 && x >= 0);
} else {
  world.isend([1, 2, 3], 1, 701);
}
