// The MPI endpoints proposal's Listing 1: one thread per endpoint; each attaches
// to its endpoint, and rank 0 of COMM_ENDPOINTS gathers every thread's id.
//   pnpm exec mpiexec -n 2 --endpoints 3 examples/endpoints-hello.ts
// This file is both the main program and the threads' body.
import { isMainThread, threadId } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

if (isMainThread) {
  await MPI.init({ threadLevel: 'multiple' });
  const endpoints = MPI.COMM_CLIQUE.size;
  const threads = Array.from({ length: endpoints }, (_, i) => new MPI.Worker(new URL(import.meta.url), { workerData: { i } }));
  await Promise.all(threads.map((t) => new Promise((resolve) => t.on('exit', resolve))));
  await MPI.finalize();
} else {
  await MPI.init();
  const { i } = MPI.workerData as { i: number };
  MPI.threadAttach(i, MPI.COMM_CLIQUE);
  const { size, rank } = MPI.COMM_ENDPOINTS;
  const ids = await MPI.COMM_ENDPOINTS.gather({ rank, process: process.pid, thread: threadId }, 0);
  if (rank === 0) {
    console.log(`COMM_ENDPOINTS has ${size} endpoints; thread ids gathered at rank 0:`);
    for (const id of ids!) console.log(`  endpoint ${id.rank}: process ${id.process}, thread ${id.thread}`);
  }
}
