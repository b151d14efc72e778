// Passive-target one-sided communication (MPICH test/mpi/rma lockcontention, fetchandadd, lockall
// with flush, accumulate atomicity, in spirit). Arg: the case. Prints "rma-passive OK" per rank.
//   computes  (np 2, --progress threads) rank 1 runs a synchronous loop that never calls MPI until
//             a flag appears in its window; rank 0 does lock/Put/unlock, lock/Get/unlock, then puts
//             the flag in a third epoch: the loop can only end if the target applied all three
//             (and answered both unlocks) while it computed. Then an accumulate the same way.
//   counter   every rank increments a shared counter on rank 0 N times with FetchAndOp under
//             lockAll (flush after each): the final value is N * np and every fetched value is
//             unique (0 .. N * np - 1).
//   mutex     every rank does N read-modify-write steps (Get, flush, Put) on rank 0's counter
//             inside lock(0, LOCK_EXCLUSIVE): no increment is lost, so the locks excluded each other.
//   accumulate every rank adds to all K elements (INT32 and FLOAT64) of rank 0's window M times
//             under lockAll, with Raccumulate and flushAll: the sums are exact.
//   dynamic-fence (np 2) fences over a dynamic window while the target attaches and detaches:
//             every round's Put is in the target's memory when its fence returns.
//   errors    bad input: each call throws an MPIError naming the call (np >= 2).
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { counterValue, fetchAndOpCounter } from './fetch-counter.ts';

