// Progress never depends on a busy thread: one thread computes for BUSY_MS
// without entering MPI while other threads of its process keep exchanging
// messages, and the messages for the busy thread's receives are matched and
// completed meanwhile (testall right after the loop, without yielding).
// In threads progress the busy thread is the main thread itself (the channel
// engines progress); in inline progress, where the main thread runs the
// channels, it is a worker. 2 processes; argv[2] = BUSY_MS (default 5000).
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { busyReceives, spinThenTest } from './mt-busy-body.ts';
import { check, equal } from './check.ts';

const busyMs = Number(process.argv[2] ?? 5000);
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const peer = 1 - world.rank;
const { progress, matching, channels } = MPI.config();
const url = new URL('./mt-busy-worker.ts', import.meta.url);
const start = (role: string, index = 0): MPI.Worker => new MPI.Worker(url, { workerData: { role, index, busyMs } });
const helpers = [start('chatty', 0), start('chatty', 1), start('sender')];
const exits = helpers.map((w) => once(w, 'exit'));
await Promise.all(helpers.map((w) => once(w, 'message'))); // 'running'
const go = (): Promise<void> => world.send('go', world.rank, 600);

if (progress === 'threads') {
  const reqs = busyReceives(world, peer);
  await world.barrier(); // both processes' receives are posted
  await go();
  check(spinThenTest(reqs, busyMs), 'the busy main thread\'s receives completed while it computed');
} else {
  const busy = start('busy');
  await once(busy, 'message'); // 'ready'
  await world.barrier();
  busy.postMessage('start');
  await go();
  const [ok] = await once(busy, 'message');
  equal(ok, true, 'the busy worker\'s receives completed while it computed');
}
await Promise.all(exits);
await world.barrier();
if (world.rank === 0) console.log(`mt-busy OK ${JSON.stringify({ progress, matching, channels })}`);
await MPI.finalize();
