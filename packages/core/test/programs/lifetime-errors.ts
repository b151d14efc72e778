// Object lifetime on error paths (issue 13), 2 processes, run with TSMPI_REQUEST_SLOTS small:
// rank 0 fills every request slot with receives on a derived communicator and datatype, then
// every other way of starting a request fails with ERR_NO_MEM naming its call (Irecv, Issend,
// a rendezvous Isend, irecv, a persistent start, a matched Message's receive). A failed start
// must leave nothing live: liveObjects.request counts only the started requests, the persistent
// request and the Message stay usable, and once the receives are cancelled and the objects
// freed, liveObjects is back where it was before they were made (after a collection under gc);
// the job then exits (a request that kept holding the event loop would hang it).
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const strategy = MPI.config().refcount;
const before = MPI.stats().liveObjects;
const comm = await world.dup();
const type = MPI.Datatype.contiguous(1, MPI.INT32).commit();

if (world.rank === 1) {
  await comm.send('for mprobe', 0, 7);
  equal(await world.recv(0, 8), 'go', 'rank 0 recovered');
  await world.send('after', 0, 9);
} else {
  const msg = await comm.mprobe(1, 7);
  const ps = comm.RecvInit([new Int32Array(1), 1, type], 1, 6);
  const pending: MPI.Request<void>[] = [];
  let failure: unknown = null;
  while (failure === null && pending.length < 1_000_000) {
    try {
      pending.push(comm.Irecv([new Int32Array(1), 1, type], 1, 5));
    } catch (e) {
      failure = e;
    }
  }
  check(failure instanceof MPI.MPIError && failure.errorClass === MPI.ERR_NO_MEM && failure.call === 'Irecv', `the receives ran out of slots with ERR_NO_MEM (${String(failure)})`);
  const live = MPI.stats().liveObjects.request;
  equal(live, before.request + pending.length + 1, 'live requests: the started receives and the persistent one');
  const big = new Uint8Array(MPI.config().eagerLimit + 1);
  await throwsMPI(() => comm.Issend([Int32Array.of(1), 1, type], 1, 5), MPI.ERR_NO_MEM, 'Issend', 'Issend');
  await throwsMPI(() => comm.Isend(big, 1, 5), MPI.ERR_NO_MEM, 'Isend', 'a rendezvous Isend');
  await throwsMPI(() => comm.irecv(1, 5), MPI.ERR_NO_MEM, 'irecv', 'irecv');
  await throwsMPI(() => ps.start(), MPI.ERR_NO_MEM, 'RecvInit.start', 'RecvInit start');
  await throwsMPI(() => msg.irecv(), MPI.ERR_NO_MEM, 'Message.irecv', 'Message.irecv');
  equal(MPI.stats().liveObjects.request, live, 'the failed starts left no live request');
  for (const r of pending) r.cancel();
  await MPI.Request.waitall(pending);
  check(pending.every((r) => r.status?.cancelled === true), 'every receive was cancelled');
  equal(await msg.irecv().wait(), 'for mprobe', 'the Message is still receivable after its failed receive');
  ps.start(); // inactive after its failed start, so it starts again
  ps.cancel();
  await ps.wait();
  ps.free();
  comm.free();
  type.free();
  if (strategy === 'gc') for (let i = 0; i <= 64; i++) MPI.Op.create(() => undefined).free(); // the 65th creation collects
  // (under gc the ops freed after that collection wait for the next one: finalize's, which the test checks)
  equal({ ...MPI.stats().liveObjects, op: before.op }, before, 'liveObjects back to where they were before the communicator and datatype');
  await world.send('go', 1, 8);
  equal(await world.recv(1, 9), 'after', 'traffic after the errors');
}
if (world.rank === 1) {
  comm.free();
  type.free();
}
console.log(`lifetime-errors OK (refcount ${strategy}, rank ${world.rank})`);
await MPI.finalize();
