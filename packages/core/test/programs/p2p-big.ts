// A 64 MiB rendezvous in buffer and object form, and a large message to self.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank } = world;
const N = (64 << 20) / 8;
const sum = (a: Float64Array): number => a.reduce((s, x, i) => s + x * ((i % 7) + 1), 0);
if (rank === 0) {
  const a = new Float64Array(N).map((_, i) => i % 1000);
  await world.Send(a, 1, 1);
  await world.send(a, 1, 2);
  world.send(sum(a), 1, 3);
  // to self, unexpected first
  const s = world.Isend(a.subarray(0, 1 << 20), 0, 4);
  const back = new Float64Array(1 << 20);
  await world.Recv(back, 0, 4);
  await s.wait();
  equal(sum(back), sum(a.subarray(0, 1 << 20)), 'large message to self');
} else {
  const b = new Float64Array(N);
  const st = await world.Recv(b, 0, 1);
  const o = await world.recv<Float64Array>(0, 2);
  const expected = await world.recv<number>(0, 3);
  equal(st.getCount(), 64 << 20, '64 MiB received');
  check(o instanceof Float64Array && o.length === N, 'object form keeps Float64Array');
  equal(sum(b), expected, 'buffer checksum');
  equal(sum(o), expected, 'object checksum');
}
await world.barrier();
if (rank === 0) console.log('p2p-big OK');
await MPI.finalize();
