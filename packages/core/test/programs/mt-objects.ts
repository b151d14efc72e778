// MPI objects made in one thread and used in another (issue 3, section 1):
// a derived datatype, a group, a communicator and pending requests cross to a
// worker through workerData and postMessage; a request made in the worker comes
// back to the main thread through parentPort and MPI.dehydrate. 2 processes.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const peer = 1 - world.rank;

const column = MPI.Datatype.vector(3, 1, 2, MPI.INT32).commit();
const group = world.group.incl([1]);
const dup = await world.dup();

// Receives started here, completed and waited on in the worker.
const shared = new Int32Array(new SharedArrayBuffer(6 * 4));
const bufferRecv = world.Irecv(shared, peer, 10);
const objectRecv = world.irecv<{ hello: number }>(peer, 11);
const toCancel = world.irecv(peer, 12);
const newComm = world.idup();

const worker = new MPI.Worker(new URL('./mt-objects-worker.ts', import.meta.url), {
  workerData: { column, group, dup, bufferRecv, objectRecv, toCancel, newComm, shared },
});
const exited = once(worker, 'exit');
// Sent later: the same objects again, through postMessage (MPI.Worker dehydrates them).
worker.postMessage({ column, group, objectRecv });

await world.Send(Int32Array.from([1, 2, 3, 4, 5, 6].map((x) => x + 10 * world.rank)), peer, 10);
await world.send({ hello: world.rank }, peer, 11);

// A request the worker made, waited on here.
const [message] = (await once(worker, 'message')) as [unknown];
const fromWorker = MPI.revive(message) as { req: MPI.Request<string> };
check(fromWorker.req instanceof MPI.Request, 'a request posted by the worker revives as an MPI.Request');
await world.send(`to worker of ${peer}`, peer, 30);
const [got] = await MPI.Request.waitall([fromWorker.req]);
equal(got, `to worker of ${world.rank}`, 'the worker request completes in the main thread with its value');
equal(fromWorker.req.status!.source, peer, 'its status names the source rank');

// What cannot cross says so.
const userOp = MPI.Op.create((a, b) => b.set(a));
await throwsMPI(() => MPI.dehydrate({ userOp }), MPI.ERR_ARG, 'dehydrate', 'a user op holds a function');
const freed = MPI.Datatype.contiguous(2, MPI.INT32).commit();
freed.free();
await throwsMPI(() => MPI.dehydrate([freed]), MPI.ERR_ARG, 'dehydrate', 'a freed datatype');
const gone = MPI.dehydrate(await world.dup());
(MPI.revive(gone) as MPI.Comm).free();
await throwsMPI(() => MPI.revive(gone), MPI.ERR_ARG, 'revive', 'a communicator freed before it was revived');
await throwsMPI(() => MPI.dehydrate(world.RecvInit(new Int32Array(1), peer, 40)), MPI.ERR_ARG, 'dehydrate', 'a persistent request never started');
userOp.free();

const [code] = (await exited) as [number];
equal(code, 0, 'worker exit code');
column.free();
group.free();
dup.free();
await world.barrier();
if (world.rank === 0) console.log('mt-objects OK');
await MPI.finalize();
