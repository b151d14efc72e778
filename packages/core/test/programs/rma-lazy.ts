// Lazy lock acquisition (api/win-passive.ts): lock sends nothing, lock + Puts + unlock travel as one
// batch that the target applies only if its lock is free. Arg: the case. Prints "rma-lazy OK" per rank.
//   conflict  (np 3) rank 1 holds rank 0's exclusive lock (its flush took it) while rank 2 sends a
//             lock/Put/unlock batch to the same word: the batch must be refused and applied only
//             after rank 1's unlock, so rank 2's value is the last (rank 1 writes again just before
//             it unlocks, 300 ms after rank 2 began). Then: shared locks of two origins at once, an
//             epoch with no operation, MODE_NOCHECK, a Put larger than a batch, a Get and
//             accumulates inside a lazy epoch (in order), lockAll/unlockAll with a Put to every rank, and
//             a flush whose batch (LOCK, Put, FLUSH) is refused while rank 1 holds the lock, a Get
//             whose batch is refused, a Get that flushLocal sends, an Rget awaited inside the epoch.
//   epochs    (np 3) epochs of one Put or Accumulate, which travel as one frame (RMA_EPOCH): a shared
//             one is granted while another origin holds a shared lock, an exclusive one waits for
//             that shared lock's release, a Put's epoch then a Get by another rank sees the data, and
//             200 such epochs against another origin's exclusive epochs that hold the lock across a
//             flush add every value once (a refused epoch is applied only once it is granted).
//   lost      (np 2, --progress inline: the main thread owns the transport) rank 1 drops its connections; rank 0 runs lock/Put/unlock epochs to it until
//             one fails: it must fail with an MPIError (rank 0 says which, then exits 1), never hang.
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: (process.env.RMA_THREAD_LEVEL as MPI.ThreadLevel | undefined) ?? 'single' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const np = world.size;
const which = process.argv[2];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

