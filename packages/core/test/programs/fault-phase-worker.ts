/**
 * Worker thread of fault-phase.ts (phase "worker"): loops allreduce on the
 * communicator it was given until the deadline, and tells its parent once it
 * has run `warm` of them, so that the victim's fault hits while the worker
 * is inside a collective.
 */
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const { comm, warm, deadline } = MPI.workerData as { comm: MPI.Comm; warm: number; deadline: number };
for (let i = 0; Date.now() < deadline; i++) {
  if (i === warm) parentPort!.postMessage('warm');
  await comm.allreduce(i, MPI.SUM);
}
