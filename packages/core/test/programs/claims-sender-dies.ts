// A sending thread that dies on a receive claim's route (docs/adr/0023 step 2, as docs/adr/0019
// gap 4 for readers; receiveClaims on, 2 processes, threads or inline progress). Rank 0's worker
// thread A claims (COMM_WORLD, tag 1) with its first receive. Rank 1's worker W sends message 0
// by the engine (it starts W's connection to A's claim socket) and, once that connection carries
// frames, messages 1-9 on it; A answers `got` once it has all ten, and rank 1's main thread then
// terminates W, which never sent its FIN (its event loop is held). A's socket must take the end of
// W's connection for that FIN: rank 1's main thread's message 10 still arrives, A's route closes
// when A ends (it would wait for the FIN for ever otherwise: rank 0's main thread waits for A's
// exit), and the job ends normally.
import { once } from 'node:events';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal, until } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const device = runtime('claims-sender-dies').device;
check(device.shared.claimRoutes !== null, 'claims have routes in this job (receiveClaims on)');

if (!isMainThread) {
  const port = parentPort!;
  const b = new Uint8Array(1);
  if (world.rank === 0) {
    const r0 = world.Irecv(b, 1, 1);
    equal(device.claimsHeld, 1, 'A holds the claim of tag 1');
    port.postMessage('posted');
    await r0.wait();
    equal(b[0], 0, 'A: message 0');
    for (let i = 1; i < 10; i++) {
      await world.Recv(b, 1, 1);
      equal(b[0], i, `A: message ${i} from the sender that will die`);
    }
    equal(device.claimRouteStats.framesReceived, 9, 'A: messages 1-9 came on its claim socket');
    await world.send('got', 1, 11);
    await world.Recv(b, 1, 1);
    equal(b[0], 10, 'A: the main thread\'s message after the sender died');
    port.postMessage('done');
    // A ends here: its claim is given up and its route closes once W's FIN is in (its connection's end).
  } else {
    equal((await once(port, 'message'))[0], 'go', 'W: handshake');
    const table = device.shared.claimRoutes!;
    await until(() => table.find(0, 0, (world as unknown as { _ctx: number })._ctx, 1) >= 0, 'W: A\'s claim route never recorded');
    await world.Send(Uint8Array.of(0), 0, 1);
    await until(() => device.claimRouteStats.ready >= 1, 'W: the connection to A\'s claim socket never came up');
    for (let i = 1; i < 10; i++) await world.Send(Uint8Array.of(i), 0, 1);
    equal(device.claimRouteStats.framesSent, 9, 'W: messages 1-9 took the claim route');
    // An object receive: it claims nothing. Everything was read once A says so.
    equal(await world.recv<string>(0, 11), 'got', 'W: A has all ten');
    // Keep the event loop alive: an emptying loop would leave the route cleanly (the FIN) before the end.
    setInterval(() => {}, 1000);
    port.postMessage('sent');
  }
} else {
  const ctl = await world.dup();
  const worker = new MPI.Worker(new URL(import.meta.url));
  // Listened for from the start: the last message and the exit can come in one turn.
  const exited = once(worker, 'exit');
  if (world.rank === 0) {
    equal((await once(worker, 'message'))[0], 'posted', 'handshake');
    await ctl.send('go', 1, 0);
    equal((await once(worker, 'message'))[0], 'done', 'A finished');
  } else {
    equal(await ctl.recv(0, 0), 'go', 'handshake');
    worker.postMessage('go');
    equal((await once(worker, 'message'))[0], 'sent', 'W is on the route');
    await worker.terminate();
    await world.Send(Uint8Array.of(10), 0, 1);
  }
  await exited;
  await world.barrier();
  if (world.rank === 0) console.log(`claims-sender-dies OK ${MPI.config().progress}`);
  await MPI.finalize();
}
