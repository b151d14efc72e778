// Intercommunicators over real processes (issue 36), re-implementing the behaviour MPICH's
// test/mpi/comm intercomm tests check (ic1, icgroup, icm, icsplit, iccreate, ctxalloc with
// intercomms) and test/mpi/coll's intercomm collectives (icbcast, icreduce, icallreduce, icbarrier,
// icgather, icscatter, icallgather, icalltoall): createIntercomm over COMM_WORLD halves of unequal
// sizes, remoteSize / remoteGroup, point-to-point to remote ranks with statuses naming remote ranks,
// rooted collectives with MPI.ROOT / PROC_NULL, all-to-all ones, dup / split / create / merge, the
// errors. Run with 2 to 8 processes.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size >= 2, 'run with at least 2 processes');

// Low half: ranks 0..nLow-1; high half the rest (unequal when size is odd).
const nLow = Math.floor(size / 2);
const isLow = rank < nLow;
const half = (await world.split(isLow ? 0 : 1, rank))!;
const inter = await half.createIntercomm(0, world, isLow ? nLow : 0, 17);
const localSize = isLow ? nLow : size - nLow;
const remoteSize = size - localSize;
const lr = half.rank;

// 1. Shape (ic1, icgroup)
check(inter instanceof MPI.Intercomm && inter.isInter && !half.isInter, 'an Intercomm');
equal([inter.size, inter.rank, inter.remoteSize], [localSize, lr, remoteSize], 'size, rank, remoteSize');
const rg = inter.remoteGroup;
const worldGroup = world.group;
equal(rg.translateRanks(Array.from({ length: remoteSize }, (_, i) => i), worldGroup), Array.from({ length: remoteSize }, (_, i) => (isLow ? nLow + i : i)), 'remoteGroup is the other half in order');
rg.free();
const lg = inter.group;
equal(lg.size, localSize, 'group is the local group');
lg.free();
worldGroup.free();

// 2. Point-to-point addresses remote ranks (ic1): local rank i exchanges with remote rank i % remoteSize.
{
  const peer = lr % remoteSize;
  const reqs: MPI.Request<unknown>[] = [];
  // Every remote rank j with j % localSize === lr sends to me
  const senders = Array.from({ length: remoteSize }, (_, j) => j).filter((j) => j % localSize === lr);
  const recvs = senders.map((j) => inter.irecv<number[]>(j, 5));
  reqs.push(inter.isend([isLow ? 0 : 1, lr], peer, 5));
  const got = await Promise.all(recvs.map((r) => r.wait()));
  equal(got, senders.map((j) => [isLow ? 1 : 0, j]), 'object messages from remote ranks');
  await MPI.Request.waitall(reqs);
  // buffers, ANY_SOURCE with a status naming the remote rank
  if (lr < remoteSize) await inter.Send(Int32Array.of(rank), lr, 6);
  if (lr < remoteSize) {
    const buf = new Int32Array(1);
    const st = await inter.Recv(buf, MPI.ANY_SOURCE, 6);
    equal([st.source, buf[0]], [lr, isLow ? nLow + lr : lr], 'Recv from ANY_SOURCE: status.source is the remote rank');
  }
  const status = new MPI.Status();
  if (lr < remoteSize) {
    const back = await inter.sendrecv(`from ${rank}`, lr, 7, lr, 7, status);
    equal([back, status.source], [`from ${isLow ? nLow + lr : lr}`, lr], 'sendrecv with the remote rank of the same index');
  }
  equal(await inter.recv(MPI.PROC_NULL), undefined, 'PROC_NULL');
}

