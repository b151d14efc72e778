// A sender that runs ahead across the switch onto a receive claim's route (docs/adr/0023 step 2,
// receiveClaims on; 2 processes, threads or inline progress). Rank 1's worker thread A claims
// (COMM_WORLD, tag 1) with its first receive, whose route it announces. Rank 0's main thread then
// sends tag-1 messages in windows of 8 (a 1 ms timer between windows) without waiting for
// anything: its first sends start its connection to A's claim socket and go by the engine, and
// once the connection is up the next frame switches onto the route (a mark on the engine path)
// while the frames before it may still be unread there. It keeps sending until its frames have
// taken the route for 100 messages, then sends the end marker 4 times (a batch of A's receives
// may end in the middle). Every message must reach A once and
// in the order sent (values 0, 1, 2, ...); A's claim socket must have read the last 101 at least
// (so the route was taken), and rank 0's first window must have gone by the engine (so the run
// did cross a switch). Mid-run, A alternates blocking receives and short bursts of Irecvs so that
// both its lane's posted receives and its unexpected messages meet frames from both paths.
import { once } from 'node:events';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal } from './check.ts';

const WINDOW = 8;
const ROUTED = 100;
const END = 0xffff_ffff;

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;

if (!isMainThread) {
  const port = parentPort!;
  const device = runtime('claims-switch').device;
  const first = new Uint32Array(1);
  const r0 = world.Irecv(first, 0, 1);
  equal(device.claimsHeld, 1, 'A holds the claim of tag 1');
  port.postMessage('posted');
  await r0.wait();
  equal(first[0], 0, 'A: message 0');
  let expect = 1;
  let ends = 0;
  for (let round = 0; ends === 0; round++) {
    // Even rounds: one blocking receive; odd rounds: 4 receives posted at once, then awaited.
    const bufs = Array.from({ length: round % 2 === 0 ? 1 : 4 }, () => new Uint32Array(1));
    const reqs = bufs.map((b) => world.Irecv(b, 0, 1));
    await MPI.Request.waitall(reqs);
    for (const b of bufs) {
      if (b[0] === END) {
        ends++;
      } else {
        check(ends === 0, `A: message ${b[0]} after the end marker`);
        equal(b[0], expect, 'A: messages in the order sent');
        expect++;
      }
    }
  }
  for (const b = new Uint32Array(1); ends < 4; ends++) {
    await world.Recv(b, 0, 1);
    equal(b[0], END, 'A: only end markers after the first');
  }
  const st = device.claimRouteStats;
  check(st.framesReceived >= ROUTED + 4, `A: its claim socket read ${st.framesReceived} frames, expected at least ${ROUTED + 4}`);
  check(st.framesReceived < expect + 4, `A: its claim socket read ${st.framesReceived} frames of ${expect + 4}: the first window went by the engine`);
  port.postMessage(`A done ${expect} ${st.framesReceived}`);
} else {
  check(runtime('claims-switch').device.shared.claimRoutes !== null, 'claims have routes in this job (receiveClaims on)');
  const ctl = await world.dup();
  if (world.rank === 0) {
    equal(await ctl.recv(1, 0), 'go', 'handshake');
    const device = runtime('claims-switch').device;
    const reqs: MPI.Request[] = [];
    let i = 0;
    let firstWindowRouted = -1;
    while (device.claimRouteStats.framesSent < ROUTED) {
      for (let k = 0; k < WINDOW; k++) reqs.push(world.Isend(Uint32Array.of(i++), 1, 1));
      if (firstWindowRouted < 0) firstWindowRouted = device.claimRouteStats.framesSent;
      check(i < 1_000_000, 'rank 0: a million messages and the route never taken');
      // A timer, not setImmediate: the unexpected messages stay bounded while the connection comes up.
      await new Promise((r) => setTimeout(r, 1));
    }
    for (let k = 0; k < 4; k++) reqs.push(world.Isend(Uint32Array.of(END), 1, 1));
    await MPI.Request.waitall(reqs);
    equal(firstWindowRouted, 0, 'rank 0: the first window went by the engine');
    await ctl.send(i, 1, 0);
    equal(await ctl.recv(1, 0), 'done', 'handshake');
  } else {
    const a = new MPI.Worker(new URL(import.meta.url));
    const aExit = once(a, 'exit');
    equal((await once(a, 'message'))[0], 'posted', 'handshake');
    // Its first receive's announcement is on A's connections already: rank 0 may find the route.
    const done = once(a, 'message').then(([m]) => m as string);
    await ctl.send('go', 0, 0);
    const sent = await ctl.recv<number>(0, 0);
    const report = await done;
    const [, , got, routed] = report.split(' ');
    equal(Number(got), sent, 'A received every message rank 0 sent');
    await aExit;
    await ctl.send('done', 0, 0);
    console.log(`claims-switch OK (${sent} messages, ${routed} on the route)`);
  }
  await world.barrier();
  await MPI.finalize();
}
