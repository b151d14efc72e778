// The other send modes and combined calls (issue 36; API.md "More point-to-point"), behaviour of
// MPICH's test/mpi/pt2pt bsend*, rsend*, sendrecv_rep and isendrecv tests re-implemented from their
// descriptions: buffered sends bounded by the attached buffer (ERR_BUFFER when it has no room or
// none is attached), detach waiting for the buffered sends in flight, BsendInit started again and
// again, ready sends to posted receives, SsendInit completing only once matched, SendrecvReplace,
// Isendrecv and IsendrecvReplace around a ring and across an intercommunicator, and the argument
// errors. np >= 2 (a rank's right neighbour must be another process). Run with a small
// --eager-limit, so that a 4 KiB message goes by rendezvous and stays in flight until received.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const rank = world.rank;
const size = world.size;
const right = (rank + 1) % size;
const left = (rank + size - 1) % size;
const BIG = 4096; // above the job's --eager-limit (1024): rendezvous
const fill = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) & 255);
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

// --- buffered: no buffer attached --------------------------------------------------------
await throwsMPI(() => world.Bsend(new Uint8Array(8), right, 1), MPI.ERR_BUFFER, 'Bsend', 'Bsend with no buffer attached');
await throwsMPI(() => world.ibsend({ a: 1 }, right, 1), MPI.ERR_BUFFER, 'ibsend', 'ibsend with no buffer attached');
await throwsMPI(() => MPI.detachBuffer(), MPI.ERR_BUFFER, 'detachBuffer', 'detach with none attached');
await throwsMPI(() => MPI.attachBuffer(0), MPI.ERR_ARG, 'attachBuffer', 'attach of 0 bytes');
await throwsMPI(() => MPI.attachBuffer(-3), MPI.ERR_ARG, 'attachBuffer', 'attach of -3 bytes');
await throwsMPI(() => MPI.attachBuffer('x' as unknown as number), MPI.ERR_ARG, 'attachBuffer', 'attach of a string');

// --- buffered: room for exactly two 4 KiB messages in flight -----------------------------
const space = new Uint8Array(2 * (BIG + MPI.BSEND_OVERHEAD));
MPI.attachBuffer(space);
await throwsMPI(() => MPI.attachBuffer(100), MPI.ERR_BUFFER, 'attachBuffer', 'a second attach');
await throwsMPI(() => world.Bsend(new Uint8Array(space.length), right, 1), MPI.ERR_BUFFER, 'Bsend', 'a message larger than the buffer');
{
  // Two rendezvous messages stay in flight until `right` receives them (after our "go"): a third has no room.
  const a = fill(BIG, 1);
  const b = fill(BIG, 2);
  await world.Bsend(a, right, 10);
  const req = world.Ibsend(b, right, 11);
  check(req.test(), 'Ibsend is complete on return');
  a.fill(0); // the buffer is ours again at once: the copies travel
  b.fill(0);
  try {
    await world.Bsend(new Uint8Array(8), right, 12);
    throw new Error('a third Bsend fit in a full buffer');
  } catch (e) {
    check(e instanceof MPI.MPIError && e.errorClass === MPI.ERR_BUFFER && e.call === 'Bsend', `third Bsend: ${String(e)}`);
    check(/needs 72/.test(e.message) && /bytes free/.test(e.message), `the error names the bytes needed and free: ${e.message}`);
  }
  // detach waits for both: it cannot resolve before `right` has received them, which it does only after "go".
  let detached = false;
  const detaching = MPI.detachBuffer().then((buf) => {
    detached = true;
    return buf;
  });
  await throwsMPI(() => world.Bsend(new Uint8Array(8), right, 12), MPI.ERR_BUFFER, 'Bsend', 'Bsend while detaching');
  // Receive left's two messages only after left's detach has started (its "go" arrives after that).
  const got = [new Uint8Array(BIG), new Uint8Array(BIG)];
  await turns(20);
  check(!detached, 'detach resolved while its buffered sends were still in flight');
  const go = world.send('go', right, 13);
  equal(await world.recv<string>(left, 13), 'go', 'go');
  await go;
  const st = await world.Recv(got[0]!, left, 10);
  await world.Recv(got[1]!, left, 11);
  equal(st.getCount(), BIG, 'buffered message length');
  equal(Array.from(got[0]!.subarray(0, 16)), Array.from(fill(BIG, 1).subarray(0, 16)), 'first buffered message');
  equal(Array.from(got[1]!.subarray(BIG - 16)), Array.from(fill(BIG, 2).subarray(BIG - 16)), 'second buffered message');
  check((await detaching) === space, 'detachBuffer gives back the attached Uint8Array');
}

