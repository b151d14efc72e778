// Worker of mt-mixed.ts. Role 'local': blocks in a receive from its own process.
// Role 'mixed': posts receives alternating ANY_SOURCE and source 1 on one shared tag
// and reports what it got, in posting order.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const { role, index, perThread } = MPI.workerData as { role: 'local' | 'mixed'; index: number; perThread: number };
const world = MPI.COMM_WORLD;
if (role === 'local') {
  const v = await world.recv<string>(world.rank, 500 + index);
  parentPort!.postMessage({ index, v });
} else {
  const reqs = Array.from({ length: perThread }, (_, k) => world.irecv<number>(k % 2 === 0 ? MPI.ANY_SOURCE : 1, 7));
  parentPort!.postMessage({ index, got: await MPI.Request.waitall(reqs) });
}
