// Worker of rma-threads.ts: attaches to endpoint `index` of its process and runs one case as a
// member of windows over COMM_ENDPOINTS (all threads of all processes) or COMM_CLIQUE (the threads
// of its process). Cases:
//   counter  every member adds 1 to a counter on rank 0 N times with FetchAndOp under lockAll,
//            flushing each: the final value is N * size and the fetched values are 0 .. N*size-1
//            once each (accumulate atomicity under contention from processes and threads); the
//            same with Accumulate on INT32 and FLOAT64 elements of every member.
//   lockall  every member Puts its rank into slot [rank] of every member under lockAll; after a
//            flush a Get of the slot sees it; after unlockAll and a barrier every window is full.
//   pscw     a ring: each member posts to its left neighbour and starts to its right, Puts its
//            rank, completes and waits; then the same within COMM_CLIQUE (threads only).
//   shared   allocateShared over COMM_CLIQUE: one SharedArrayBuffer, each part written by its
//            thread with Atomics and read by the others through sharedQuery after a fence;
//            across processes (COMM_ENDPOINTS) it is ERR_RMA_SHARED; fences of a window of two
//            threads of one process.
//   busy     clique member 1 of process 0 computes in a loop that never calls MPI until every
//            other member (threads of its process and of the other) has done lock/Put/unlock
//            of its slot: only the threads that read the channels and the origins themselves
//            can have applied them.
//   errors   bad input from a worker thread: MPIErrors naming the call.
//   attach   a dynamic window, under lockAll: each round one member attaches a fresh buffer and
//            sends its address by a message to every other member (threads of its own process
//            and of the other), which at once Put, Accumulate and Get at it; the target checks
//            every Put and the sum after a barrier, then detaches (ADR 0042: an origin in the
//            target's process that learnt the address before the directory's attach message
//            reached its thread must still find the region).
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { counterValue, fetchAndOpCounter } from './fetch-counter.ts';

await MPI.init();
const { index, which } = MPI.workerData as { index: number; which: string };
MPI.threadAttach(index);
const all = MPI.COMM_ENDPOINTS;
const clique = MPI.COMM_CLIQUE;
const me = all.rank;
const n = all.size;

