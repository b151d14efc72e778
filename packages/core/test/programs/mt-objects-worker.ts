// Worker of mt-objects.ts: uses what the main thread made.
import { once } from 'node:events';
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const peer = 1 - world.rank;
const data = MPI.workerData as {
  column: MPI.Datatype; group: MPI.Group; dup: MPI.Comm; shared: Int32Array;
  bufferRecv: MPI.Request; objectRecv: MPI.Request<{ hello: number }>; toCancel: MPI.Request<unknown>; newComm: MPI.Request<MPI.Comm>;
};
const [posted] = (await once(parentPort!, 'message')) as [unknown];
const later = MPI.revive(posted) as { column: MPI.Datatype; group: MPI.Group; objectRecv: MPI.Request<{ hello: number }> };

// The group: the same members, and the same wrapper for the same object in this thread.
check(data.group instanceof MPI.Group, 'workerData group is an MPI.Group');
equal([data.group.size, data.group.rank], [1, world.rank === 1 ? 0 : MPI.UNDEFINED], 'group size and rank');
check(later.group === data.group, 'the group posted later is the same object in this thread');

// The derived datatype: same layout, committed, usable for communication on the dup'ed communicator.
check(data.column instanceof MPI.Datatype && later.column === data.column, 'the datatype arrives as one MPI.Datatype');
equal([data.column.size, data.column.extent], [12, 20], 'vector(3, 1, 2, INT32) size and extent');
const out = Int32Array.from([1, 2, 3, 4, 5]).map((x) => x * (world.rank + 1));
const into = new Int32Array(5).fill(-1);
await data.dup.Sendrecv([out, 1, data.column], peer, 20, [into, 1, data.column], peer, 20);
equal(Array.from(into), [1, -1, 3, -1, 5].map((x) => (x < 0 ? x : x * (peer + 1))), 'strided exchange with the revived type');

// Requests started by the main thread.
data.toCancel.cancel();
await data.toCancel.wait();
equal(data.toCancel.status!.cancelled, true, 'cancel() from another thread cancels the receive');
await data.bufferRecv.wait();
equal(Array.from(data.shared), [1, 2, 3, 4, 5, 6].map((x) => x + 10 * peer), 'the buffer receive landed in shared memory');
const st = data.bufferRecv.status!;
equal([st.source, st.tag, st.getCount(MPI.INT32)], [peer, 10, 6], 'status of the buffer receive');
equal(await data.objectRecv.wait(), { hello: peer }, 'object receive value');
equal(await later.objectRecv.wait(), { hello: peer }, 'the same request relayed twice gives the value to both');
const [index, comm] = await MPI.Request.waitany([data.newComm]);
equal(index, 0, 'waitany over a relayed idup');
check(comm instanceof MPI.Comm && comm.size === 2, 'idup resolves a live Comm in this thread');
equal(await comm.sendrecv(world.rank, peer, 1, peer, 1), peer, 'the new communicator works here');
check(data.bufferRecv.test(), 'test() on a completed relayed request');

// A request made here, waited on by the main thread.
parentPort!.postMessage(MPI.dehydrate({ req: world.irecv<string>(peer, 30) }));
