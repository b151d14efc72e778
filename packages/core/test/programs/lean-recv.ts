// The receive lanes (docs/adr/0020-lean-common-path.md, step 1), with one
// demotion trigger per job (argv[2]): the sender runs ahead (all of phase 1 is sent before the
// receiver posts anything), so the receiver's lane holds unexpected messages and a posted receive
// when the trigger moves them into the shared queues; after it every message must still arrive in
// MPI's order, the moved receive must match, and MPI.stats must count each message once.
// Receiver-side triggers: anysource, iprobe, probe, mprobe, improbe, general (a Float64Array
// receive from the sender); sender-side (a frame the lane cannot take arriving): ssend, rndv, object.
// Before the trigger, while the context is lean: ANY_TAG, truncation and cancel of a lean receive.
// Run with 2 processes, --progress inline (lanes) or threads (no lanes: the same program passes on the general path).
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';
import { check, equal, throwsMPI } from './check.ts';

const TRIGGERS = ['anysource', 'iprobe', 'probe', 'mprobe', 'improbe', 'general', 'ssend', 'rndv', 'object'] as const;
type Trigger = (typeof TRIGGERS)[number];
const trigger = process.argv[2] as Trigger;
if (!TRIGGERS.includes(trigger)) throw new Error(`lean-recv: unknown trigger ${String(process.argv[2])}`);

await MPI.init();
const world = MPI.COMM_WORLD;
/** Handshakes travel on another context, on the same connection as world's messages (so they come after them). */
const ctl = await world.dup();
const { rank } = world;
/** Receive lanes exist in inline progress (this program is single-threaded, one endpoint per process: DeviceOptions.lanes). */
const lean = runtime('lean-recv').progress === 'inline';
/** Lane state of world's point-to-point context (-1: no lanes in this process). */
const laneState = (): number => runtime('lean-recv').device.laneState(world.contextId);
const LANE_LEAN = 1;
const LANE_GENERAL = 2;
/** Phase 1: tag-1 messages 0..FIRST-1 (one byte each) and one 8-byte tag-2 message; phase 2: more tag-1 ones. */
const FIRST = 10;
const LATER = [10, 11, 12];
const BIG = 100_000;
const senderTriggers: Trigger[] = ['ssend', 'rndv', 'object'];
const senderSide = senderTriggers.includes(trigger);
// Counted from here. The receiver counts once the sender's 'hello' (sent after its last message of
// dup) has arrived, and before it lets the sender start: no message of dup or of the phases can
// arrive on either side of its count (a count taken while the peer may still send would race).
let s0: MPI.Stats;