// --- buffered: object form, BsendInit, many small ones, PROC_NULL ------------------------------
MPI.attachBuffer(1 << 16);
{
  await world.bsend({ from: rank, list: [1, 2, 3] }, right, 20);
  world.ibsend(`hello ${rank}`, right, 21);
  equal(await world.recv(left, 20), { from: left, list: [1, 2, 3] }, 'bsend value');
  equal(await world.recv(left, 21), `hello ${left}`, 'ibsend value');
  const data = new Int32Array(4);
  const init = world.BsendInit(data, right, 22);
  for (let it = 0; it < 5; it++) {
    data.fill(rank * 100 + it);
    init.start();
    check(init.test(), 'BsendInit start completes at once');
  }
  init.free();
  const into = new Int32Array(4);
  for (let it = 0; it < 5; it++) {
    await world.Recv(into, left, 22);
    equal(Array.from(into), [0, 0, 0, 0].map(() => left * 100 + it), `BsendInit message ${it}`);
  }
  for (let i = 0; i < 200; i++) await world.Bsend(new Float64Array([rank, i]), right, 23);
  const f = new Float64Array(2);
  for (let i = 0; i < 200; i++) {
    await world.Recv(f, left, 23);
    equal(Array.from(f), [left, i], `small buffered message ${i}`);
  }
  await world.Bsend(new Uint8Array(1 << 20), MPI.PROC_NULL, 1); // no room needed: nothing is sent
  equal((await MPI.detachBuffer()).length, 1 << 16, 'a size attach detaches a buffer of that size');
}

// --- ready mode: receives posted first, then a barrier --------------------------------------
{
  const into = new Float64Array(3);
  const r1 = world.Irecv(into, left, 30);
  const into2 = new Uint8Array(BIG);
  const r2 = world.Irecv(into2, left, 31);
  const into3 = new Int16Array(2);
  const r3 = world.Irecv(into3, left, 32);
  await world.barrier();
  await world.Rsend(new Float64Array([rank, 1.5, -2]), right, 30);
  const ir = world.Irsend(fill(BIG, rank), right, 31);
  const ri = world.RsendInit(new Int16Array([rank, 7]), right, 32);
  ri.start();
  await Promise.all([r1.wait(), r2.wait(), r3.wait(), ir.wait(), ri.wait()]);
  ri.free();
  equal(Array.from(into), [left, 1.5, -2], 'Rsend');
  equal(Array.from(into2.subarray(0, 8)), Array.from(fill(BIG, left).subarray(0, 8)), 'Irsend');
  equal(Array.from(into3), [left, 7], 'RsendInit');
}

// --- SsendInit: complete only once matched ---------------------------------------------------------
{
  const data = new Int32Array(1);
  const ss = world.SsendInit(data, right, 40);
  for (let it = 0; it < 3; it++) {
    data[0] = rank * 10 + it;
    ss.start();
    await turns(10);
    check(!ss.test(), `SsendInit start ${it} completed before its receive was posted`);
    const into = new Int32Array(1);
    const tok = world.send(it, right, 41); // right posts its receive of our message only after this
    equal(await world.recv<number>(left, 41), it, 'post token');
    await tok;
    await world.Recv(into, left, 40);
    equal(into[0], left * 10 + it, `SsendInit message ${it}`);
    await ss.wait();
  }
  ss.free();
}

// --- SendrecvReplace, Isendrecv, IsendrecvReplace around the ring ---------------------------------
{
  const block = new Float64Array([rank, rank * 2, rank * 3]);
  for (let step = 1; step <= size; step++) {
    const st = await world.SendrecvReplace(block, right, 50, left, 50);
    const from = (rank - step + size * size) % size;
    equal(Array.from(block), [from, from * 2, from * 3], `SendrecvReplace step ${step}`);
    equal([st.source, st.tag, st.getCount(MPI.FLOAT64)], [left, 50, 3], 'SendrecvReplace status');
  }
  const recvbuf = new Int32Array(2);
  // The send's tag is 51 and the receive's 52: each rank also sends a tag-52 message, so the receive completes.
  const req = world.Isendrecv(new Int32Array([rank, -rank]), right, 51, recvbuf, left, 52);
  const extra = world.Isend(new Int32Array([rank, rank]), right, 52);
  await req.wait();
  await extra.wait();
  equal(Array.from(recvbuf), [left, left], 'Isendrecv received the tag-52 message');
  equal([req.status!.source, req.status!.tag, req.status!.getCount(MPI.INT32)], [left, 52, 2], 'Isendrecv status');
  const drain = new Int32Array(2);
  await world.Recv(drain, left, 51);
  equal(Array.from(drain), [left, -left], 'Isendrecv sent');
  const big = fill(BIG, rank);
  const rep = world.IsendrecvReplace(big, right, 53, left, 53);
  await rep.wait();
  equal(Array.from(big.subarray(0, 8)), Array.from(fill(BIG, left).subarray(0, 8)), 'IsendrecvReplace of a rendezvous message');
  equal(rep.status!.source, left, 'IsendrecvReplace status');
  const nul = world.Isendrecv(new Uint8Array(4), MPI.PROC_NULL, 0, new Uint8Array(4), MPI.PROC_NULL, 0);
  await nul.wait();
  equal(nul.status!.source, MPI.PROC_NULL, 'Isendrecv with PROC_NULL');
}

