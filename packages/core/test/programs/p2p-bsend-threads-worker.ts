// Worker of p2p-bsend-threads.ts: buffered sends into the buffer its main thread attached.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { throwsMPI } from './check.ts';
import { PER_THREAD, messageOf } from './p2p-bsend-threads-body.ts';

await MPI.init();
const { right } = MPI.workerData as { right: number };
const world = MPI.COMM_WORLD;
await throwsMPI(() => MPI.attachBuffer(100), MPI.ERR_BUFFER, 'attachBuffer', 'a worker attaching while its process has a buffer');
for (let i = 0; i < PER_THREAD; i++) await world.Bsend(messageOf(world.rank, 2, i), right, 2);
parentPort!.postMessage('sent');
await new Promise((resolve) => parentPort!.once('message', resolve));