if (rank === 0) {
  await ctl.send('hello', 1, 0);
  s0 = MPI.stats();
  equal(await ctl.recv(1, 0), 'start', 'handshake');
  const reqs: MPI.Request<any>[] = [];
  for (let i = 0; i < FIRST; i++) reqs.push(world.Isend(Uint8Array.of(i), 1, 1));
  reqs.push(world.Isend(new Uint8Array(8).fill(2), 1, 2));
  await ctl.send('go', 1, 0);
  equal(await ctl.recv(1, 0), 'ready', 'handshake');
  if (trigger === 'ssend') reqs.push(world.Issend(Uint8Array.of(50), 1, 1));
  if (trigger === 'rndv') reqs.push(world.Isend(new Uint8Array(BIG).fill(51), 1, 1));
  if (trigger === 'object') reqs.push(world.isend({ v: 52 }, 1, 1));
  if (trigger === 'general') reqs.push(world.Isend(Float64Array.of(53.5), 1, 5));
  reqs.push(world.Isend(Uint8Array.of(30), 1, 3));
  reqs.push(world.Isend(Uint8Array.of(40), 1, 4));
  for (const v of LATER) reqs.push(world.Isend(Uint8Array.of(v), 1, 1));
  await MPI.Request.waitall(reqs);
  // Every send above and the two handshakes, each counted once (an Issend once it matched).
  const sent = FIRST + 1 + (senderSide || trigger === 'general' ? 1 : 0) + 2 + LATER.length;
  equal(MPI.stats().messagesSent - s0.messagesSent, sent + 1, 'messages sent, counted once each');
  // Nothing more goes to the receiver (finalize's messages included) until it has counted.
  equal(await ctl.recv(1, 0), 'counted', 'handshake');
} else {
  equal(await ctl.recv(0, 0), 'hello', 'handshake');
  s0 = MPI.stats();
  await ctl.send('start', 0, 0);
  equal(await ctl.recv(0, 0), 'go', 'handshake');
  // Every phase-1 message has arrived (same connection, sent before 'go'): they wait in the lane.
  const b = new Uint8Array(BIG);
  const one = async (tag: number, what: string): Promise<number> => {
    const st = await world.Recv(b, 0, tag);
    equal(st.getCount() === 1 || st.getCount() === BIG, true, `${what}: count ${st.getCount()}`);
    return b[0]!;
  };
  equal(await one(1, 'first'), 0, 'the oldest tag-1 message first');
  // ANY_TAG stays lean: the oldest message of any tag (tag 1, value 1).
  const anyTag = await world.Recv(b, 0, MPI.ANY_TAG);
  equal([b[0], anyTag.tag], [1, 1], 'ANY_TAG takes the oldest message');
  // Truncation as on the general path.
  await throwsMPI(() => world.Recv(new Uint8Array(4), 0, 2), MPI.ERR_TRUNCATE, 'Recv', 'an 8-byte message into 4 bytes');
  // A lean receive that is cancelled; a later tag-4 message must not be swallowed by it.
  const cancelled = world.Irecv(new Uint8Array(1), 0, 4);
  cancelled.cancel();
  await cancelled.wait();
  equal(cancelled.status!.cancelled, true, 'cancel of a pending lean receive');
  // Posted in the lane when the trigger comes: it must match after the move.
  const b30 = new Uint8Array(1);
  const posted = world.Irecv(b30, 0, 3);
  if (lean) equal(laneState(), LANE_LEAN, 'world is lean before the trigger');
  else equal(laneState(), -1, 'no lanes outside inline progress');
  /** The tag-1 messages still to come, in order: values (or an object). */
  const expected: unknown[] = [];
  for (let i = 2; i < FIRST; i++) expected.push(i);
  switch (trigger) {
    case 'anysource': {
      const st = await world.Recv(b, MPI.ANY_SOURCE, 1);
      equal([b[0], st.source], [expected.shift(), 0], 'ANY_SOURCE takes the oldest');
      break;
    }
    case 'iprobe': {
      const st = world.iprobe(0, 1);
      check(st !== null, 'iprobe finds a waiting lean message');
      equal(st.getCount(), 1, 'iprobe count');
      break;
    }
    case 'probe': equal((await world.probe(0, 1)).getCount(), 1, 'probe count'); break;
    case 'mprobe': {
      const m = await world.mprobe(0, 1);
      await m.Recv(b);
      equal(b[0], expected.shift(), 'mprobe takes the oldest');
      break;
    }
    case 'improbe': {
      const m = world.improbe(0, 1);
      check(m !== null, 'improbe finds a waiting lean message');
      await m.Recv(b);
      equal(b[0], expected.shift(), 'improbe takes the oldest');
      break;
    }
    case 'general': break; // the Float64Array receive below is posted before 'ready'
    default: break; // sender-side: the trigger frame comes after 'ready'
  }
  const f64 = new Float64Array(1);
  const generalRecv = trigger === 'general' ? world.Irecv(f64, 0, 5) : null;
  if (lean && !senderSide) equal(laneState(), LANE_GENERAL, `world is general after ${trigger}`);
  await ctl.send('ready', 0, 0);
  if (trigger === 'ssend') expected.push(50);
  if (trigger === 'rndv') expected.push(51);
  if (trigger === 'object') expected.push({ v: 52 });
  expected.push(...LATER);
  for (const e of expected) {
    if (typeof e === 'number') equal(await one(1, `value ${e}`), e, 'tag-1 order across the move');
    else equal(await world.recv(0, 1), e, 'the object in order');
  }
  if (lean) equal(laneState(), LANE_GENERAL, 'world stays general');
  await posted.wait();
  equal(b30[0], 30, 'the receive posted in the lane matched after the move');
  equal((await world.Recv(b, 0, 4)).getCount(), 1, 'the message the cancelled receive did not take');
  equal(b[0], 40, 'tag-4 value');
  if (generalRecv !== null) {
    await generalRecv.wait();
    equal(f64[0], 53.5, 'the general receive');
  }
  const received = FIRST + 1 + (senderSide || trigger === 'general' ? 1 : 0) + 2 + LATER.length;
  equal(MPI.stats().messagesReceived - s0.messagesReceived, received + 1, 'messages received, counted once each');
  await ctl.send('counted', 0, 0);
}
ctl.free();
console.log(`lean-recv OK rank ${rank} ${trigger}`);
await MPI.finalize();
