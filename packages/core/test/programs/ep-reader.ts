// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019, first slice): a worker
// thread that attaches to endpoint 1 becomes its reader and listens on the reader's socket, hands
// it back when it attaches elsewhere, reads it again in a new epoch, and hands it back when its
// event loop empties; messages between the two processes' endpoints 1 arrive in order throughout
// (on the reader's path or the engine's: ep-route.ts checks which). Argument: `reader` (readers expected) or `none`.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';
import { readerSocketName, unixSocketsNamed, waitFor, workerEnv } from './ep-reader-sockets.ts';

await MPI.init({ threadLevel: 'multiple' });
const expectReader = process.argv[2] === 'reader';
const rank = MPI.COMM_WORLD.rank;
equal([MPI.COMM_WORLD.size, MPI.config().endpoints], [2, 2], 'job shape');
const worker = new MPI.Worker(new URL('./ep-reader-worker.ts', import.meta.url), { workerData: { expectReader }, env: workerEnv() });
// Listen for the exit before the report arrives: a worker that ends at once can have its last
// message and its exit emitted in one turn of this thread's loop (a hang seen under load).
const exited = once(worker, 'exit');
const [report] = (await once(worker, 'message')) as [{ inOrder: number; readings: number }];
equal(report, { inOrder: 3 * 500, readings: expectReader ? 2 : 0 }, 'the worker\'s messages in order, and its readings');
await exited;
// The worker handed its endpoint back as its event loop emptied: its second reading's socket is gone.
const name = await readerSocketName(rank * 2 + 1, 2);
await waitFor(() => unixSocketsNamed(name) === 0, 'the reader socket of epoch 2 to close after the worker ended');
await MPI.COMM_WORLD.barrier();
if (rank === 0) console.log(`ep-reader OK ${expectReader ? 'reader' : 'none'} ${MPI.config().progress}`);
await MPI.finalize();
