// Dynamic processes used from worker threads (issue 37; ADR 0040): mpiexec -n 2 with spare slots.
// The parents (threadLevel 'multiple') start an MPI.Worker before the spawn ("early": it gets the
// intercommunicator by postMessage after the spawn returned), spawn 2 children of this program,
// then start a second MPI.Worker with the intercommunicator in its workerData ("late"). Each child
// starts one MPI.Worker, which takes MPI.getParent() itself. The threads exchange messages over the
// intercommunicator (parent threads to every child's thread and back), then the parents' late
// thread and the children's thread merge it and allreduce; parent rank 0's early thread also spawns
// one child of its own over COMM_SELF ('self-child') and exchanges a message with it
// (spawn-threads-worker.ts). Needs 5 slots. Prints "spawn-threads OK" per parent and child.
// argv: [role]: 'parent' (default), 'child' or 'self-child'.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const role = process.argv[2] ?? 'parent';
const WORKER = new URL('./spawn-threads-worker.ts', import.meta.url);

/** Resolves with a worker's report ('done'); its error (a failed check) rejects, so the rank exits non-zero. */
function report(w: MPI.Worker): Promise<string> {
  return once(w, 'message').then(([m]) => m as string);
}

if (role === 'self-child') {
  // Spawned by a parent's worker thread over COMM_SELF: one parent, a world of one.
  const parent = MPI.getParent();
  check(parent !== null, 'self-child: a parent');
  equal([parent.remoteSize, world.size], [1, 1], 'self-child: one parent thread\'s COMM_SELF, a world of one');
  const m = (await parent.recv(0, 5)) as { from: number };
  await parent.send({ from: m.from, answer: true }, 0, 6);
  await parent.disconnect();
  console.log('spawn-threads self-child OK');
} else if (role === 'child') {
  const parent = MPI.getParent();
  check(parent !== null, 'child: a parent');
  const w = new MPI.Worker(WORKER, { workerData: { role: 'child' } });
  equal(await report(w), 'done', 'child: its worker finished');
  await parent.disconnect();
  console.log(`spawn-threads child OK ${world.rank}/${world.size}`);
} else {
  const early = new MPI.Worker(WORKER, { workerData: { role: 'early', program: process.argv[1]! } });
  // The early thread is inside MPI (init returned) before the spawn grows the job.
  equal(await report(early), 'ready', 'parent: the early worker is ready');
  const inter = await world.spawn(process.argv[1]!, ['child'], 2);
  early.postMessage({ inter });
  const late = new MPI.Worker(WORKER, { workerData: { role: 'late', inter } });
  equal(await Promise.all([report(early), report(late)]), ['done', 'done'], 'parent: both workers finished');
  await inter.disconnect();
  console.log(`spawn-threads OK ${world.rank}/${world.size}`);
}
await MPI.finalize();
