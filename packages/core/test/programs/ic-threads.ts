// Intercommunicator creation from several threads at once (issue 36): on every process, `threads`
// MPI.Worker threads each split their own dup of COMM_WORLD into halves, join the halves with
// createIntercomm (peerComm: that dup, tag: the thread's index), use the intercommunicator
// (allreduce, p2p), dup and merge it, and free everything, `reps` times; the thread whose index
// matches the process's rank parity also dups COMM_SELF each round, so that creations over
// different participants contend for each endpoint's context-id mask (papers/context-id-allocation.txt,
// Figure 1's situation). Completes only if the allocator is deadlock-free across the threads.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

const reps = Number(process.argv[2] ?? 10);
const threads = Number(process.argv[3] ?? 2);
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const perThread: MPI.Comm[] = [];
for (let t = 0; t < threads; t++) perThread.push(await world.dup());
const url = new URL('./ic-threads-worker.ts', import.meta.url);
const ws = perThread.map((comm, index) => new MPI.Worker(url, { workerData: { index, comm, reps } }));
const results = (await Promise.all(ws.map((w) => once(w, 'message')))).map(([m]) => m as { index: number; done: number });
for (const r of results) equal(r.done, reps, `thread ${r.index} finished every round`);
for (const c of perThread) c.free();
await world.barrier();
console.log(`ic-threads OK ${world.rank}`);
await MPI.finalize();
