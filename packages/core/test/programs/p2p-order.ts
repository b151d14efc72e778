// Ordering: many outstanding requests, wildcard and specific receives, buffer form.
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;

// A. 2000 outstanding isends with 5 tags; the receiver posts all receives of one tag before the next tag.
const N = 2000;
const TAGS = 5;
if (rank === 0) {
  const reqs = [];
  for (let i = 0; i < N; i++) reqs.push(world.isend({ i }, 1, i % TAGS));
  await MPI.Request.waitall(reqs);
} else if (rank === 1) {
  const reqs: MPI.Request<{ i: number }>[] = [];
  for (let t = TAGS - 1; t >= 0; t--) for (let k = 0; k < N / TAGS; k++) reqs.push(world.irecv<{ i: number }>(0, t));
  const values = (await MPI.Request.waitall(reqs)) as { i: number }[];
  for (let t = TAGS - 1, at = 0; t >= 0; t--) {
    for (let k = 0; k < N / TAGS; k++, at++) equal(values[at]!.i, k * TAGS + t, `message ${k} of tag ${t}`);
  }
}
await world.barrier();

// B. Buffer form: typed arrays of several element types, Isend/Irecv/waitall.
if (rank === 0) {
  const reqs = [];
  for (let i = 0; i < 100; i++) reqs.push(world.Isend(Float64Array.of(i, i + 0.5), 1, 9));
  reqs.push(world.Isend(Int32Array.of(-1, -2, -3), 1, 10));
  await MPI.Request.waitall(reqs);
} else if (rank === 1) {
  const bufs = Array.from({ length: 100 }, () => new Float64Array(2));
  const reqs = bufs.map((b) => world.Irecv(b, 0, 9));
  const ints = new Int32Array(3);
  reqs.push(world.Irecv(ints, MPI.ANY_SOURCE, 10));
  await MPI.Request.waitall(reqs);
  bufs.forEach((b, i) => equal(Array.from(b), [i, i + 0.5], `float buffer ${i}`));
  equal(Array.from(ints), [-1, -2, -3], 'int buffer');
  equal(reqs[100]!.status!.getCount(MPI.INT32), 3, 'getCount(INT32)');
  equal(reqs[100]!.status!.source, 0, 'status.source');
  equal(reqs[100]!.status!.tag, 10, 'status.tag');
}
await world.barrier();

// C. ANY_SOURCE/ANY_TAG then specific receives: each source's messages stay in order.
if (rank !== 0) {
  for (let t = 1; t <= 3; t++) await world.send({ from: rank, t }, 0, t);
} else {
  type M = { from: number; t: number };
  const wild = (await MPI.Request.waitall(Array.from({ length: size - 1 }, () => world.irecv<M>(MPI.ANY_SOURCE, MPI.ANY_TAG))))  as M[];
  const specific: M[] = [];
  for (let s = 1; s < size; s++) {
    const left = 3 - wild.filter((m) => m.from === s).length;
    for (let k = 0; k < left; k++) specific.push(await world.recv<M>(s, MPI.ANY_TAG));
  }
  for (let s = 1; s < size; s++) {
    const order = [...wild, ...specific].filter((m) => m.from === s).map((m) => m.t);
    equal(order, [1, 2, 3], `source ${s}: wildcard receives get the earlier messages, specific ones the rest`);
  }
}
await world.barrier();

// D. A wildcard receive posted before a specific one takes the first message.
if (rank === 0) {
  const w = world.irecv<string>(MPI.ANY_SOURCE, 7);
  const s = world.irecv<string>(1, 7);
  await world.send('go', 1, 8);
  equal(await w.wait(), 'first', 'wildcard receive gets the first message');
  equal(await s.wait(), 'second', 'specific receive gets the second');
} else if (rank === 1) {
  await world.recv(0, 8);
  await world.send('first', 0, 7);
  await world.send('second', 0, 7);
}
await world.barrier();
if (rank === 0) console.log('p2p-order OK');
await MPI.finalize();