// --- on an intercommunicator: ranks are the remote group's -----------------------------------
{
  const half = (await world.split(rank % 2, rank))!;
  const inter = await half.createIntercomm(0, world, rank % 2 === 0 ? 1 : 0, 5);
  if (inter.rank === 0) {
    // The two leaders swap blocks (remote rank 0 is the other leader) and send a buffered value.
    const block = new Int32Array([rank, rank + 100]);
    const st = await inter.SendrecvReplace(block, 0, 70, 0, 70);
    const other = rank === 0 ? 1 : 0;
    equal([Array.from(block), st.source], [[other, other + 100], 0], 'SendrecvReplace across the intercommunicator');
    MPI.attachBuffer(1024);
    await inter.bsend({ from: rank }, 0, 71);
    equal(await inter.recv(0, 71), { from: other }, 'bsend across the intercommunicator');
    await MPI.detachBuffer();
    const into = new Int32Array(1);
    const req = inter.Isendrecv(new Int32Array([rank]), 0, 72, into, 0, 72);
    await req.wait();
    equal([into[0], req.status!.source], [other, 0], 'Isendrecv across the intercommunicator');
  }
  await throwsMPI(() => inter.Rsend(new Uint8Array(1), inter.remoteSize), MPI.ERR_RANK, 'Rsend', 'Rsend to a rank beyond the remote group');
  inter.free();
  half.free();
}

// --- argument errors name the call -------------------------------------------------------------
await throwsMPI(() => world.Rsend(new Uint8Array(1), size, 0), MPI.ERR_RANK, 'Rsend', 'Rsend dest out of range');
await throwsMPI(() => world.Irsend(new Uint8Array(1), 0, -1), MPI.ERR_TAG, 'Irsend', 'Irsend bad tag');
await throwsMPI(() => world.SsendInit(new Uint8Array(1), -5), MPI.ERR_RANK, 'SsendInit', 'SsendInit bad dest');
await throwsMPI(() => world.BsendInit(new Uint8Array(1), 0, MPI.TAG_UB + 1), MPI.ERR_TAG, 'BsendInit', 'BsendInit bad tag');
await throwsMPI(() => world.Bsend(new Uint8Array(1), size + 1), MPI.ERR_RANK, 'Bsend', 'Bsend bad dest');
await throwsMPI(() => world.SendrecvReplace(new Uint8Array(1), 0, 0, size, 0), MPI.ERR_RANK, 'SendrecvReplace', 'SendrecvReplace bad source');
await throwsMPI(() => world.Isendrecv(new Uint8Array(1), 0, -2, new Uint8Array(1), 0, 0), MPI.ERR_TAG, 'Isendrecv', 'Isendrecv bad sendtag');
await throwsMPI(() => world.IsendrecvReplace(new Uint8Array(1), 0, 0, 0, -7), MPI.ERR_TAG, 'IsendrecvReplace', 'IsendrecvReplace bad recvtag');
await throwsMPI(() => world.Isendrecv(new Uint8Array(1), 0, 0, 'no' as unknown as Uint8Array, 0, 0), MPI.ERR_BUFFER, 'Isendrecv', 'Isendrecv bad recvbuf');
{
  const init = world.BsendInit(new Uint8Array(8), right, 60);
  await throwsMPI(() => init.start(), MPI.ERR_BUFFER, 'BsendInit.start', 'BsendInit start with no buffer attached');
  init.free();
}

await world.barrier();
await MPI.finalize();
console.log(`p2p-modes OK rank ${rank}`);
