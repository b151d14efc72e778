// Thread body of ic-threads.ts: intercommunicators over this thread's own dup of COMM_WORLD.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const { index, comm, reps } = MPI.workerData as { index: number; comm: MPI.Comm; reps: number };
const { rank, size } = comm;
const nLow = Math.floor(size / 2);
const isLow = rank < nLow;
const fail = (what: string): never => {
  throw new Error(`thread ${index} rank ${rank}: ${what}`);
};
for (let i = 0; i < reps; i++) {
  if (index % 2 === rank % 2) {
    const self = await MPI.COMM_SELF.dup();
    self.free();
  }
  const half = (await comm.split(isLow ? 0 : 1, rank))!;
  const inter = await half.createIntercomm(0, comm, isLow ? nLow : 0, index);
  const remoteSize = size - half.size;
  const sum = await inter.allreduce(1, MPI.SUM);
  if (sum !== remoteSize) fail(`allreduce gave ${sum}, expected ${remoteSize}`);
  if (half.rank < remoteSize) {
    const got = await inter.sendrecv(rank, half.rank, 3, half.rank, 3);
    if (got !== (isLow ? nLow + half.rank : half.rank)) fail(`sendrecv gave ${String(got)}`);
  }
  const dup = await inter.dup();
  const merged = await dup.merge(!isLow);
  const total = await merged.allreduce(rank, MPI.SUM);
  if (total !== (size * (size - 1)) / 2) fail(`merged allreduce gave ${total}`);
  merged.free();
  dup.free();
  inter.free();
  half.free();
}
parentPort!.postMessage({ index, done: reps });
