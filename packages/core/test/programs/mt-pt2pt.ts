// THREAD_MULTIPLE point-to-point: N worker threads per process (argv[2], default 4)
// talk concurrently with their counterparts in the peer process (2 processes),
// while the main thread exchanges its own messages.
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

equal(await MPI.init({ threadLevel: 'multiple' }), 'multiple', 'level provided');
equal(MPI.queryThread(), 'multiple', 'queryThread');
const world = MPI.COMM_WORLD;
const peer = 1 - world.rank;
const threads = Number(process.argv[2] ?? 4);
const count = Number(process.argv[3] ?? 1000);
const workers = Array.from({ length: threads }, (_, index) =>
  new MPI.Worker(new URL('./mt-worker.ts', import.meta.url), { workerData: { comm: world, index, count, peer } }));
const exits = workers.map((w) => new Promise<number>((resolve, reject) => { w.on('exit', resolve); w.on('error', reject); }));
// The main thread works too, on its own tag.
for (let i = 0; i < 200; i++) {
  const r = world.irecv<number>(peer, 99);
  await world.send(i, peer, 99);
  equal(await r.wait(), i, `main thread round ${i}`);
}
equal(await Promise.all(exits), workers.map(() => 0), 'every worker exits 0');
await world.barrier();
if (world.rank === 0) console.log(`mt-pt2pt OK (${threads} threads x ${count} messages, ${JSON.stringify(MPI.config())})`);
await MPI.finalize();
