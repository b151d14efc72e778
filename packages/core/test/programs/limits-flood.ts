// A flood of large unexpected messages keeps the receiver's memory bounded (issue 17, limits):
// rank 0 issues 200 isends of 8 MiB (1.6 GiB in all, from one buffer) before rank 1 posts any
// receive. Above the eager limit only a request-to-send travels until the receive is posted, so
// rank 1's resident memory grows by far less than the flood; then every message is received and
// checked. Prints the figures; 2 processes.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { fillPattern, sampledMismatch } from './limits-pattern.ts';

const N = 200;
const SIZE = 8 << 20;
const GROWTH_LIMIT = 1 << 30; // generous: buffering the flood would take 1.6 GiB

await MPI.init();
const world = MPI.COMM_WORLD;
const rss = (): number => process.memoryUsage.rss();
if (world.rank === 0) {
  const a = fillPattern(new Uint8Array(SIZE), 5);
  await world.barrier();
  const reqs = Array.from({ length: N }, () => world.Isend(a, 1, 3));
  await world.send('all issued', 1, 4);
  await MPI.Request.waitall(reqs);
} else {
  const b = new Uint8Array(SIZE);
  const before = rss();
  await world.barrier();
  // The note comes on the same channel after every request-to-send: all of the flood has arrived.
  await world.recv(0, 4);
  const during = rss();
  const queued = MPI.stats().unexpectedQueued;
  check(queued >= N, `all ${N} messages wait unexpected (${queued})`);
  check(during - before < GROWTH_LIMIT, `resident memory grew by ${during - before} bytes while ${N} x ${SIZE} bytes waited unexpected`);
  for (let k = 0; k < N; k++) {
    b.fill(0);
    const st = await world.Recv(b, 0, 3);
    equal(st.getCount(), SIZE, `message ${k} length`);
    equal(sampledMismatch(b, 5), -1, `message ${k} bytes`);
  }
  console.log(`limits-flood figures ${JSON.stringify({ messages: N, bytes: N * SIZE, rssGrowthWhileUnexpected: during - before, unexpectedQueued: queued, eagerLimit: MPI.config().eagerLimit })}`);
}
await world.barrier();
if (world.rank === 0) console.log('limits-flood OK');
await MPI.finalize();
