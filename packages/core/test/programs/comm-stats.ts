// comm.stats() and MPI.stats() count exactly what a scripted exchange sends (issue 41). Every rank r
// sends 3 + r messages of 32 bytes to its right neighbour on a dup of COMM_WORLD and receives its
// left neighbour's; with argument `worker`, an MPI.Worker thread of each process also sends 4
// messages of 16 bytes to the right on the same communicator (MPI.stats() and comm.stats() then
// sum the two threads). Then a receive that must block adds blocked time, two collectives count
// two, and a communicator made after one was freed starts from zero. comm-stats.it.test.ts.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const withWorker = process.argv[2] === 'worker';
await MPI.init(withWorker ? { threadLevel: 'multiple' } : {});
const world = MPI.COMM_WORLD;
const n = world.size, me = world.rank;
const right = (me + 1) % n, left = (me + n - 1) % n;
const mine = 3 + me, theirs = 3 + left;
const WORKER_MESSAGES = withWorker ? 4 : 0;

const comm = await world.dup();
equal(comm.stats(), { messagesSent: 0, messagesReceived: 0, bytesSent: 0, bytesReceived: 0, collectives: 0, blockedMs: 0 }, 'a new communicator has done nothing');
// Every rank has checked before any sends on it (a rank that returns from dup first could).
await world.barrier();
const before = MPI.stats();

const sends = Array.from({ length: mine }, (_, i) => comm.Isend(new Float64Array([i, 0, 0, 0]), right, 1));
const worker = withWorker ? new MPI.Worker(new URL('./comm-stats-worker.ts', import.meta.url), { workerData: { comm, right, count: WORKER_MESSAGES } }) : null;
// Listened to at once: the worker may end before the receives below are done.
const exited = worker === null ? null : once(worker, 'exit');
const buf = new Float64Array(4);
for (let i = 0; i < theirs; i++) {
  await comm.Recv(buf, left, 1);
  equal(buf[0], i, `message ${i} from ${left}`);
}
const small = new Uint8Array(16);
for (let i = 0; i < WORKER_MESSAGES; i++) await comm.Recv(small, left, 2);
await MPI.Request.waitall(sends);
if (exited !== null) equal((await exited)[0], 0, 'the worker thread ended well');

const s = comm.stats();
equal(s.messagesSent, mine + WORKER_MESSAGES, 'messages sent on the communicator, by both threads');
equal(s.bytesSent, 32 * mine + 16 * WORKER_MESSAGES, 'bytes sent on the communicator');
equal(s.messagesReceived, theirs + WORKER_MESSAGES, 'messages received on the communicator');
equal(s.bytesReceived, 32 * theirs + 16 * WORKER_MESSAGES, 'bytes received on the communicator');
equal(s.collectives, 0, 'no collective on the communicator yet');
const after = MPI.stats();
// Nothing else was sent since `before`: the totals grew by exactly the communicator's sends, the worker's included.
equal(after.messagesSent - before.messagesSent, mine + WORKER_MESSAGES, 'MPI.stats() messagesSent over both threads');
equal(after.bytesSent - before.bytesSent, 32 * mine + 16 * WORKER_MESSAGES, 'MPI.stats() bytesSent over both threads');
// (Received: some of them may have arrived before `before`, once a neighbour left the barrier.)
check(after.messagesReceived >= s.messagesReceived, 'MPI.stats() counts every message received');

// No rank starts the next phases (whose messages count on comm too) before every rank has read its counts.
await world.barrier();

// A receive that cannot complete before the sender hears from us blocks: its time is counted.
const blockedBefore = comm.stats().blockedMs;
if (me === 0) {
  // Posted (and blocked in) before rank 1 may send: the call's synchronous part finds nothing.
  const blockedRecv = comm.Recv(buf, 1, 3);
  await world.send('go', 1, 9);
  await blockedRecv;
  check(comm.stats().blockedMs > blockedBefore, `the blocking Recv added blocked time (${blockedBefore} -> ${comm.stats().blockedMs})`);
} else if (me === 1) {
  await world.recv(0, 9);
  await comm.Send(buf, 0, 3);
}
// A receive of a message that is already there does not block: no time added.
if (me === 1) {
  await comm.Send(buf, 0, 4);
} else if (me === 0) {
  while (comm.iprobe(1, 4) === null) await new Promise((r) => setTimeout(r, 1));
  const t = comm.stats().blockedMs;
  await comm.Recv(buf, 1, 4);
  equal(comm.stats().blockedMs, t, 'a Recv that found its message did not block');
}

await comm.barrier();
await comm.Allreduce(new Float64Array([me]), new Float64Array(1), MPI.SUM);
equal(comm.stats().collectives, 2, 'two collectives');
check(comm.stats().messagesSent > mine + WORKER_MESSAGES || n === 1, 'the collectives\' messages count too');

comm.free();
await world.barrier();
const next = await world.dup();
equal(next.stats().messagesSent, 0, 'a new communicator starts from zero, whatever context id it got');
equal(next.stats().collectives, 0, 'its collectives too');
next.free();
console.log(`comm-stats OK ${me}`);
await MPI.finalize();
