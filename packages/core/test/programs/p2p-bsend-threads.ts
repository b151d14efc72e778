// Buffered sends from two threads of each process at once (issue 36; API.md "More point-to-point"):
// the attached buffer is the process's, so an MPI.Worker draws on the buffer its main thread
// attached (and cannot attach another), the two threads' messages in flight share its room (one
// more than fits fails with ERR_BUFFER in either thread), and the main thread's detach waits for
// the worker's buffered sends as well as its own. Run with --eager-limit 1024, so that each 2 KiB
// message goes by rendezvous and stays in flight until its receiver posts a receive; np >= 2.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { BYTES, PER_THREAD, messageOf } from './p2p-bsend-threads-body.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const size = world.size;
const right = (rank + 1) % size;
const left = (rank + size - 1) % size;

const space = new Uint8Array(2 * PER_THREAD * (BYTES + MPI.BSEND_OVERHEAD));
MPI.attachBuffer(space);
const w = new MPI.Worker(new URL('./p2p-bsend-threads-worker.ts', import.meta.url), { workerData: { right } });
const exited = once(w, 'exit');
const workerSent = once(w, 'message');
// The main thread's sends race the worker's for the same room.
for (let i = 0; i < PER_THREAD; i++) await world.Bsend(messageOf(rank, 1, i), right, 1);
const [report] = (await workerSent) as [string];
equal(report, 'sent', 'worker report');
// Both threads' messages are in flight (right has posted nothing yet): the buffer is full.
await throwsMPI(() => world.Bsend(new Uint8Array(1), right, 3), MPI.ERR_BUFFER, 'Bsend', 'one more Bsend in a buffer both threads filled');
let detached = false;
const detaching = MPI.detachBuffer().then((b) => {
  detached = true;
  return b;
});
for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
check(!detached, 'detach resolved while buffered sends of both threads were in flight');
// Let right receive (it posts its receives of our messages after our "go").
const go = world.send('go', right, 9);
equal(await world.recv<string>(left, 9), 'go', 'go');
await go;
const into = new Uint8Array(BYTES);
for (const tag of [1, 2]) {
  for (let i = 0; i < PER_THREAD; i++) {
    await world.Recv(into, left, tag);
    equal(Array.from(into.subarray(0, 4)), Array.from(messageOf(left, tag, i).subarray(0, 4)), `message ${i} of tag ${tag}`);
  }
}
check((await detaching) === space, 'detach gives back the attached buffer');
w.postMessage('done');
const [code] = (await exited) as [number];
equal(code, 0, 'worker exit code');
await world.barrier();
await MPI.finalize();
console.log(`p2p-bsend-threads OK rank ${rank}`);