// 3. Rooted collectives, each group taking the root in turn (icbcast, icreduce, icgather, icscatter).
for (const rootSide of [0, 1]) {
  for (const rootRank of [0, (rootSide === 0 ? nLow : size - nLow) - 1]) {
    const inRootGroup = (isLow ? 0 : 1) === rootSide;
    const root = inRootGroup ? (lr === rootRank ? MPI.ROOT : MPI.PROC_NULL) : rootRank;
    const what = `root side ${rootSide} rank ${rootRank}`;
    // bcast
    const b = await inter.bcast(inRootGroup ? { v: 42, from: rank } : null, root);
    if (!inRootGroup) equal(b, { v: 42, from: rootSide === 0 ? rootRank : nLow + rootRank }, `bcast ${what}`);
    else if (root === MPI.PROC_NULL) equal(b, undefined, `bcast idle ${what}`);
    const bb = new Float64Array(3).fill(inRootGroup ? 7.5 : -1);
    await inter.Bcast(bb, root);
    if (!inRootGroup) equal(Array.from(bb), [7.5, 7.5, 7.5], `Bcast ${what}`);
    // reduce: the root gets the sum of the other group's world ranks
    const otherRanks = Array.from({ length: inRootGroup ? remoteSize : localSize }, (_, i) => (rootSide === 0 ? nLow + i : i));
    const sumOther = otherRanks.reduce((x, y) => x + y, 0);
    const red = await inter.reduce(rank, MPI.SUM, root);
    if (root === MPI.ROOT) equal(red, sumOther, `reduce ${what}`);
    else equal(red, undefined, `reduce non-root ${what}`);
    const rsend = Int32Array.of(rank, 1);
    const rrecv = new Int32Array(2);
    await inter.Reduce(rsend, root === MPI.ROOT ? rrecv : null, MPI.SUM, root);
    if (root === MPI.ROOT) equal(Array.from(rrecv), [sumOther, otherRanks.length], `Reduce ${what}`);
    // gather / scatter
    const g = await inter.gather(rank * 10, root);
    if (root === MPI.ROOT) equal(g, otherRanks.map((r) => r * 10), `gather ${what}`);
    const gb = new Int16Array(2 * otherRanks.length);
    await inter.Gather(Int16Array.of(rank, -rank), root === MPI.ROOT ? gb : null, root);
    if (root === MPI.ROOT) equal(Array.from(gb), otherRanks.flatMap((r) => [r, -r]), `Gather ${what}`);
    const s = await inter.scatter(root === MPI.ROOT ? Array.from({ length: remoteSize }, (_, i) => `to ${i}`) : undefined, root);
    if (!inRootGroup) equal(s, `to ${lr}`, `scatter ${what}`);
    const sb = new Uint8Array(3);
    await inter.Scatter(root === MPI.ROOT ? Uint8Array.from({ length: 3 * remoteSize }, (_, i) => i) : null, sb, root);
    if (!inRootGroup) equal(Array.from(sb), [3 * lr, 3 * lr + 1, 3 * lr + 2], `Scatter ${what}`);
  }
}

// 4. All-to-all collectives (icbarrier, icallreduce, icallgather, icalltoall): each group gets the other's.
const remoteWorld = Array.from({ length: remoteSize }, (_, i) => (isLow ? nLow + i : i));
await inter.barrier();
equal(await inter.allreduce(rank, MPI.SUM), remoteWorld.reduce((x, y) => x + y, 0), 'allreduce is the other group\'s sum');
equal(await inter.allreduce(rank, MPI.MAX), Math.max(...remoteWorld), 'allreduce MAX');
const ar = new Float64Array(2);
await inter.Allreduce(Float64Array.of(rank, 1), ar, MPI.SUM);
equal(Array.from(ar), [remoteWorld.reduce((x, y) => x + y, 0), remoteSize], 'Allreduce');
equal(await inter.allgather(rank), remoteWorld, 'allgather');
const agb = new Int32Array(remoteSize);
await inter.Allgather(Int32Array.of(rank), agb);
equal(Array.from(agb), remoteWorld, 'Allgather');
equal(await inter.alltoall(Array.from({ length: remoteSize }, (_, j) => `${rank}->${j}`)), remoteWorld.map((r) => `${r}->${lr}`), 'alltoall');
const a2a = new Int32Array(2 * remoteSize);
await inter.Alltoall(Int32Array.from({ length: 2 * remoteSize }, (_, i) => rank * 100 + i), a2a);
equal(Array.from(a2a), remoteWorld.flatMap((r) => [r * 100 + 2 * lr, r * 100 + 2 * lr + 1]), 'Alltoall');
// nonblocking forms, overlapping
const i1 = inter.ibarrier();
const iar = new Int32Array(1);
const i2 = inter.Iallreduce(Int32Array.of(1), iar, MPI.SUM);
await MPI.Request.waitall([i1, i2]);
equal(iar[0], remoteSize, 'Iallreduce');

