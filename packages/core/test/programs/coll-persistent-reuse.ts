// A persistent collective reuses what its init made (issue 36: one operation record, the references
// held from init to free), and that reuse keeps MPI 4.0's rules (sections 3.9 and 6.13): each start
// begins a fresh operation (no status, not complete, until this start's messages arrive); the request
// counts as one live request from init to free, also while a start is active; freed while active,
// its run still completes into the caller's buffer and keeps its communicator until then, then every
// reference goes. Rank 0 holds its peer back with a point-to-point message, so a start is seen active.
// Run on 2 processes (rank 0 and 1 play; others only join COMM_WORLD's collectives), any --refcount.
import * as MPI from '@tsmpi/core';
import { check, equal, until } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const rank = world.rank;
const gc = MPI.config().refcount === 'gc';
const GO = 9;

/** Runs `starts` starts of one persistent request made by `make`, rank 0 checking the request between them. */
async function startsHeldBack(name: string, comm: MPI.Comm, make: () => MPI.Request<void>, prepare: (it: number) => void, verify: (it: number) => void): Promise<void> {
  const base = MPI.stats().liveObjects.request;
  const req = make();
  equal(MPI.stats().liveObjects.request, base + 1, `${name}: a persistent request is live from init`);
  for (let it = 0; it < 3; it++) {
    prepare(it);
    if (comm.rank === 0) {
      req.start();
      // The previous start's completion must not show through: the peer has not started this one yet.
      check(req.status === null, `${name} start ${it}: no status while this start is active`);
      check(!req.test(), `${name} start ${it}: not complete before the peer has started`);
      equal(MPI.stats().liveObjects.request, base + 1, `${name} start ${it}: an active start adds no live request`);
      await comm.send(it, 1, GO);
      if (it === 1) {
        // Two waits at once (the second does not take the first's listener: PlanRun.wait, then Request.wait's), then one after completion.
        equal((await Promise.all([req.wait(), req.wait()])).length, 2, `${name} start ${it}: both waits resolve`);
        equal(await req.wait(), undefined, `${name} start ${it}: a wait after completion resolves again`);
      } else await req.wait();
      // Read again (a getter: the narrowing of the check above does not hold after the wait).
      const status = req.status as MPI.Status | null;
      check(status !== null && status.error === MPI.SUCCESS, `${name} start ${it}: a status once complete`);
    } else {
      if (comm.rank === 1) equal(await comm.recv(0, GO), it, `${name}: the go message`);
      req.start();
      await req.wait();
    }
    verify(it);
  }
  req.free();
  equal(MPI.stats().liveObjects.request, base, `${name}: nothing live once freed`);
}

/** Every rank's value of element i in iteration it (small integers: sums are exact). */
const val = (r: number, i: number, it: number): number => r * 10 + i + it * 100;

async function reuse(comm: MPI.Comm): Promise<void> {
  const { size } = comm;
  const send = new Int32Array(2);
  const recv = new Int32Array(2);
  const sum = (i: number, it: number): number => Array.from({ length: size }, (_, r) => val(r, i, it)).reduce((a, b) => a + b, 0);
  await startsHeldBack(`${comm.name} AllreduceInit`, comm, () => comm.AllreduceInit(send, recv, MPI.SUM), (it) => {
    send[0] = val(comm.rank, 0, it);
    send[1] = val(comm.rank, 1, it);
    recv.fill(-1);
  }, (it) => equal(Array.from(recv), [sum(0, it), sum(1, it)], `${comm.name} AllreduceInit start ${it}: the sums`));
  // The root is the held-back rank 1: rank 0's start cannot complete before it starts.
  const buf = new Int32Array(3);
  await startsHeldBack(`${comm.name} BcastInit`, comm, () => comm.BcastInit(buf, 1), (it) => {
    buf.fill(comm.rank === 1 ? it + 1 : -1);
  }, (it) => equal(Array.from(buf), [it + 1, it + 1, it + 1], `${comm.name} BcastInit start ${it}: the root's values`));
  await startsHeldBack(`${comm.name} BarrierInit`, comm, () => comm.BarrierInit(), () => {}, () => {});
}

/**
 * Rank 0 frees the request and its communicator while a start is active (its peer held back): the
 * run must still complete into recv, and keep the communicator (its context id) until it has.
 */
async function freeWhileActive(parent: MPI.Comm): Promise<void> {
  const before = MPI.stats().liveObjects;
  const comm = await parent.dup();
  const send = Int32Array.of(parent.rank + 1);
  const recv = Int32Array.of(-1);
  const req = comm.AllreduceInit(send, recv, MPI.SUM);
  const want = (parent.size * (parent.size + 1)) / 2;
  if (parent.rank === 0) {
    req.start();
    req.free();
    comm.free();
    const during = MPI.stats().liveObjects;
    equal(during.request, before.request + 1, 'freed while active: the run is still a live request');
    if (!gc) equal(during.comm, before.comm + 1, 'freed while active: the run still holds its communicator');
    await parent.send(0, 1, GO);
    await until(() => MPI.stats().liveObjects.request === before.request, 'the run freed while active to complete');
    equal(recv[0], want, 'freed while active: the run completed into recv');
    if (!gc) equal(MPI.stats().liveObjects.comm, before.comm, 'the run released its communicator once complete');
  } else {
    if (parent.rank === 1) await parent.recv(0, GO);
    req.start();
    await req.wait();
    equal(recv[0], want, 'the peer of a run freed while active gets the sum');
    req.free();
    comm.free();
  }
  // The context id is free again only now: a new communicator must not meet the old one's traffic.
  const next = await parent.dup();
  const r = Int32Array.of(0);
  await next.Allreduce(Int32Array.of(1), r, MPI.SUM);
  equal(r[0], parent.size, 'a communicator made after the freed one works');
  next.free();
}

await reuse(world);
const split = await world.split(0, world.size - 1 - rank);
await reuse(split!);
split!.free();
await freeWhileActive(world);
await world.barrier();
equal(MPI.stats().liveObjects.request, 0, 'no request is live at the end');
await MPI.finalize();
console.log(`coll-persistent-reuse OK rank ${rank}`);