await MPI.init({ threadLevel: (process.env.RMA_THREAD_LEVEL as MPI.ThreadLevel | undefined) ?? 'single' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const np = world.size;
const which = process.argv[2];

if (which === 'computes') {
  const win = await MPI.Win.allocate(64, 4, world);
  const words = new Int32Array(win.memory.buffer, win.memory.byteOffset, 16);
  if (rank === 1) words[3] = 77;
  await world.barrier();
  if (rank === 1) {
    // A loop that never calls MPI (and never yields to the event loop): only the channel engine can apply the Puts.
    const giveUp = Date.now() + 60_000;
    let spins = 0;
    while (Atomics.load(words, 0) !== 2 && Date.now() < giveUp) spins++;
    check(Atomics.load(words, 0) === 2, `the flag Put by rank 0 reached the window while rank 1 computed (after ${spins} spins)`);
    equal(Atomics.load(words, 1), 12345, 'the first epoch\'s Put, applied while rank 1 computed');
    // The same for an accumulate: rank 0 adds 5 to word 2 and then sets the flag to 3.
    await world.barrier();
    const giveUp2 = Date.now() + 60_000;
    while (Atomics.load(words, 0) !== 3 && Date.now() < giveUp2) spins++;
    equal(Atomics.load(words, 2), 5, 'the Accumulate applied while rank 1 computed');
  } else if (rank === 0) {
    await win.lock(1);
    win.Put(new Int32Array([12345]), 1, [1]);
    await win.unlock(1);
    const got = new Int32Array(1);
    await win.lock(1, MPI.LOCK_SHARED);
    win.Get(got, 1, [3]);
    await win.unlock(1);
    equal(got[0], 77, 'a Get from a target that computes');
    await win.lock(1);
    win.Put(new Int32Array([2]), 1, [0]);
    await win.unlock(1);
    await world.barrier();
    await win.lock(1);
    win.Accumulate(new Int32Array([5]), 1, [2], MPI.SUM);
    await win.unlock(1);
    await win.lock(1);
    win.Put(new Int32Array([3]), 1, [0]);
    await win.unlock(1);
  } else {
    await world.barrier();
  }
  await win.free();
} else if (which === 'counter') {
  const N = 200;
  const { win, fetched: all } = await fetchAndOpCounter(world, N);
  const seen = new Set<number>();
  for (const v of all) {
    check(Number.isInteger(v) && v >= 0 && v < N * np, `fetched value ${v} outside 0..${N * np - 1}`);
    check(!seen.has(v), `fetched value ${v} twice: two FetchAndOps were not atomic`);
    seen.add(v);
  }
  if (rank === 0) equal(counterValue(win), N * np, 'the counter');
  await win.free();
} else if (which === 'mutex') {
  const N = 40;
  const win = await MPI.Win.allocate(4, 4, world);
  for (let i = 0; i < N; i++) {
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    const v = new Int32Array(1);
    win.Get(v, 0, [0]);
    await win.flush(0);
    win.Put(new Int32Array([v[0]! + 1]), 0, [0]);
    await win.unlock(0);
  }
  await world.barrier();
  if (rank === 0) equal(new Int32Array(win.memory.buffer, win.memory.byteOffset, 1)[0], N * np, 'increments under exclusive locks (none lost)');
  await win.free();
} else if (which === 'accumulate') {
  const K = 300;
  const M = 20;
  const win = await MPI.Win.allocate(K * 12, 1, world);
  await win.lockAll();
  const reqs: MPI.Request<void>[] = [];
  for (let m = 0; m < M; m++) {
    reqs.push(win.Raccumulate(new Int32Array(K).fill(rank + 1), 0, [0, K, MPI.INT32], MPI.SUM));
    win.Accumulate(new Float64Array(K).fill(0.5 * (rank + 1)), 0, [K * 4, K, MPI.FLOAT64], MPI.SUM);
    if (m % 5 === 4) await win.flushAll();
  }
  await MPI.Request.waitall(reqs);
  await win.unlockAll();
  await world.barrier();
  if (rank === 0) {
    const ints = new Int32Array(win.memory.buffer, win.memory.byteOffset, K);
    const floats = new Float64Array(win.memory.buffer, win.memory.byteOffset + K * 4, K);
    const total = (M * np * (np + 1)) / 2;
    for (let k = 0; k < K; k++) {
      if (ints[k] !== total) check(false, `INT32 element ${k} is ${ints[k]}, expected ${total}`);
      if (floats[k] !== total / 2) check(false, `FLOAT64 element ${k} is ${floats[k]}, expected ${total / 2}`);
    }
  }
  await win.free();
} else if (which === 'dynamic') {
  // createDynamic: every rank attaches 4 INT32s, the addresses travel by allgather, each rank puts
  // into its right neighbour's attached memory under lockAll and gets it back; then detach.
  const win = await MPI.Win.createDynamic(world);
  const mine = new Int32Array(new SharedArrayBuffer(16));
  const addr = win.attach(mine);
  const addrs = new Float64Array(np);
  await world.Allgather(new Float64Array([addr]), addrs);
  const right = (rank + 1) % np;
  await win.lockAll();
  win.Put(new Int32Array([100 + rank]), right, [addrs[right]! + 4, 1, MPI.INT32]);
  await win.flush(right);
  const back = new Int32Array(1);
  win.Get(back, right, [addrs[right]! + 4, 1, MPI.INT32]);
  await win.flush(right);
  equal(back[0], 100 + rank, 'Get back from a dynamic window');
  const none = new Int32Array(1);
  await throwsMPI(async () => {
    win.Get(none, right, [addrs[right]! + 1e6, 1, MPI.INT32]);
    await win.flush(right);
  }, MPI.ERR_RMA_RANGE, 'Win.Get', 'a Get outside the attached memory');
  await win.unlockAll();
  await world.barrier();
  equal(Atomics.load(mine, 1), 100 + ((rank + np - 1) % np), 'the left neighbour\'s Put in attached memory');
  win.detach(mine);
  await throwsMPI(() => win.detach(mine), MPI.ERR_RMA_ATTACH, 'Win.detach', 'detach of memory not attached');
  await win.free();
} else if (which === 'dynamic-fence') {
  // Fences of a window of two members (one exchange of notices, WinOrigin.noticeExchange) over a
  // dynamic window while the target attaches and detaches memory: rank 0 Puts the round's number
  // into rank 1's first region and fences, while rank 1 attaches a region and fences; in the next
  // epoch rank 1 reads the number and detaches the region. A thread that applies frames holds them
  // until it has seen an attach or detach: a notice that passed them would end the fence before
  // the Put, and rank 1 would read the round before's.
  check(np === 2, 'dynamic-fence runs on 2 processes');
  const ROUNDS = 300;
  const win = await MPI.Win.createDynamic(world);
  const first = new Int32Array(new SharedArrayBuffer(4));
  const addrs = new Float64Array(2);
  await world.Allgather(new Float64Array([win.attach(first)]), addrs);
  await win.fence();
  let stale = 0;
  for (let i = 1; i <= ROUNDS; i++) {
    const more = new Int32Array(new SharedArrayBuffer(4));
    if (rank === 1) win.attach(more);
    else win.Put(new Int32Array([i]), 1, [addrs[1]!, 1, MPI.INT32]);
    await win.fence();
    // An epoch without Puts: rank 1 reads before rank 0 may Put again (after the next fence).
    if (rank === 1) {
      if (Atomics.load(first, 0) !== i) stale++;
      win.detach(more);
    }
    await win.fence();
  }
  await win.fence(MPI.MODE_NOSUCCEED);
  equal(stale, 0, 'rounds whose Put was not in rank 1\'s memory after the fence');
  win.detach(first);
  await win.free();
} else if (which === 'errors') {
  const win = await MPI.Win.allocate(16, 4, world);
  await throwsMPI(() => win.Put(new Int32Array(1), 1, [0]), MPI.ERR_RMA_SYNC, 'Win.Put', 'Put outside an epoch');
  await throwsMPI(() => win.Rput(new Int32Array(1), 1, [0]), MPI.ERR_RMA_SYNC, 'Win.Rput', 'Rput outside a lock epoch');
  await throwsMPI(() => win.unlock(1), MPI.ERR_RMA_SYNC, 'Win.unlock', 'unlock of a rank not locked');
  await throwsMPI(() => win.flush(1), MPI.ERR_RMA_SYNC, 'Win.flush', 'flush outside a lock epoch');
  await throwsMPI(() => win.complete(), MPI.ERR_RMA_SYNC, 'Win.complete', 'complete without start');
  await throwsMPI(() => win.lock(1, 7 as number), MPI.ERR_LOCKTYPE, 'Win.lock', 'a bad lock type');
  await throwsMPI(() => win.lock(np), MPI.ERR_RANK, 'Win.lock', 'a rank past the window');
  await win.lock(1);
  await throwsMPI(() => win.lock(1), MPI.ERR_RMA_SYNC, 'Win.lock', 'a second lock of one rank');
  try {
    win.Put(new Int32Array(2), 1, [3]);
    check(false, 'a Put past the window was accepted');
  } catch (e) {
    check(e instanceof MPI.MPIError && e.errorClass === MPI.ERR_RMA_RANGE && e.call === 'Win.Put', `Put past the window: ${String(e)}`);
    check(/16 bytes/.test(e.message), `the message gives the window's size: ${e.message}`);
  }
  await throwsMPI(() => win.Put(new Int32Array(1), 1, [-1]), MPI.ERR_DISP, 'Win.Put', 'a negative displacement');
  await throwsMPI(() => win.Put(new Int32Array(2), 1, [0, 3, MPI.INT32]), MPI.ERR_COUNT, 'Win.Put', 'a target count that does not match the origin');
  await throwsMPI(() => win.Accumulate(new Int32Array(1), 1, [0], MPI.MINLOC), MPI.ERR_OP, 'Win.Accumulate', 'MINLOC');
  await throwsMPI(() => win.Accumulate(new Float64Array(1), 1, [0], MPI.BAND), MPI.ERR_OP, 'Win.Accumulate', 'BAND on floats');
  await throwsMPI(() => win.Get(new Int32Array(2), 1, [0, 1, MPI.Datatype.vector(2, 1, 2, MPI.INT32).commit()]), MPI.ERR_TYPE, 'Win.Get', 'a strided target datatype');
  await throwsMPI(() => win.Put(new Float64Array(1), 1, [0, 2, MPI.INT32]), MPI.ERR_TYPE, 'Win.Put', 'origin and target element types differ');
  await throwsMPI(() => win.fence(), MPI.ERR_RMA_SYNC, 'Win.fence', 'fence inside a lock epoch');
  await throwsMPI(() => win.free(), MPI.ERR_RMA_SYNC, 'Win.free', 'free inside a lock epoch');
  await win.unlock(1);
  await throwsMPI(() => win.sharedQuery(0), MPI.ERR_WIN, 'Win.sharedQuery', 'sharedQuery of an allocated window');
  await throwsMPI(() => MPI.Win.allocate(-1), MPI.ERR_SIZE, 'Win.allocate', 'a negative size');
  await throwsMPI(() => MPI.Win.allocate(8, 0), MPI.ERR_DISP, 'Win.allocate', 'dispUnit 0');
  await throwsMPI(() => MPI.Win.allocateShared(8, 1, world), MPI.ERR_RMA_SHARED, 'Win.allocateShared', 'a shared window across processes');
  await throwsMPI(() => MPI.Win.create({} as Uint8Array), MPI.ERR_BUFFER, 'Win.create', 'a buffer that is no view');
  await win.free();
  await throwsMPI(() => win.Put(new Int32Array(1), 1), MPI.ERR_WIN, 'Win.Put', 'Put on a freed window');
  // A shared window of one process's one member works.
  const shared = await MPI.Win.allocateShared(16, 8, MPI.COMM_SELF);
  const [view, unit] = shared.sharedQuery(0);
  equal([view.length, unit], [16, 8], 'sharedQuery of COMM_SELF window');
  await shared.fence();
  shared.Put(new Float64Array([2.5]), 0, [1]);
  await shared.fence();
  equal(new Float64Array(view.buffer, view.byteOffset, 2)[1], 2.5, 'a Put to oneself');
  await shared.free();
} else {
  throw new Error(`unknown case ${which}`);
}

console.log(`rma-passive OK rank ${rank}`);
await MPI.finalize();
