// Run with TSMPI_WARMUP > 0: the init warm-up (runtime/warm-up.ts) must leave no trace in the job.
// A token goes round the ranks (0 -> 1 -> ... -> size-1 -> 0) and is the only traffic before the
// checks, so each rank knows exactly what it must have seen: rank 0 checks right after init that
// nothing was sent or received (MPI.stats, per channel too) and nothing is probe-able; every other
// rank, once it has the token, that the token is all it received and what its wildcard receive got.
// Nobody finalizes (a barrier: more traffic) before rank 0 says go, after every check.
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;

function expectCounts(sent: number, received: number, when: string): void {
  const s = MPI.stats();
  equal(s.messagesSent, sent, `messagesSent ${when}`);
  equal(s.messagesReceived, received, `messagesReceived ${when}`);
  equal(s.unexpectedQueued, 0, `unexpectedQueued ${when}`);
  equal(s.perChannel.reduce((n, c) => n + c.sent, 0), sent, `frames sent ${when}`);
  equal(s.perChannel.reduce((n, c) => n + c.received, 0), received, `frames received ${when}`);
  equal(world.iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG), null, `iprobe on COMM_WORLD ${when}`);
  equal(MPI.COMM_SELF.iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG), null, `iprobe on COMM_SELF ${when}`);
}

if (rank === 0) {
  expectCounts(0, 0, 'right after init');
  await world.send('token 0', 1, 5);
  equal(await world.recv(MPI.ANY_SOURCE, MPI.ANY_TAG), `token ${size - 1}`, 'the wildcard receive of the token');
  expectCounts(1, 1, 'after the token came back');
  // Every rank has checked (each checks before it passes the token on): finalize's barrier may start.
  for (let r = 1; r < size; r++) await world.send('go', r, 6);
} else {
  equal(await world.recv(MPI.ANY_SOURCE, MPI.ANY_TAG), `token ${rank - 1}`, 'the wildcard receive of the token');
  expectCounts(0, 1, 'after the token arrived');
  await world.send(`token ${rank}`, (rank + 1) % size, 5);
  equal(await world.recv(0, 6), 'go', 'the go from rank 0');
}
console.log(`warm-up OK ${rank}`);
await MPI.finalize();
