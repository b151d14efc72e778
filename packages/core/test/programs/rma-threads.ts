// Windows made and used by worker threads (issue 37, "Windows"; MPICH test/mpi/rma in spirit):
// mpiexec -n 2 --endpoints 3. The main thread starts one MPI.Worker per endpoint of its process
// (rma-threads-worker.ts), each attached to its endpoint, and waits; the workers are the window's
// members over COMM_ENDPOINTS (every thread of every process) or COMM_CLIQUE (the threads of one
// process). Arg: the case (see rma-threads-worker.ts). Prints "rma-threads OK" per process.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const which = process.argv[2]!;
const J = MPI.config().endpoints;
const workers = Array.from({ length: J }, (_, index) => new MPI.Worker(new URL('./rma-threads-worker.ts', import.meta.url), { workerData: { index, which } }));
// A worker whose check fails throws: its 'error' event rejects here and the rank exits non-zero.
const reports = await Promise.all(workers.map((w) => once(w, 'message').then(([m]) => m as string)));
equal(reports, Array.from({ length: J }, () => 'done'), 'every worker finished its case');
await MPI.COMM_WORLD.barrier();
console.log(`rma-threads OK ${which} rank ${MPI.COMM_WORLD.rank}`);
await MPI.finalize();
