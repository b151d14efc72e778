// Body of one MPI.Worker thread of mt-pt2pt.ts: exchanges ordered messages with
// the thread of the same index in the peer process, on the communicator it was given.
import * as MPI from '@tsmpi/core';
import { equal, check } from './check.ts';

const level = await MPI.init();
equal(level, 'multiple', 'a worker joins at the process level');
const { comm, index, count, peer } = MPI.workerData as { comm: MPI.Comm; index: number; count: number; peer: number };
check(comm === MPI.COMM_WORLD, 'a Comm in workerData arrives as the same communicator');
// Specific-source receives on this thread's tag, plus a wildcard stream on tag 1000 + index.
const recvs = Array.from({ length: count }, () => comm.irecv<number>(peer, index));
const sends = Array.from({ length: count }, (_, i) => comm.isend(i, peer, index));
await MPI.Request.waitall(sends);
const got = (await MPI.Request.waitall(recvs)) as number[];
got.forEach((v, i) => equal(v, i, `thread ${index}: message ${i} in order`));
for (let i = 0; i < 50; i++) {
  const r = comm.irecv<{ i: number; from: number }>(MPI.ANY_SOURCE, 1000 + index);
  await comm.send({ i, from: comm.rank }, peer, 1000 + index);
  const v = await r.wait();
  equal([v.i, v.from], [i, peer], `thread ${index}: wildcard round ${i}`);
  equal(r.status!.source, peer, 'status source');
}
// Buffer form with a rendezvous-sized message.
const big = new Float64Array(20_000).fill(index + 1);
const back = new Float64Array(20_000);
await comm.Sendrecv(big, peer, 2000 + index, back, peer, 2000 + index);
equal(back[19_999], index + 1, `thread ${index}: large Sendrecv`);
