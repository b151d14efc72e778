// probe/iprobe then receive; mprobe from two concurrent ANY_SOURCE receivers.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;

// probe then receive with the probed size.
if (rank === 1) {
  await world.Send(Float64Array.of(1, 2, 3, 4), 0, 3);
} else if (rank === 0) {
  const st = await world.probe(MPI.ANY_SOURCE, 3);
  equal([st.source, st.tag, st.getCount(MPI.FLOAT64)], [1, 3, 4], 'probe status');
  const buf = new Float64Array(st.getCount(MPI.FLOAT64));
  const rs = await world.Recv(buf, st.source, st.tag);
  equal(Array.from(buf), [1, 2, 3, 4], 'data after probe');
  equal(rs.getCount(), 32, 'bytes received');
  equal(world.iprobe(MPI.ANY_SOURCE, 3), null, 'nothing left to iprobe');
}
await world.barrier();

// mprobe: two ANY_SOURCE consumers race for messages from every other rank; each message is received once.
const PER = 200;
if (rank !== 0) {
  const reqs = [];
  for (let i = 0; i < PER; i++) reqs.push(world.isend({ id: rank * 100000 + i }, 0, 5));
  await MPI.Request.waitall(reqs);
} else {
  const total = PER * (size - 1);
  const seen = new Set<number>();
  let taken = 0;
  const consumer = async (name: string): Promise<number> => {
    let mine = 0;
    while (taken < total) {
      taken++;
      const msg = await world.mprobe(MPI.ANY_SOURCE, 5);
      const v = await msg.recv<{ id: number }>();
      check(!seen.has(v.id), `${name}: message ${v.id} delivered twice`);
      seen.add(v.id);
      mine++;
    }
    return mine;
  };
  const [a, b] = await Promise.all([consumer('A'), consumer('B')]);
  equal(seen.size, total, 'every message received exactly once');
  equal(a + b, total, 'consumers together');
  // improbe on an empty queue.
  equal(world.improbe(MPI.ANY_SOURCE, 5), null, 'improbe finds nothing');
}
await world.barrier();
if (rank === 0) console.log('p2p-probe OK');
await MPI.finalize();
