// Thread ids are recycled (issue 13): one process starts 200 MPI.Workers over its
// lifetime, a few at a time; each joins MPI, exchanges a message with the main
// thread and ends. Only 64 can be alive at once. 1 process.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

const total = Number(process.argv[2] ?? 200);
await MPI.init({ threadLevel: 'multiple' });
const self = MPI.COMM_SELF;
const url = new URL('./worker-ids-worker.ts', import.meta.url);
let finished = 0;
for (let i = 0; i < total; i += 4) {
  const batch = Array.from({ length: 4 }, (_, j) => {
    const w = new MPI.Worker(url, { workerData: { index: i + j, self } });
    return once(w, 'exit');
  });
  // A worker's eager send completes at once, so it may end before its message is received here.
  for (const [code] of (await Promise.all(batch)) as [number][]) equal(code, 0, `exit code of a worker of ${i}..${i + 3}`);
  for (let j = 0; j < 4; j++) equal(await self.recv<number>(MPI.ANY_SOURCE, i + j), i + j, `worker ${i + j} sent its index`);
  finished += 4;
}
equal(MPI.stats().liveObjects.request, 0, 'no request is left behind by the workers');
console.log(`worker-ids OK (${finished} workers)`);
await MPI.finalize();
