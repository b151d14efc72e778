// Run directly (no mpiexec): a job of size 1.
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

equal(await MPI.init(), 'single', 'thread level');
const world = MPI.COMM_WORLD;
equal([world.rank, world.size, MPI.COMM_SELF.size], [0, 1, 1], 'singleton sizes');
const r = world.irecv<string>(0, 3);
await world.send('to myself', 0, 3);
equal(await r.wait(), 'to myself', 'self message');
equal(await world.allreduce(5, MPI.SUM), 5, 'allreduce on one rank');
equal(await MPI.COMM_SELF.bcast('x'), 'x', 'bcast on COMM_SELF');
await MPI.finalize();
console.log('singleton OK');
