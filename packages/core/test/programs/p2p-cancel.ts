// Cancel of sends (issue 36; MPI 3.1 §3.8.4), behaviour of MPICH's test/mpi/pt2pt scancel and
// scancel2 re-implemented from their descriptions: a synchronous or rendezvous send that no receive
// has matched is cancelled (status.cancelled, and the receiver never sees the message); one that a
// receive matched first is not (it completes and the data arrives); the same to an endpoint of this
// process (COMM_SELF); from an MPI.Worker (its own connections; argument `worker`); and a standard
// eager send, complete at once, is not affected. np 2; run with --eager-limit 1024 so that a 4 KiB
// message goes by rendezvous.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

// With the argument `worker`: threadLevel multiple and the worker section; without it, threadLevel
// single, where the receive lanes (setting lean=on) take part in matching.
const withWorker = process.argv.includes('worker');
await MPI.init({ threadLevel: withWorker ? 'multiple' : 'single' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const BIG = 4096;
const peer = 1 - rank;

// --- unmatched: cancelled ----------------------------------------------------------------------
if (rank === 0) {
  for (const round of [0, 1, 2]) {
    const sync = world.Issend(new Int32Array([111, round]), peer, 5);
    sync.cancel();
    await sync.wait();
    check(sync.status!.cancelled, `unmatched Issend ${round} is cancelled`);
    const big = world.Isend(new Uint8Array(BIG).fill(7), peer, 5);
    big.cancel();
    big.cancel(); // a second cancel asks nothing more
    await big.wait();
    check(big.status!.cancelled, `unmatched rendezvous Isend ${round} is cancelled`);
    const obj = world.isend('x'.repeat(BIG), peer, 5);
    obj.cancel();
    await obj.wait();
    check(obj.status!.cancelled, `unmatched rendezvous isend of a value ${round} is cancelled`);
  }
  // What the receiver gets instead: the one message not cancelled.
  await world.Send(new Int32Array([222, 0]), peer, 5);
}
await world.barrier();
if (rank === 1) {
  const into = new Int32Array(2);
  const st = await world.Recv(into, 0, 5);
  equal([Array.from(into), st.getCount()], [[222, 0], 8], 'the first message of tag 5 is the one not cancelled');
  equal(world.iprobe(0, 5), null, 'no cancelled message is left to receive');
}

// --- matched before the cancel: not cancelled -------------------------------------------------------
{
  const small = new Int32Array(2);
  const big = new Uint8Array(BIG);
  const reqs = rank === 1 ? [world.Irecv(small, 0, 6), world.Irecv(big, 0, 7)] : [];
  await world.barrier(); // the receives are posted
  if (rank === 0) {
    const sync = world.Issend(new Int32Array([333, 1]), peer, 6);
    const rndv = world.Isend(new Uint8Array(BIG).fill(9), peer, 7);
    // Both messages are matched on arrival: the cancels (behind them on the channel) find nothing to remove.
    sync.cancel();
    rndv.cancel();
    await sync.wait();
    await rndv.wait();
    check(!sync.status!.cancelled && !rndv.status!.cancelled, 'a matched send is not cancelled');
  }
  if (rank === 1) {
    await MPI.Request.waitall(reqs);
    equal(Array.from(small), [333, 1], 'the matched synchronous message arrived');
    equal(big[BIG - 1], 9, 'the matched rendezvous message arrived');
  }
}

// --- a standard eager send completes at once: cancel has no effect --------------------------------
{
  if (rank === 0) {
    const eager = world.Isend(new Int32Array([444, 2]), peer, 8);
    eager.cancel();
    await eager.wait();
    check(!eager.status!.cancelled, 'an eager standard send is not cancelled');
  } else {
    const into = new Int32Array(2);
    await world.Recv(into, 0, 8);
    equal(Array.from(into), [444, 2], 'the eager message arrived');
  }
}

// --- to an endpoint of this process (COMM_SELF) ------------------------------------------------
{
  const self = MPI.COMM_SELF;
  const s = self.Issend(new Int32Array([1, 2]), 0, 9);
  s.cancel();
  await s.wait();
  check(s.status!.cancelled, 'an unmatched Issend to self is cancelled');
  equal(self.iprobe(0, 9), null, 'the cancelled message to self is gone');
  const into = new Int32Array(2);
  const r = self.Irecv(into, 0, 10);
  const m = self.Issend(new Int32Array([3, 4]), 0, 10);
  m.cancel();
  await Promise.all([r.wait(), m.wait()]);
  check(!m.status!.cancelled, 'an Issend to self that a posted receive matched is not cancelled');
  equal(Array.from(into), [3, 4], 'the matched message to self arrived');
}

// --- from a worker thread: the cancel and its answer on the worker's own connections ---------------
{
  if (withWorker && rank === 0) {
    const w = new MPI.Worker(new URL('./p2p-cancel-worker.ts', import.meta.url));
    // Listen for 'exit' from the start: the worker may end before its message's continuation runs,
    // and a listener added after 'exit' would wait forever (the event loop empties: exit code 13).
    const exited = once(w, 'exit');
    const [[syncCancelled, bigCancelled]] = (await once(w, 'message')) as [[boolean, boolean]];
    check(syncCancelled && bigCancelled, `the worker's unmatched sends are cancelled (${syncCancelled}, ${bigCancelled})`);
    await exited;
  }
  await world.barrier();
  if (withWorker && rank === 1) {
    const into = new Int32Array(2);
    await world.Recv(into, 0, 20);
    equal(Array.from(into), [666, 0], "the worker's first message of tag 20 is the one not cancelled");
    equal(world.iprobe(0, 20), null, "no cancelled message of the worker's is left");
  }
}

await world.barrier();
await MPI.finalize();
console.log(`p2p-cancel OK rank ${rank}`);
