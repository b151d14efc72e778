// A stuck start, for the --timeout roll-call (threads.it.test.ts): each process
// starts one MPI.Worker that never reaches MPI.init (late-init-worker.ts waits
// first), while the main thread waits in a receive nobody sends. The roll-call
// must show the worker thread as started but not yet in MPI.init.
import * as MPI from '@tsmpi/core';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
new MPI.Worker(new URL('./late-init-worker.ts', import.meta.url), { workerData: {} });
console.log(`late-init rank ${world.rank} started its worker`);
await world.recv(1 - world.rank, 77);
