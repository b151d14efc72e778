// Objects freed while operations on them are pending, then new objects created
// at once (issue 13; MPI 3.1 §6.4.3): a communicator with object and buffer
// receives, a persistent receive, an mprobe'd Message and an idup in flight; a
// derived datatype; a user op in a nonblocking reduction; a group in a pending
// creation. Every pending operation completes normally with the right data, and
// nothing sent on the new objects lands on the freed ones. Then liveObjects
// returns to the predefined baseline (under gc: once collected). 2 processes.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const me = world.rank;
const strategy = MPI.config().refcount;
const baseline = MPI.stats().liveObjects;
equal(baseline, { comm: 4, group: 4, datatype: 11, request: 0, op: 12 }, 'the predefined objects after init');

// --- a communicator, with every kind of pending operation ------------------------------------
const c1 = await world.dup();
const c1Id = c1.contextId;
const vec = MPI.Datatype.vector(3, 1, 2, MPI.INT32).commit();
let r1: MPI.Request<string> | null = null;
let r2: MPI.Request<void> | null = null;
let persistent: MPI.Request<void> | null = null;
let message: MPI.Message | null = null;
const strided = new Int32Array(6).fill(-1);
const plain = new Int32Array(4);
if (me === 1) await c1.send('mprobed', 0, 8);
if (me === 0) {
  message = await c1.mprobe(1, 8);
  r1 = c1.irecv<string>(1, 5);
  r2 = c1.Irecv([strided, 1, vec], 1, 6);
  persistent = c1.RecvInit(plain, 1, 7);
  persistent.start();
}
const idup = c1.idup();
const sum = MPI.Op.create((a: Float64Array, b: Float64Array) => { for (let i = 0; i < a.length; i++) b[i] = a[i]! + b[i]!; });
const reduced = new Float64Array(2);
const reduction = world.Iallreduce(Float64Array.of(me + 1, 10), reduced, sum);
const pairGroup = world.group.incl([1, 0]);
const creation = world.create(pairGroup);

// Free everything while it is pending ...
pairGroup.free();
sum.free();
vec.free();
if (me === 0) c1.free();
const liveWhilePending = MPI.stats().liveObjects;
check(liveWhilePending.comm >= baseline.comm + 1, `the freed communicator is still live while operations use it: ${JSON.stringify(liveWhilePending)}`);

// ... and create new objects at once.
const c2 = await world.dup();
const vec2 = MPI.Datatype.vector(2, 1, 3, MPI.INT32).commit();
const max = MPI.Op.create((a: Float64Array, b: Float64Array) => { for (let i = 0; i < a.length; i++) b[i] = Math.max(a[i]!, b[i]!); });
const otherGroup = world.group.incl([0]);
check(c2.contextId !== c1Id, `c2 got the context id ${c1Id} of c1, whose operations are pending`);
if (me === 1) {
  await c2.send('c2 first', 0, 5);
  await c2.Send(Int32Array.of(7, 8), 0, 6);
  // Now the freed c1's pending receives get their messages (rank 1's c1 is still its own).
  await c1.send('c1 late', 0, 5);
  await c1.Send(Int32Array.of(1, 2, 3), 0, 6);
  await c1.Send(Int32Array.of(4, 5, 6, 7), 0, 7);
  c1.free();
} else {
  equal(await c2.recv<string>(1, 5), 'c2 first', 'the message on c2 arrives on c2, not on a freed c1 receive');
  const six = new Int32Array(6);
  await c2.Recv([six, 1, vec2], 1, 6);
  equal(Array.from(six), [7, 0, 0, 8, 0, 0], 'the new datatype lays the c2 message out');
  equal(await r1!.wait(), 'c1 late', 'the object receive on the freed c1 completes with its message');
  await r2!.wait();
  equal(Array.from(strided), [1, -1, 2, -1, 3, -1], 'the buffer receive on the freed c1 unpacks with the freed datatype');
  await persistent!.wait();
  equal(Array.from(plain), [4, 5, 6, 7], 'the persistent receive started before the free completes');
  persistent!.free();
  equal(await message!.recv<string>(), 'mprobed', 'the Message mprobe\'d before the free is received after it');
}
const c3 = await idup.wait();
equal(c3.size, 2, 'the idup in flight when its parent was freed completes');
equal(await c3.sendrecv(me, 1 - me, 1, 1 - me, 1), 1 - me, 'the communicator from idup works');
await reduction.wait();
equal(Array.from(reduced), [3, 20], 'the nonblocking reduction with a freed user op completes with its result');
const pair = await creation;
check(pair !== null && pair.size === 2 && pair.rank === 1 - me, 'the creation from a freed group completes with its members');
const maxed = new Float64Array(1);
await world.Allreduce(Float64Array.of(me), maxed, max);
equal(maxed[0], 1, 'the user op created after the free works');

// --- everything freed: back to the baseline ----------------------------------------------------
for (const x of [c2, c3, pair!]) x.free();
vec2.free();
max.free();
otherGroup.free();
await world.barrier();
const after = MPI.stats();
equal(after.liveObjects.request, 0, 'no request is live');
if (strategy !== 'gc') {
  equal(after.liveObjects, baseline, `${strategy}: everything freed is gone`);
} else {
  // Freed GC-managed objects wait for a collection (at most GC_THRESHOLD of them), and their groups with them.
  const waiting = after.liveObjects.comm - baseline.comm;
  check(waiting <= 64 && after.liveObjects.group - baseline.group <= waiting, `gc: only collectable objects remain: ${JSON.stringify(after.liveObjects)}`);
}
await world.barrier();
if (me === 0) console.log(`lifetime-free OK (refcount ${strategy}, ${JSON.stringify(MPI.config().progress)})`);
await MPI.finalize();