// 5. dup, split, create, merge (icm, icsplit, iccreate, ctxalloc)
const dup = await inter.dup();
check(dup instanceof MPI.Intercomm && dup.contextId !== inter.contextId || dup.isInter, 'dup is an intercommunicator');
equal([dup.size, dup.remoteSize], [localSize, remoteSize], 'dup shape');
// traffic on dup and inter do not mix: same tags, opposite order
if (lr === 0) {
  await inter.send('on inter', 0, 1);
  await dup.send('on dup', 0, 1);
  equal([await dup.recv(0, 1), await inter.recv(0, 1)], ['on dup', 'on inter'], 'dup has its own context');
}
equal(await dup.allreduce(1, MPI.SUM), remoteSize, 'collective on dup');
for (const high of [false, true]) {
  // Both groups pass the same high: the group whose leader has the lower endpoint (the low half) comes first.
  const merged = await inter.merge(high);
  check(!merged.isInter, 'merge gives an intracommunicator');
  equal([merged.size, merged.rank], [size, rank], `merge(${high}) on both sides: low half first`);
  equal(await merged.allreduce(rank, MPI.SUM), (size * (size - 1)) / 2, 'allreduce on the merged communicator');
  merged.free();
}
{
  // The high half passes false: it comes first.
  const merged = await inter.merge(isLow);
  const expected = isLow ? size - nLow + rank : rank - nLow;
  equal(merged.rank, expected, 'merge with high on the low half: the high half first');
  equal(await merged.allgather(rank), [...Array.from({ length: size - nLow }, (_, i) => nLow + i), ...Array.from({ length: nLow }, (_, i) => i)], 'merged order');
  merged.free();
}
// split by parity of the local rank: an intercommunicator between the same-parity ranks of both groups
const sp = await inter.split(lr % 2, -lr);
const localSame = Array.from({ length: localSize }, (_, i) => i).filter((i) => i % 2 === lr % 2);
const remoteSame = Array.from({ length: remoteSize }, (_, i) => i).filter((i) => i % 2 === lr % 2);
if (remoteSame.length === 0) equal(sp, null, 'split: no member of the color on the other side');
else {
  check(sp !== null && sp.isInter, 'split gives an intercommunicator');
  equal([sp.size, sp.remoteSize, sp.rank], [localSame.length, remoteSame.length, localSame.length - 1 - localSame.indexOf(lr)], 'split shape, ordered by key');
  equal(await sp.allreduce(1, MPI.SUM), remoteSame.length, 'split: collective');
  sp.free();
}
equal(await inter.split(MPI.UNDEFINED), null, 'split UNDEFINED');
// create: the first local rank only on each side
const firstOnly = inter.group.incl([0]);
const cr = await inter.create(firstOnly);
if (lr === 0) {
  check(cr !== null && cr.isInter, 'create gives an intercommunicator');
  equal([cr.size, cr.remoteSize], [1, 1], 'create shape');
  equal(await cr.sendrecv(rank, 0, 2, 0, 2), isLow ? nLow : 0, 'create: talk to the other leader');
  cr.free();
} else equal(cr, null, 'create: null outside the group');
firstOnly.free();
// several creations from COMM_WORLD halves in a row (context ids free and reused)
for (let k = 0; k < 5; k++) {
  const ic = await half.createIntercomm(0, world, isLow ? nLow : 0, 100 + k);
  equal(await ic.allreduce(1, MPI.SUM), remoteSize, `intercomm ${k}`);
  ic.free();
}
// attributes and error handlers on intercommunicators
const key = MPI.Comm.createKeyval({ copy: (_c, _k, v) => v });
inter.setAttr(key, 'kept');
const dup2 = await inter.dup();
equal(dup2.getAttr(key), 'kept', 'dup of an intercommunicator copies attributes');
dup2.free();

// 6. Errors
await throwsMPI(() => inter.send(1, remoteSize), MPI.ERR_RANK, 'send', 'dest beyond the remote group');
await throwsMPI(() => inter.bcast(1, remoteSize), MPI.ERR_ROOT, 'bcast', 'root beyond the remote group');
await throwsMPI(() => inter.bcast(1, -7), MPI.ERR_ROOT, 'bcast', 'a root that is neither ROOT, PROC_NULL nor a rank');
await throwsMPI(() => inter.scan(1, MPI.SUM), MPI.ERR_COMM, 'scan', 'scan is intracommunicator only');
await throwsMPI(() => inter.createCart([1]), MPI.ERR_COMM, 'createCart', 'topologies are intracommunicator only');
await throwsMPI(() => inter.createGroup(inter.group, 0), MPI.ERR_COMM, 'createGroup', 'createGroup is intracommunicator only');
await throwsMPI(() => inter.Allreduce(MPI.IN_PLACE, new Int32Array(1), MPI.SUM), MPI.ERR_BUFFER, 'Allreduce', 'no IN_PLACE on an intercommunicator');
await throwsMPI(() => inter.createIntercomm(0, world, 0), MPI.ERR_COMM, 'Comm.createIntercomm', 'createIntercomm on an intercommunicator');
await throwsMPI(() => half.createIntercomm(localSize, world, 0), MPI.ERR_RANK, 'Comm.createIntercomm', 'localLeader out of range');
await throwsMPI(() => half.createIntercomm(0, world, 0, -1), MPI.ERR_TAG, 'Comm.createIntercomm', 'bad tag');
if (lr === 0) {
  await throwsMPI(() => half.createIntercomm(0, world, size), MPI.ERR_RANK, 'Comm.createIntercomm', 'remoteLeader out of range');
  await throwsMPI(() => half.createIntercomm(0, world, rank), MPI.ERR_RANK, 'Comm.createIntercomm', 'remoteLeader is the caller');
  await throwsMPI(() => half.createIntercomm(0, {} as MPI.Comm, 0), MPI.ERR_COMM, 'Comm.createIntercomm', 'peerComm not a Comm');
}
check((MPI.revive(MPI.dehydrate({ inter })) as { inter: MPI.Intercomm }).inter === inter, 'an intercommunicator dehydrated and revived in its own thread is the same object');
dup.free();
inter.free();
half.free();
console.log(`intercomm OK ${rank}`);
await MPI.finalize();
