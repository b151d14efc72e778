// Receive claims (setting receiveClaims, docs/adr/0023-receive-claims.md, step 1), one trigger
// per job (argv[2]). Rank 1's worker thread A posts its first receive of tag 1 (it claims the key
// with receiveClaims=on), then rank 0 runs ahead: it sends all N messages at once, so A's lane
// holds unexpected messages when the trigger gives the claim up. After it every message must still
// arrive once and in the order sent:
//   thread     another worker thread B receives tag 1 while A holds the claim
//   anytag     A receives ANY_TAG (rank 0 sent tags 1 and 2 interleaved: merged by arrival)
//   anysource  A receives ANY_SOURCE
//   probe      A probes (blocking) on the context
//   iprobe     B polls Iprobe on the context until the message shows
//   object     A receives an object (another datatype than its claim's byte view)
//   exit       A ends holding the claim; B, started after, receives the rest
//   finalize   A receives everything and is still alive, holding its claim, at MPI.finalize
//   ring       (2 messages) the holder computes: A posts one receive in its lane and computes;
//              B's receive of the key asks A to give the claim up and rank 0 sends both messages
//              while A computes, so both are handed to A's completion ring while its bell waits.
//              A gets message 0, B message 1. (A serves its ring before its bell: the demotion
//              finds message 1 in the lane and no posted receive, so this does not reach the
//              path where a drained hand-off meets a posted receive in the demotion itself)
// Run with 2 processes, threadLevel multiple, TSMPI_RECEIVE_CLAIMS=on or off (the same program
// passes both ways; with on it also checks that A held the claim and gave it up).
//
// The claim's route (docs/adr/0023 step 2: on, threads or inline progress, one host): with it,
// rank 0 waits until A's route is recorded, sends message 0 by the engine (which starts its
// connection to A's claim socket), waits until that connection carries frames, then runs ahead
// with the rest, which take the route (in 'anytag' only the tag-1 ones: a sender leaves the route
// at a frame of another key, with a FIN, and joins it again at the next frame of the key, so its
// stream switches paths at every message from message K on). A checks how many frames its socket
// read: 39 (anytag 24), so the test fails if the messages silently took the engine.
// 'ring' keeps every message on the engine: its A computes, and a frame on its socket would wait
// for it (and rank 0's later frames to rank 1 behind the FIN that A would have to read).
import { once } from 'node:events';
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal, until } from './check.ts';

const TRIGGERS = ['thread', 'anytag', 'anysource', 'probe', 'iprobe', 'object', 'exit', 'finalize', 'ring'] as const;
type Trigger = (typeof TRIGGERS)[number];
/** Messages rank 0 sends, value = sequence number; A takes the first K before the trigger; B takes M in 'thread'. */
const N = 40;
const K = 10;
const M = 10;
/** The tag of message i: 2 for every other one after the first K in 'anytag', else 1. */
const tagOf = (trigger: Trigger, i: number): number => (trigger === 'anytag' && i >= K && i % 2 === 1 ? 2 : 1);

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const claimsHeld = (): number => runtime('claims').device.claimsHeld;
const claimsOn = (): boolean => runtime('claims').settings.receiveClaims === 'on';
/** Claims have routes in this job (receiveClaims on; the programs run on one host in threads or inline progress). */
const routesOn = (): boolean => runtime('claims').device.shared.claimRoutes !== null;
/** Frames of the key that A's claim socket reads: every message of tag 1 after message 0. */
const routedFrames = (trigger: Trigger): number => Array.from({ length: N - 1 }, (_, i) => tagOf(trigger, i + 1)).filter((t) => t === 1).length;

/** Receives `count` messages of `tag` (or ANY_TAG) into a byte view and checks they are `from`, from+1, ... */
async function receiveRun(from: number, count: number, trigger: Trigger, source = 0, tag = 1, what = 'A'): Promise<void> {
  const b = new Uint8Array(1);
  for (let i = from; i < from + count; i++) {
    const st = await world.Recv(b, source, tag);
    equal([b[0], st.tag], [i, tagOf(trigger, i)], `${what}: message ${i} in order`);
  }
}

/** A's computation in 'ring': until the main thread sets the flag (every message handed off), or 60 s (a failure). */
function computeUntil(flag: Int32Array): void {
  const giveUp = Date.now() + 60_000;
  while (Atomics.load(flag, 0) === 0) check(Date.now() < giveUp, 'A: the main thread never said the messages had arrived');
}

