// Messages never wait for the thread that sent them (docs/adr/0015): with
// direct sends a user thread owns the connections it sends on, and still
//   - a thread that computes right after `await send()`, without entering MPI
//     again, has sent: the peer receives the message and answers another
//     thread of the sender's process while the sender still computes;
//   - a thread that sends and ends at once loses nothing, and its end is not
//     taken for its process's: the job goes on and finalizes normally.
// 2 processes; every progress mode. argv[2] = how long the computing thread
// waits for the answer before it gives up (ms, default 20000).
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const giveUpMs = Number(process.argv[2] ?? 20_000);
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const url = new URL('./mt-strand-worker.ts', import.meta.url);

if (world.rank === 0) {
  // flag[0]: the answer arrived (set by this main thread, read by the computing worker)
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const computing = new MPI.Worker(url, { workerData: { role: 'compute', flag, giveUpMs } });
  const computed = once(computing, 'message');
  // From the start: its last message and its 'exit' can be emitted in one turn when this thread
  // is busy as the worker ends, and a listener added after the message would miss the exit.
  const computingExit = once(computing, 'exit');
  const exiting = new MPI.Worker(url, { workerData: { role: 'exit' } });
  await once(exiting, 'exit');
  const answer = await world.recv<string>(1, 702);
  equal(answer, 'got 700 and 701', 'the peer received both threads\' messages');
  Atomics.store(flag, 0, 1);
  const [sawAnswer] = await computed;
  check(sawAnswer === true, 'the answer came while the sending thread computed (its message was not kept on its connection)');
  await computingExit;
  // The process goes on after its threads ended: traffic both ways on every path.
  equal(await world.sendrecv('after', 1, 703, 1, 703), 'after from 1', 'exchange after the threads ended');
} else {
  const a = await world.recv<string>(0, 700);
  const b = await world.recv<number[]>(0, 701);
  equal(a, 'from the computing thread', 'message 700');
  equal(b, [1, 2, 3], 'message 701');
  await world.send('got 700 and 701', 0, 702);
  equal(await world.sendrecv('after from 1', 0, 703, 0, 703), 'after', 'exchange after the threads ended');
}
await world.barrier();
if (world.rank === 0) console.log(`mt-strand OK (progress ${MPI.config().progress})`);
await MPI.finalize();
