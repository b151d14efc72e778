// A claiming thread terminated with its claim route open (docs/adr/0023 step 2; receiveClaims on,
// 2 processes, threads or inline progress). Rank 0's worker thread A claims (COMM_WORLD, tag 1)
// with its first receive; rank 1's main thread sends message 0 by the engine (it starts its
// connection to A's claim socket) and, once that connection carries frames, messages 1-9 on it. A
// checks that its socket read those nine, tells its main thread, and is ended there, holding the
// claim with the route open: by process.exit(3) inside A (argv[2] 'exit') or by worker.terminate()
// from rank 0's main thread ('terminate'). Neither runs A's beforeExit, so the claim is not given
// up and the route is not closed. Rank 1 then waits for a message that never comes: the job must
// fail with ERR_PROC_FAILED naming A (packages/core/src/api/worker.ts claimsDied), not hang.
import { once } from 'node:events';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal, until } from './check.ts';

const how = process.argv[2];
if (how !== 'exit' && how !== 'terminate') throw new Error(`claims-holder-dies: argv[2] must be exit or terminate, not ${String(how)}`);

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const device = runtime('claims-holder-dies').device;
check(device.shared.claimRoutes !== null, 'claims have routes in this job (receiveClaims on)');

if (!isMainThread && MPI.workerData === 'A') {
  const port = parentPort!;
  const b = new Uint8Array(1);
  const r0 = world.Irecv(b, 1, 1);
  equal(device.claimsHeld, 1, 'A holds the claim of tag 1');
  port.postMessage('posted');
  await r0.wait();
  equal(b[0], 0, 'A: message 0, by the engine');
  for (let i = 1; i < 10; i++) {
    await world.Recv(b, 1, 1);
    equal(b[0], i, `A: message ${i}`);
  }
  const stats = device.claimRouteStats;
  equal([stats.framesReceived, stats.open, device.claimsHeld], [9, 1, 1], 'A: messages 1-9 came on its claim socket, whose route is open, and A holds the claim');
  // Keep the loop alive: an emptying loop would give the claim up and close the route cleanly.
  setInterval(() => {}, 1000);
  port.postMessage('received');
  // Told once rank 1's sender has ended (its connection to A's socket closed cleanly), so that only
  // A's own process can see the death: the check of worker.ts is then the only thing that ends the job.
  if (how === 'exit') {
    equal((await once(port, 'message'))[0], 'exit', 'A: handshake');
    process.exit(3);
  }
} else if (!isMainThread) {
  // W, rank 1's sender: message 0 by the engine, 1-9 on A's claim socket, then it ends cleanly.
  const table = device.shared.claimRoutes!;
  await until(() => table.find(0, 0, (world as unknown as { _ctx: number })._ctx, 1) >= 0, 'W: A\'s claim route never recorded');
  await world.Send(Uint8Array.of(0), 0, 1);
  await until(() => device.claimRouteStats.ready >= 1, 'W: the connection to A\'s claim socket never came up');
  for (let i = 1; i < 10; i++) await world.Send(Uint8Array.of(i), 0, 1);
  equal(device.claimRouteStats.framesSent, 9, 'W: messages 1-9 took the claim route');
} else {
  const ctl = await world.dup();
  if (world.rank === 0) {
    const worker = new MPI.Worker(new URL(import.meta.url), { argv: [how], workerData: 'A' });
    equal((await once(worker, 'message'))[0], 'posted', 'handshake');
    await ctl.send('go', 1, 0);
    equal((await once(worker, 'message'))[0], 'received', 'A has its ten messages');
    equal(await ctl.recv(1, 0), 'W gone', 'handshake');
    if (how === 'terminate') await worker.terminate();
    else worker.postMessage('exit');
    // Never answered: A's death ends the job first.
    await ctl.recv(1, 1);
  } else {
    equal(await ctl.recv(0, 0), 'go', 'handshake');
    const w = new MPI.Worker(new URL(import.meta.url), { argv: [how], workerData: 'W' });
    equal((await once(w, 'exit'))[0], 0, 'W ended cleanly');
    await ctl.send('W gone', 0, 0);
    // Never answered.
    await ctl.recv(0, 1);
  }
  console.log('claims-holder-dies: not reached');
  await MPI.finalize();
}
