// A persistent collective started in one thread and waited on in another (issue 3's relay, issue 36's
// reuse): the main thread starts one AllreduceInit request several times and hands each start to an
// MPI.Worker (MPI.dehydrate), which revives and waits on it. Each start's relay must carry that
// start's completion (its record is reused by the next start), and the main thread then sees the
// same start complete with the sum in its buffer.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const send = new Int32Array(1);
const recv = new Int32Array(1);
const req = world.AllreduceInit(send, recv, MPI.SUM);
const worker = new MPI.Worker(new URL('./coll-persistent-relay-worker.ts', import.meta.url));
const exited = once(worker, 'exit');
const STARTS = 5;
for (let it = 0; it < STARTS; it++) {
  send[0] = rank + 10 * it;
  recv[0] = -1;
  req.start();
  worker.postMessage(MPI.dehydrate(req));
  const [seen] = (await once(worker, 'message')) as [string];
  equal(seen, 'complete', `start ${it}: the worker's wait completed without error`);
  // The worker saw this start complete, so it has completed here too; test() reports it (it becomes inactive).
  check(req.test(), `start ${it}: complete in the thread that started it`);
  equal(recv[0], (size * (size - 1)) / 2 + 10 * it * size, `start ${it}: the sum`);
}
worker.postMessage(null);
const [code] = (await exited) as [number];
equal(code, 0, 'worker exit code');
req.free();
await world.barrier();
equal(MPI.stats().liveObjects.request, 0, 'no request is live at the end');
await MPI.finalize();
console.log(`coll-persistent-relay OK rank ${rank}`);