if (which === 'counter') {
  const N = 50;
  const { win, fetched: got } = await fetchAndOpCounter(all, N);
  const seen = new Set(got);
  equal([seen.size, Math.min(...got), Math.max(...got)], [N * n, 0, N * n - 1], 'every fetched counter value once');
  if (me === 0) equal(counterValue(win), N * n, 'the counter after every increment');
  await win.free();
  // Accumulate (SUM) on an INT32 and a FLOAT64 element of every member, from every member, M times.
  const M = 20;
  const acc = await MPI.Win.allocate(16, 1, all);
  await acc.lockAll();
  for (let i = 0; i < M; i++) {
    for (let t = 0; t < n; t++) {
      acc.Accumulate(new Int32Array([1]), t, [0, 1, MPI.INT32], MPI.SUM);
      acc.Accumulate(new Float64Array([0.5]), t, [8, 1, MPI.DOUBLE], MPI.SUM);
    }
    await acc.flushAll();
  }
  await acc.unlockAll();
  await all.barrier();
  const m = acc.memory;
  equal([new Int32Array(m.buffer, m.byteOffset, 1)[0], new Float64Array(m.buffer, m.byteOffset + 8, 1)[0]], [M * n, 0.5 * M * n], 'the sums of every accumulate');
  await acc.free();
} else if (which === 'lockall') {
  const win = await MPI.Win.allocate(4 * n, 4, all);
  await win.lockAll();
  for (let t = 0; t < n; t++) win.Put(new Int32Array([me + 100]), t, [me]);
  await win.flushAll();
  for (let t = 0; t < n; t++) {
    const back = new Int32Array(1);
    win.Get(back, t, [me]);
    await win.flush(t);
    equal(back[0], me + 100, `a Get after flush sees this member's Put at rank ${t}`);
  }
  await win.unlockAll();
  await all.barrier();
  const words = new Int32Array(win.memory.buffer, win.memory.byteOffset, n);
  equal([...words], Array.from({ length: n }, (_, r) => r + 100), 'every member\'s Put in this window');
  await win.free();
} else if (which === 'pscw') {
  for (const comm of [all, clique]) {
    const size = comm.size;
    const r = comm.rank;
    const win = await MPI.Win.allocate(8, 4, comm);
    const left = (r + size - 1) % size;
    const right = (r + 1) % size;
    const g = comm.group;
    const leftGroup = g.incl([left]);
    const rightGroup = g.incl([right]);
    await win.post(leftGroup);
    await win.start(rightGroup);
    win.Put(new Int32Array([r + 1, 7 * r]), right, [0, 2]);
    await win.complete();
    await win.wait();
    const words = new Int32Array(win.memory.buffer, win.memory.byteOffset, 2);
    equal([...words], [left + 1, 7 * left], `${comm.name}: the left neighbour's Put after wait`);
    await win.free();
  }
} else if (which === 'shared') {
  const k = clique.rank;
  const bytes = 8 * (k + 1);
  const win = await MPI.Win.allocateShared(bytes, 4, clique);
  const [mine, unit] = win.sharedQuery(k);
  equal([mine.byteLength, unit], [bytes, 4], 'this thread\'s part');
  equal(mine.byteOffset, Array.from({ length: k }, (_, j) => 8 * (j + 1)).reduce((a, b) => a + b, 0), 'parts follow each other in rank order');
  check(mine.buffer === win.memory.buffer, 'win.memory is this thread\'s part of the shared buffer');
  const words = new Int32Array(mine.buffer, mine.byteOffset, bytes / 4);
  for (let i = 0; i < words.length; i++) Atomics.store(words, i, 1000 * (k + 1) + i);
  await win.fence();
  win.sync();
  for (let j = 0; j < clique.size; j++) {
    const [part] = win.sharedQuery(j);
    check(part.buffer === mine.buffer, `rank ${j}'s part is in the same SharedArrayBuffer`);
    const w = new Int32Array(part.buffer, part.byteOffset, part.byteLength / 4);
    equal([...w].map((_, i) => Atomics.load(w, i)), Array.from({ length: 2 * (j + 1) }, (_, i) => 1000 * (j + 1) + i), `rank ${j}'s stores seen after the fence`);
  }
  // One-sided operations on a shared window land in the same memory.
  await win.fence();
  win.Accumulate(new Int32Array([1]), 0, [0], MPI.SUM);
  await win.fence();
  const [first] = win.sharedQuery(0);
  equal(Atomics.load(new Int32Array(first.buffer, first.byteOffset, 1), 0), 1000 + clique.size, 'every thread\'s Accumulate on rank 0\'s part');
  await win.free();
  await throwsMPI(() => MPI.Win.allocateShared(8, 1, all), MPI.ERR_RMA_SHARED, 'Win.allocateShared', 'shared memory across processes');
  // A window of two members in one process: its fence is one exchange of notices (win-origin.ts
  // noticeExchange), here ordinary messages between the two threads.
  const pair = await clique.split(k < 2 ? 0 : 1, k);
  if (pair !== null && pair.size === 2) {
    const w2 = await MPI.Win.allocate(8, 4, pair);
    for (let round = 0; round < 3; round++) {
      await w2.fence();
      w2.Put(new Int32Array([100 * round + pair.rank]), 1 - pair.rank, [round % 2]);
      await w2.fence();
      equal(new Int32Array(w2.memory.buffer, w2.memory.byteOffset, 2)[round % 2], 100 * round + 1 - pair.rank, `the other thread's Put of round ${round}, seen after the fence`);
    }
    await w2.free();
  }
  pair?.free();
} else if (which === 'busy') {
  const target = 1; // clique rank 1 of process 0 = COMM_ENDPOINTS rank 1
  const win = await MPI.Win.allocate(4 * n, 4, all);
  const words = new Int32Array(win.memory.buffer, win.memory.byteOffset, n);
  await all.barrier();
  if (me === target) {
    // Never calls MPI and never returns to the event loop until every other member's Put is in.
    const giveUp = Date.now() + 90_000;
    const full = (): boolean => {
      for (let r = 0; r < n; r++) if (r !== target && Atomics.load(words, r) !== r + 1) return false;
      return true;
    };
    let spins = 0;
    while (!full() && Date.now() < giveUp) spins++;
    check(full(), `every member's lock/Put/unlock reached rank ${target} while it computed (${spins} spins): ${[...words]}`);
  } else {
    await win.lock(target);
    win.Put(new Int32Array([me + 1]), target, [me]);
    await win.unlock(target);
  }
  await all.barrier();
  await win.free();
} else if (which === 'errors') {
  await throwsMPI(() => MPI.Win.create(new Int32Array(4), 4, all), MPI.ERR_BUFFER, 'Win.create', 'an ArrayBuffer other threads would have to apply to');
  await throwsMPI(() => MPI.Win.allocateShared(8, 1, all), MPI.ERR_RMA_SHARED, 'Win.allocateShared', 'members in another process');
  await throwsMPI(() => MPI.Win.allocate(-1, 1, all), MPI.ERR_SIZE, 'Win.allocate', 'negative size');
  const win = await MPI.Win.allocateShared(8, 8, clique);
  await throwsMPI(() => win.sharedQuery(clique.size), MPI.ERR_RANK, 'Win.sharedQuery', 'rank out of range');
  await throwsMPI(() => win.Put(new Float64Array([1]), 0, [0]), MPI.ERR_RMA_SYNC, 'Win.Put', 'a Put outside an epoch');
  await win.lockAll();
  await throwsMPI(() => win.Put(new Float64Array(2), (clique.rank + 1) % clique.size, [0]), MPI.ERR_RMA_RANGE, 'Win.Put', 'past the target\'s part');
  await win.unlockAll();
  await win.free();
} else if (which === 'attach') {
  const ROUNDS = 60;
  const win = await MPI.Win.createDynamic(all);
  await win.lockAll();
  for (let i = 0; i < ROUNDS; i++) {
    const t = i % n;
    const TAG = 500;
    if (me === t) {
      // slots [0, n): one Put per origin; [n]: the Accumulate sum; [n + 1]: what each origin Gets.
      const words = new Int32Array(new SharedArrayBuffer(4 * (n + 2)));
      words[n + 1] = 1000 + i;
      const addr = win.attach(words);
      const sent = new Float64Array([addr]);
      await Promise.all(Array.from({ length: n }, (_, r) => (r === me ? Promise.resolve() : all.Send(sent, r, TAG))));
      await all.barrier();
      for (let r = 0; r < n; r++) if (r !== me) equal(Atomics.load(words, r), r + 1 + i, `round ${i}: member ${r}'s Put at the attached address`);
      equal(Atomics.load(words, n), n - 1, `round ${i}: every other member's Accumulate`);
      win.detach(words);
    } else {
      const got = new Float64Array(1);
      await all.Recv(got, t, TAG);
      const addr = got[0]!;
      win.Put(new Int32Array([me + 1 + i]), t, [addr + 4 * me, 1, MPI.INT32]);
      win.Accumulate(new Int32Array([1]), t, [addr + 4 * n, 1, MPI.INT32], MPI.SUM);
      const back = new Int32Array(1);
      win.Get(back, t, [addr + 4 * (n + 1), 1, MPI.INT32]);
      await win.flush(t);
      equal(back[0], 1000 + i, `round ${i}: a Get at member ${t}'s freshly attached address`);
      await all.barrier();
    }
  }
  await win.unlockAll();
  await win.free();
} else {
  throw new Error(`unknown case ${which}`);
}
parentPort!.postMessage('done');