if (which === 'conflict') {
  check(np >= 3, 'conflict runs on 3 or more processes');
  const BIG = 100 * 1024;
  const win = await MPI.Win.allocate(64 + BIG, 4, world);
  const words = new Int32Array(win.memory.buffer, win.memory.byteOffset, 16);
  await world.barrier();
  /** Rank 1: takes rank 0's exclusive lock (its flush takes it) writing `first` to `word`, tells rank 2 on `tag`, holds it 300 ms, writes `last` and unlocks. */
  const holdLock = async (word: number, first: number, last: number, tag: number): Promise<void> => {
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    win.Put(new Int32Array([first]), 0, [word]);
    await win.flush(0); // the lock is held from here
    await world.send('held', 2, tag);
    await sleep(300);
    win.Put(new Int32Array([last]), 0, [word]);
    await win.unlock(0);
  };

  // 1. An exclusive lock held by rank 1 makes rank 2's batch wait.
  if (rank === 1) {
    await holdLock(0, 1, 2, 7);
  } else if (rank === 2) {
    await world.recv(1, 7);
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    win.Put(new Int32Array([3]), 0, [0]);
    await win.unlock(0);
  }
  await world.barrier();
  if (rank === 0) equal(Atomics.load(words, 0), 3, 'the batch sent while another origin held the exclusive lock was applied after its unlock');

  // 2. Shared locks of every origin at once, each with a Put to its own word.
  if (rank !== 0) {
    await win.lock(0, MPI.LOCK_SHARED);
    win.Put(new Int32Array([10 + rank]), 0, [rank]);
    await win.unlock(0);
  }
  await world.barrier();
  if (rank === 0) for (let r = 1; r < np; r++) equal(Atomics.load(words, r), 10 + r, `rank ${r}'s Put under a shared lock`);

  // 3. An epoch with no operation, MODE_NOCHECK, and a Put larger than one batch.
  const right = (rank + 1) % np;
  await win.lock(right, MPI.LOCK_EXCLUSIVE);
  await win.unlock(right);
  await world.barrier();
  if (rank === 1) {
    await win.lock(0, MPI.LOCK_EXCLUSIVE, MPI.MODE_NOCHECK);
    win.Put(new Int32Array([42]), 0, [8]);
    await win.unlock(0);
    const big = new Uint8Array(BIG);
    for (let i = 0; i < BIG; i++) big[i] = i % 251;
    await win.lock(0);
    win.Put(big, 0, [16, BIG, MPI.BYTE]);
    big.fill(0); // the origin buffer is free once Put returns
    await win.unlock(0);
  }
  await world.barrier();
  if (rank === 0) {
    equal(Atomics.load(words, 8), 42, 'a Put under MODE_NOCHECK');
    const got = new Uint8Array(win.memory.buffer, win.memory.byteOffset + 64, BIG);
    let bad = -1;
    for (let i = 0; i < BIG && bad < 0; i++) if (got[i] !== i % 251) bad = i;
    equal(bad, -1, 'the first wrong byte of a Put larger than a batch');
  }

  // 4. Inside one lazy epoch: a Put, an Accumulate, then a fetch (which takes the lock), more accumulates, in order.
  if (rank === 2) {
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    win.Put(new Int32Array([100]), 0, [9]);
    win.Accumulate(new Int32Array([5]), 0, [9], MPI.SUM);
    const before = new Int32Array(1);
    win.FetchAndOp(new Int32Array([1]), before, 0, 9, MPI.SUM);
    win.Accumulate(new Int32Array([1000]), 0, [9], MPI.SUM);
    const last = new Int32Array(1);
    win.FetchAndOp(null, last, 0, 9, MPI.NO_OP);
    await win.unlock(0);
    equal([before[0], last[0]], [105, 1106], 'accumulates and fetches of one lazy epoch, in order');
  }
  await world.barrier();

  // 5. lockAll / unlockAll: a Put to every rank (itself included) and a Get back.
  await win.lockAll();
  for (let r = 0; r < np; r++) win.Put(new Int32Array([1000 * rank + r]), r, [10 + rank]);
  await win.flushAll();
  const back = new Int32Array(1);
  win.Get(back, right, [10 + rank]);
  await win.unlockAll();
  equal(back[0], 1000 * rank + right, 'a Get after flushAll in a lockAll epoch');
  await world.barrier();
  for (let r = 0; r < np; r++) equal(Atomics.load(words, 10 + r), 1000 * r + rank, `rank ${r}'s Put under lockAll`);

  // 6. A flush in a lazy epoch sends LOCK, the Put and FLUSH together: refused while rank 1 holds the
  // exclusive lock, it takes the lock the ordinary way (after rank 1's unlock) and sends the Put again;
  // granted, the lock stays held until unlock (rank 2 reads back its own value under it).
  if (rank === 1) {
    await holdLock(13, 1, 2, 9);
  } else if (rank === 2) {
    await world.recv(1, 9);
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    win.Put(new Int32Array([3]), 0, [13]);
    await win.flush(0);
    const seen = new Int32Array(1);
    win.Get(seen, 0, [13]);
    await win.flush(0);
    equal(seen[0], 3, 'word 13 read back under the lock a refused flush batch then took');
    win.Put(new Int32Array([4]), 0, [13]);
    await win.unlock(0);
  }
  await world.barrier();
  if (rank === 0) equal(Atomics.load(words, 13), 4, 'word 13 after a flush batch was refused, then granted');

  // 7. A Get travels with the batch too (lock, Get, unlock: one round trip): refused while rank 1
  // holds the lock, its answer (no bytes) is dropped and it is fetched again under the lock. Then a
  // Get held for the batch that flushLocal sends, and an Rget awaited inside a lazy epoch.
  if (rank === 1) {
    await holdLock(14, 5, 6, 10);
  } else if (rank === 2) {
    await world.recv(1, 10);
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    const got = new Int32Array([-1]);
    win.Get(got, 0, [14]);
    await win.unlock(0);
    equal(got[0], 6, 'a Get refused with its batch, fetched again once rank 1 released the lock');
    await win.lock(0, MPI.LOCK_SHARED);
    const local = new Int32Array([-1]);
    win.Get(local, 0, [14]);
    await win.flushLocal(0);
    equal(local[0], 6, 'a Get held for the batch, sent by flushLocal');
    await win.unlock(0);
    await win.lock(0, MPI.LOCK_SHARED);
    const requested = new Int32Array([-1]);
    await win.Rget(requested, 0, [14]).wait();
    equal(requested[0], 6, 'an Rget awaited inside a lazy epoch');
    await win.unlock(0);
  }
  await world.barrier();
  await win.free();
  console.log(`rma-lazy OK rank ${rank}`);
  await MPI.finalize();
} else if (which === 'epochs') {
  check(np >= 3, 'epochs runs on 3 or more processes');
  const win = await MPI.Win.allocate(64, 4, world);
  const words = new Int32Array(win.memory.buffer, win.memory.byteOffset, 16);
  await world.barrier();

  // 1. Rank 1 holds a shared lock on rank 0: rank 2's one-Put shared epoch is granted meanwhile (rank 1
  // releases only after rank 2's epoch has ended: a refusal would never end), and its exclusive one waits.
  if (rank === 1) {
    await win.lock(0, MPI.LOCK_SHARED);
    win.Put(new Int32Array([1]), 0, [1]);
    await win.flush(0); // the shared lock is held from here
    await world.send('held', 2, 7);
    await world.recv(2, 8);
    await sleep(300);
    const seen = new Int32Array(1);
    win.Get(seen, 0, [4]);
    await win.flush(0);
    equal(seen[0], 0, 'word 4 while this shared lock is held (rank 2\'s exclusive epoch must wait)');
    win.Put(new Int32Array([1]), 0, [4]);
    await win.unlock(0);
  } else if (rank === 2) {
    await world.recv(1, 7);
    await win.lock(0, MPI.LOCK_SHARED);
    win.Put(new Int32Array([33]), 0, [3]);
    await win.unlock(0);
    await world.send('shared epoch done', 1, 8);
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    win.Accumulate(new Int32Array([76]), 0, [4], MPI.SUM);
    await win.unlock(0);
  }
  await world.barrier();
  if (rank === 0) equal([Atomics.load(words, 3), Atomics.load(words, 4)], [33, 77], 'a shared epoch beside a shared lock; an exclusive epoch applied after the shared lock\'s release');

  // 2. A Put's epoch, then a Get by another rank after the unlock: the Get sees the Put.
  for (let i = 0; i < 20; i++) {
    if (rank === 1) {
      await win.lock(0, MPI.LOCK_EXCLUSIVE);
      win.Put(new Int32Array([1000 + i]), 0, [5]);
      await win.unlock(0);
      await world.send(i, 2, 9);
      equal(await world.recv(2, 10), i, 'rank 2 has read the round'); // before the next round's Put
    } else if (rank === 2) {
      equal(await world.recv(1, 9), i, 'the round');
      const got = new Int32Array(1);
      await win.lock(0, MPI.LOCK_SHARED);
      win.Get(got, 0, [5]);
      await win.unlock(0);
      equal(got[0], 1000 + i, 'a Get after another rank\'s Put epoch ended');
      await world.send(i, 1, 10);
    }
  }
  await world.barrier();

  // 3. Contention: rank 2's one-Accumulate epochs (every fifth shared) against rank 1's exclusive epochs
  // that hold the lock across a flush's round trip: each of rank 2's adds once, refused or not.
  const EPOCHS = 200;
  if (rank === 1) {
    for (let i = 0; i < EPOCHS; i++) {
      await win.lock(0, MPI.LOCK_EXCLUSIVE);
      win.Accumulate(new Int32Array([1]), 0, [6], MPI.SUM);
      await win.flush(0);
      win.Accumulate(new Int32Array([1]), 0, [6], MPI.SUM);
      await win.unlock(0);
    }
  } else if (rank === 2) {
    for (let i = 0; i < EPOCHS; i++) {
      await win.lock(0, i % 5 === 0 ? MPI.LOCK_SHARED : MPI.LOCK_EXCLUSIVE);
      win.Accumulate(new Int32Array([2]), 0, [6], MPI.SUM);
      await win.unlock(0);
    }
  }
  await world.barrier();
  if (rank === 0) {
    equal(Atomics.load(words, 6), 4 * EPOCHS, 'the sum of two origins\' contended epochs');
    // Every epoch released its lock: the target's own exclusive lock is granted (a held word would retry until the job's timeout).
    await win.lock(0, MPI.LOCK_EXCLUSIVE);
    await win.unlock(0);
  }
  await win.free();
  console.log(`rma-lazy OK rank ${rank}`);
  await MPI.finalize();
} else if (which === 'lost') {
  const win = await MPI.Win.allocate(8, 4, world);
  await world.barrier(); // every connection is up
  if (rank === 1) {
    await world.recv(0, 6);
    runtime('rma-lazy').device.transport!.destroy();
    setTimeout(() => process.exit(1), 30_000);
  } else {
    await world.send('drop your connections', 1, 6);
    const giveUp = Date.now() + 20_000;
    for (let i = 0; ; i++) {
      check(Date.now() < giveUp, `20 s of lock/Put/unlock epochs to a lost target, ${i} of them completed, and none failed`);
      try {
        await win.lock(1);
        win.Put(new Int32Array([i]), 1, [0]);
        await win.unlock(1);
      } catch (e) {
        check(e instanceof MPI.MPIError, `the failed epoch's error is an MPIError: ${String(e)}`);
        console.log(`rma-lazy: an epoch to the lost target failed with ${MPI.errorString(e.errorClass)} (${e.call})`);
        process.exit(1);
      }
    }
  }
} else {
  throw new Error(`unknown case ${which}`);
}