if (!isMainThread) {
  const { role, trigger, flag } = MPI.workerData as { role: 'A' | 'B'; trigger: Trigger; flag?: Int32Array };
  const port = parentPort!;
  const next = async (): Promise<string> => (await once(port, 'message'))[0] as string;
  if (trigger === 'ring') {
    const b = new Uint8Array(1);
    const r = world.Irecv(b, 0, 1);
    if (role === 'A') {
      equal(claimsHeld(), claimsOn() ? 1 : 0, 'A holds the claim of tag 1 after its receive');
      port.postMessage('posted');
      // Away from the event loop: B's request rings the bell, then the engine hands both messages
      // to A's completion ring.
      computeUntil(flag!);
      await r.wait();
      equal(b[0], 0, 'A: message 0');
      equal(claimsHeld(), 0, 'A gave its claim up to B');
    } else {
      // Irecv has asked A to give the claim up before it returns.
      port.postMessage('asked');
      await r.wait();
      equal(b[0], 1, 'B: message 1');
    }
    port.postMessage(`${role} done`);
  } else if (role === 'A') {
    const first = new Uint8Array(1);
    const r0 = world.Irecv(first, 0, 1);
    equal(claimsHeld(), claimsOn() ? 1 : 0, 'A holds the claim of tag 1 after its first receive');
    port.postMessage('posted');
    await r0.wait();
    equal(first[0], 0, 'A: message 0');
    await receiveRun(1, K - 1, trigger);
    equal(await next(), 'all arrived', 'A: handshake');
    // Rank 0 left the route before 'all sent' (a frame of another key: its FIN), which the engine
    // matched only after this thread read the FIN: every routed frame has been read.
    if (claimsOn()) check(routesOn(), 'A: claims have routes in this job');
    equal(runtime('claims').device.claimRouteStats.framesReceived, routesOn() ? routedFrames(trigger) : 0, 'A: frames its claim socket read');
    if (trigger === 'thread' || trigger === 'iprobe') {
      port.postMessage('K done');
      equal(await next(), 'B done', 'A: handshake');
      equal(claimsHeld(), 0, 'A gave its claim up when B touched the key');
      const from = trigger === 'thread' ? K + M : K + 1;
      await receiveRun(from, N - from, trigger);
    } else if (trigger === 'anytag') {
      await receiveRun(K, N - K, trigger, 0, MPI.ANY_TAG);
    } else if (trigger === 'anysource') {
      await receiveRun(K, N - K, trigger, MPI.ANY_SOURCE);
    } else if (trigger === 'probe') {
      const st = await world.probe(0, 1);
      equal([st.source, st.tag, st.getCount()], [0, 1, 1], 'A: the probe sees message K');
      equal(claimsHeld(), 0, 'A gave its claim up to probe');
      await receiveRun(K, N - K, trigger);
    } else if (trigger === 'object') {
      const v = await world.recv<Uint8Array>(0, 1);
      equal([v.length, v[0]], [1, K], 'A: an object receive takes message K as bytes');
      equal(claimsHeld(), 0, 'A gave its claim up for an object receive');
      await receiveRun(K + 1, N - K - 1, trigger);
    } else if (trigger === 'exit') {
      port.postMessage('K done');
      // A ends holding the claim, with the rest of the messages in its lane.
    } else if (trigger === 'finalize') {
      await receiveRun(K, N - K, trigger);
      equal(claimsHeld(), claimsOn() ? 1 : 0, 'A still holds its claim');
      port.postMessage('received all');
      // Alive, idle, holding the claim while the main thread finalizes (which waits for it to give
      // the claim up: the job ending is the check); it ends when told.
      equal(await next(), 'bye', 'A: handshake');
    }
    if (trigger !== 'exit' && trigger !== 'finalize') port.postMessage('A done');
  } else {
    if (trigger === 'thread') {
      await receiveRun(K, M, trigger, 0, 1, 'B');
    } else if (trigger === 'iprobe') {
      for (let turns = 0; ; turns++) {
        const st = world.iprobe(0, 1);
        if (st !== null) break;
        check(turns < 1_000_000, 'B: Iprobe never saw message K');
        await new Promise((r) => setImmediate(r));
      }
      await receiveRun(K, 1, trigger, 0, 1, 'B');
    } else if (trigger === 'exit') {
      await receiveRun(K, N - K, trigger, 0, 1, 'B');
    }
    port.postMessage('B done');
  }
} else {
  const trigger = process.argv[2] as Trigger;
  if (!TRIGGERS.includes(trigger)) throw new Error(`claims: unknown trigger ${String(process.argv[2])}`);
  const ctl = await world.dup();
  const url = new URL(import.meta.url);
  if (world.rank === 0) {
    equal(await ctl.recv(1, 0), 'go', 'handshake');
    const device = runtime('claims').device;
    const reqs: MPI.Request[] = [];
    if (routesOn() && trigger !== 'ring') {
      const table = device.shared.claimRoutes!;
      await until(() => table.find(1, 0, (world as unknown as { _ctx: number })._ctx, 1) >= 0, 'A\'s claim route never recorded');
      reqs.push(world.Isend(Uint8Array.of(0), 1, tagOf(trigger, 0)));
      await until(() => device.claimRouteStats.ready >= 1, 'the connection to A\'s claim socket never came up');
    }
    // Runs ahead: every message before the receiver takes any but the first.
    for (let i = reqs.length; i < (trigger === 'ring' ? 2 : N); i++) reqs.push(world.Isend(Uint8Array.of(i), 1, tagOf(trigger, i)));
    await MPI.Request.waitall(reqs);
    if (routesOn() && trigger !== 'ring') equal(device.claimRouteStats.framesSent, routedFrames(trigger), 'rank 0: frames sent on A\'s claim route');
    // On the same connection after them: once it is read, every message above has arrived.
    await ctl.send('all sent', 1, 0);
    equal(await ctl.recv(1, 0), 'done', 'handshake');
  } else if (trigger === 'ring') {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const a = new MPI.Worker(url, { workerData: { role: 'A', trigger, flag } });
    const aExit = once(a, 'exit');
    equal((await once(a, 'message'))[0], 'posted', 'handshake');
    const aDone = once(a, 'message');
    const b = new MPI.Worker(url, { workerData: { role: 'B', trigger } });
    const bExit = once(b, 'exit');
    equal((await once(b, 'message'))[0], 'asked', 'handshake');
    const bDone = once(b, 'message');
    await ctl.send('go', 0, 0);
    // On the connection after both messages: once it is read, both were handed to A's ring.
    equal(await ctl.recv(0, 0), 'all sent', 'handshake');
    Atomics.store(flag, 0, 1);
    equal((await bDone)[0], 'B done', 'handshake');
    equal((await aDone)[0], 'A done', 'handshake');
    await Promise.all([aExit, bExit]);
    await ctl.send('done', 0, 0);
  } else {
    const a = new MPI.Worker(url, { workerData: { role: 'A', trigger } });
    // Listened for from the start: a worker's last message and its 'exit' can be emitted in one
    // turn when this thread is busy as the worker ends, and a listener added after the message
    // would miss the exit.
    const aExit = once(a, 'exit');
    const fromA = (): Promise<string> => once(a, 'message').then(([m]) => m as string);
    equal(await fromA(), 'posted', 'handshake');
    await ctl.send('go', 0, 0);
    equal(await ctl.recv(0, 0), 'all sent', 'handshake');
    a.postMessage('all arrived');
    if (trigger === 'thread' || trigger === 'iprobe' || trigger === 'exit') {
      equal(await fromA(), 'K done', 'handshake');
      if (trigger === 'exit') await aExit;
      const b = new MPI.Worker(url, { workerData: { role: 'B', trigger } });
      const bExit = once(b, 'exit');
      equal((await once(b, 'message'))[0], 'B done', 'handshake');
      await bExit;
      if (trigger !== 'exit') a.postMessage('B done');
    }
    if (trigger === 'finalize') {
      equal(await fromA(), 'received all', 'handshake');
    } else if (trigger !== 'exit') {
      equal(await fromA(), 'A done', 'handshake');
      await aExit;
    }
    await ctl.send('done', 0, 0);
    if (trigger === 'finalize') {
      const setting = runtime('claims').settings.receiveClaims;
      await world.barrier();
      await MPI.finalize();
      a.postMessage('bye');
      await aExit;
      console.log(`claims OK (${trigger}, receiveClaims ${setting})`);
      process.exit(0);
    }
  }
  await world.barrier();
  if (world.rank === 1) console.log(`claims OK (${trigger}, receiveClaims ${runtime('claims').settings.receiveClaims})`);
  await MPI.finalize();
}
