// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019 "The reader dies"): rank
// 0's worker reads endpoint 1, receives two messages from rank 1's main thread (the first by the
// engine path, starting rank 1's connection to the reader; the second on its socket), and
// exits without handing the endpoint back (process.exit in the worker). The job must fail with
// ERR_PROC_FAILED naming endpoint 1, not hang: rank 1 then waits for a message that never comes.
// With argument `heap` the worker holds a million small objects when it exits: Node tears that heap
// down after closing the thread's sockets and before the Worker's 'exit' event, so rank 1 sees the
// socket end, stops, and rank 0 loses rank 1 well before that event (the order under load that
// made rank 0 stop quietly, blaming rank 1: runtime/reader-death.ts). With argument `memory` the
// worker, limited to a heap of 32 MiB (or the next argument's MiB: resourceLimits), allocates until
// Node stops it for memory (ERR_WORKER_OUT_OF_MEMORY): no JavaScript of it runs on the way out,
// nothing marks its death, and tearing a large heap down delays its 'exit' event as `heap` does.
import * as MPI from '@tsmpi/core';
import { isMainThread } from 'node:worker_threads';
import { equal } from './check.ts';
import { readerConnectionReady } from './ep-reader-sockets.ts';

if (!isMainThread) {
  await MPI.init();
  MPI.threadAttach(1);
  await MPI.COMM_ENDPOINTS.send('go', 2, 8);
  equal(await MPI.COMM_ENDPOINTS.recv<string>(2, 9), 'zero', 'the first message, by the engine path');
  equal(await MPI.COMM_ENDPOINTS.recv<string>(2, 9), 'first', 'the second message, on the reader\'s socket');
  const how = (MPI.workerData as { how: string }).how;
  if (how === 'heap') (globalThis as { heldHeap?: unknown }).heldHeap = Array.from({ length: 1_000_000 }, (_, i) => ({ i, s: `x${i}` }));
  if (how === 'memory') {
    const held: unknown[] = [];
    for (let i = 0; ; i++) held.push({ i, s: `x${i}` });
  }
  process.exit(3);
} else {
  await MPI.init({ threadLevel: 'multiple' });
  if (MPI.COMM_WORLD.rank === 0) {
    const how = process.argv[2] ?? 'soon';
    new MPI.Worker(new URL(import.meta.url), { workerData: { how }, ...(how === 'memory' ? { resourceLimits: { maxOldGenerationSizeMb: Number(process.argv[3] ?? 32) } } : {}) });
    // Never answered: the worker's death ends the job first.
    await MPI.COMM_ENDPOINTS.recv(2, 10);
  } else {
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 8), 'go', 'go from the reader');
    await MPI.COMM_ENDPOINTS.send('zero', 1, 9);
    await readerConnectionReady();
    await MPI.COMM_ENDPOINTS.send('first', 1, 9);
    await MPI.COMM_ENDPOINTS.recv(1, 10);
  }
  console.log('ep-reader-dies: not reached');
  await MPI.finalize();
}
