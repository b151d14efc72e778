// Thread body of fig1.ts. Figure 1 of papers/context-id-allocation.txt: the thread whose
// index equals its process's rank first dups COMM_SELF; then every thread dups its
// per-thread communicator (shared with the same thread index in the other process).
// Phase 2: concurrent createGroup on COMM_WORLD from every thread, distinct tags.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const { index, perThread, reps, phase } = MPI.workerData as { index: number; perThread: MPI.Comm; reps: number; phase: 'fig1' | 'createGroup' };
const rank = MPI.COMM_WORLD.rank;
if (phase === 'fig1') {
  // Both threads of the process start round 0 together (released by the main thread, whatever
  // their start-up times); then the sibling thread takes the mask and waits in its allreduce for
  // this thread's counterpart before this thread asks for the mask: the figure's interleaving.
  parentPort!.postMessage('ready');
  await new Promise((resolve) => parentPort!.once('message', resolve));
  for (let i = 0; i < reps; i++) {
    if (i === 0 && index === rank) await new Promise((resolve) => setTimeout(resolve, 1000));
    if (index === rank) {
      const self = await MPI.COMM_SELF.dup();
      self.free();
    }
    const mine = await perThread.dup();
    if (mine.size !== 2) throw new Error('dup of the per-thread communicator has the wrong size');
    // The new communicator works: a token exchange with the other process's thread.
    const got = await mine.sendrecv(rank, 1 - mine.rank, 0, 1 - mine.rank, 0);
    if (got !== 1 - rank) throw new Error(`thread ${index}: exchange on the dup gave ${String(got)}`);
    mine.free();
  }
  parentPort!.postMessage({ index, done: reps });
} else {
  const world = MPI.COMM_WORLD;
  const all = world.group;
  const ids: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c = await world.createGroup(all, 100 + index);
    ids.push(c!.contextId);
    const sum = await c!.allreduce(1, MPI.SUM);
    if (sum !== world.size) throw new Error(`thread ${index}: allreduce on createGroup result gave ${sum}`);
    c!.free();
  }
  parentPort!.postMessage({ index, done: reps, ids });
}
