// Worker of spawn-threads.ts. Roles:
//   early  (a parent's thread started before the spawn) reports 'ready', receives the spawn
//          intercommunicator by postMessage, sends {from, to} to every child (tag 1) and receives
//          each child's answer (tag 2); then (parent rank 0) spawns a child of its own over COMM_SELF (the main
//          thread carries it out: runtime/dynamic-relay.ts), exchanges tags 5 and 6 with it and
//          disconnects.
//   late   (a parent's thread started after the spawn, the intercommunicator in workerData) the
//          same with tags 3 and 4, then merges the intercommunicator (low group) and allreduces.
//   child  (a child's thread, which takes MPI.getParent() itself) answers both parent threads of every parent,
//          then merges (high group) and allreduces.
import { once } from 'node:events';
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const { role } = MPI.workerData as { role: string };
const post = (m: string): void => parentPort!.postMessage(m);

async function mergeAndReduce(inter: MPI.Intercomm, high: boolean): Promise<void> {
  const merged = await inter.merge(high);
  const total = inter.size + inter.remoteSize;
  equal(merged.size, total, `${role}: merged size`);
  equal(merged.rank, high ? inter.remoteSize + inter.rank : inter.rank, `${role}: merged rank`);
  equal(await merged.allreduce(merged.rank, MPI.SUM), (total * (total - 1)) / 2, `${role}: allreduce over the merged communicator`);
  merged.free();
}

if (role === 'child') {
  const inter = MPI.getParent();
  check(inter !== null, 'child: MPI.getParent() in a worker thread of a spawned process');
  const me = inter.rank;
  // Both threads of every parent, in whatever order they come (tags tell them apart).
  await Promise.all(Array.from({ length: inter.remoteSize }, (_, p) => [1, 3].map(async (tag) => {
    const m = (await inter.recv(p, tag)) as { from: number; to: number };
    equal([m.from, m.to], [p, me], 'child: the message is from its parent rank and for this child');
    await inter.send({ from: me, to: p, tag }, p, tag + 1);
  })).flat());
  await mergeAndReduce(inter, true);
  post('done');
} else {
  let inter: MPI.Intercomm;
  let tag: number;
  if (role === 'early') {
    post('ready');
    const [m] = (await once(parentPort!, 'message')) as [{ inter: unknown }];
    inter = MPI.revive(m).inter as MPI.Intercomm;
    tag = 1;
  } else {
    inter = (MPI.workerData as { inter: MPI.Intercomm }).inter;
    tag = 3;
  }
  const me = inter.rank;
  for (let c = 0; c < inter.remoteSize; c++) await inter.send({ from: me, to: c }, c, tag);
  for (let c = 0; c < inter.remoteSize; c++) {
    const m = (await inter.recv(c, tag + 1)) as { from: number; to: number; tag: number };
    equal([m.from, m.to, m.tag], [c, me, tag], `${role}: the answer of child ${c}`);
  }
  if (role === 'late') await mergeAndReduce(inter, false);
  // Parent rank 0's only: two spawns at once from two processes fail in the later world's init
  // (it reads the earlier world's addresses before that world has put them; ADR 0040 lists it).
  if (role === 'early' && me === 0) {
    // This thread's own spawn, and bad input from a thread: the root's checks still name the call.
    const { program } = MPI.workerData as { program: string };
    await throwsMPI(() => MPI.COMM_SELF.spawn(program, ['self-child'], 0), MPI.ERR_SPAWN, 'Comm.spawn', 'maxprocs 0 from a worker thread');
    const own = await MPI.COMM_SELF.spawn(program, ['self-child'], 1);
    equal(own.remoteSize, 1, 'early: its own child');
    const from = inter.rank;
    await own.send({ from }, 0, 5);
    equal(await own.recv(0, 6), { from, answer: true }, 'early: its own child answered');
    await own.disconnect();
  }
  post('done');
}
