// MPI.abort called in an MPI.Worker thread ends the whole job (issue 13):
// rank 1's worker aborts with code 7 while both main threads wait in a receive
// that never comes. 2 processes.
import * as MPI from '@tsmpi/core';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
if (world.rank === 1) new MPI.Worker(new URL('./abort-worker-worker.ts', import.meta.url));
await world.recv(MPI.ANY_SOURCE, 99); // never sent: only the abort ends this
console.log('abort-worker: the job went on after MPI.abort');
await MPI.finalize();
