// The deadlock scenario of papers/context-id-allocation.txt, Figure 1, with real
// threads: 2 processes x 2 threads. With TSMPI_CTXID_ALGO=original it deadlocks
// (the test runs it under --timeout and expects the roll-call); with the new
// algorithm it completes `reps` times in a row (argv[2], default 50). Then every
// thread calls createGroup on COMM_WORLD concurrently with its own tag.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

const reps = Number(process.argv[2] ?? 50);
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
equal(world.size, 2, 'two processes');
const perThread = [await world.dup(), await world.dup()];
const url = new URL('./fig1-worker.ts', import.meta.url);
const run = async (phase: 'fig1' | 'createGroup', threads: number): Promise<{ index: number; done: number; ids?: number[] }[]> => {
  const ws = Array.from({ length: threads }, (_, index) => new MPI.Worker(url, { workerData: { index, perThread: perThread[index % 2], reps, phase } }));
  if (phase === 'fig1') {
    await Promise.all(ws.map((w) => once(w, 'message'))); // 'ready'
    for (const w of ws) w.postMessage('go');
  }
  return (await Promise.all(ws.map((w) => once(w, 'message')))).map(([m]) => m as { index: number; done: number; ids?: number[] });
};
for (const r of await run('fig1', 2)) equal(r.done, reps, `figure 1: thread ${r.index} finished every round`);
const groups = await run('createGroup', 3);
for (const r of groups) equal(r.done, reps, `createGroup: thread ${r.index} finished every round`);
await world.barrier();
if (world.rank === 0) console.log(`fig1 OK (${reps} rounds, ${JSON.stringify(MPI.config())})`);
await MPI.finalize();
