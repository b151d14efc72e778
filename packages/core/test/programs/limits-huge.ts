// One message of more than 2 GiB (issue 17, limits): 3 GiB Uint8Arrays between 2 ranks by Send/Recv,
// Isend/Irecv, Bcast and Allreduce (SUM, in place), each checked on a sample (both ends and every
// 4099th byte), after a probe that reports the full count. Each rank holds one 3 GiB buffer; the
// collectives may add scratch. A message of 4 GiB (beyond the largest, 4 GiB - 1 bytes) fails
// with a clear MPIError. Prints each rank's peak RSS. argv[2] = GiB (default 3).
import * as MPI from '@tsmpi/core';
import { equal, throwsMPI } from './check.ts';
import { fillPatternFast, sampledCheck } from './limits-pattern.ts';

const SIZE = Math.round(Number(process.argv[2] ?? 3) * 2 ** 30);
const pattern = (seed: number) => (i: number): number => (i * 31 + seed) & 255;

await MPI.init();
const world = MPI.COMM_WORLD;
const t0 = Date.now();
const step = (what: string): void => {
  console.log(`limits-huge ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s rank ${world.rank} rss ${Math.round(process.memoryUsage.rss() / 2 ** 20)} MiB peak ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
};
const buf = new Uint8Array(SIZE);
if (world.rank === 0) {
  fillPatternFast(buf, 1);
  await world.Send(buf, 1, 1);
  fillPatternFast(buf, 2);
  await world.Isend(buf, 1, 2).wait();
} else {
  const probed = await world.probe(0, 1);
  equal(probed.getCount(), SIZE, 'probe count of the waiting message');
  const st = await world.Recv(buf, 0, 1);
  equal(st.getCount(), SIZE, 'Recv count');
  equal(sampledCheck(buf, pattern(1)), -1, 'Recv bytes');
  const r = world.Irecv(buf, 0, 2);
  await r.wait();
  equal(r.status!.getCount(), SIZE, 'Irecv count');
  equal(sampledCheck(buf, pattern(2)), -1, 'Irecv bytes');
}
step('send/recv done');
if (world.rank === 0) fillPatternFast(buf, 3);
await world.Bcast(buf, 0);
equal(sampledCheck(buf, pattern(3)), -1, 'Bcast bytes');
step('bcast done');
// Rank r holds the pattern of seed 3 + r: the sum of both is (2 * 31 * i + 7) mod 256.
if (world.rank === 1) fillPatternFast(buf, 4);
await world.Allreduce(MPI.IN_PLACE, buf, MPI.SUM);
equal(sampledCheck(buf, (i) => (i * 62 + 7) & 255), -1, 'Allreduce bytes');
step('allreduce done');
// A message of exactly 4 GiB does not fit the wire's u32 lengths: a clear error, before anything is sent.
// (The array is never written: its pages stay unallocated.)
const four = new Uint8Array(2 ** 32);
await throwsMPI(() => world.Send(four, 1 - world.rank, 9), MPI.ERR_COUNT, 'Send', 'Send of 4 GiB');
await throwsMPI(() => world.Bcast(four, 0), MPI.ERR_COUNT, 'Bcast', 'Bcast of 4 GiB');
await throwsMPI(() => world.send(four, 1 - world.rank, 9), MPI.ERR_ARG, 'send', 'object send of 4 GiB');
await world.barrier();
const maxRssMiB = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(`limits-huge rank ${world.rank} peak RSS ${maxRssMiB} MiB`);
if (world.rank === 0) console.log(`limits-huge OK ${SIZE}`);
await MPI.finalize();
