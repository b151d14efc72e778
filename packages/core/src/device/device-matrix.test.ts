// The device at its edge: real Device objects on the loopback transport with simulated ranks
// (loopback-job.test-util.ts), over the send paths (send-path.ts: hosted, the lean route, direct,
// injected; and Protocol.local) x the protocols (eager, synchronous, rendezvous) x the matchers
// (matcher.ts: the shared per-source queues, the receive lanes), then wildcard receives, probe,
// mprobe, cancel and lane demotion on each matcher.
//
// Not in the matrix: local x lanes (lanes need one endpoint per process, a local send two), and the
// reader routes' path (reader-routes.ts, a same-host socket per reader: route-*.test.ts and
// packages/core/test/endpoint-receive.it.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { ERR_TRUNCATE } from '../util/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import type { Device } from './device.ts';
import { LANE_STATE } from './receive-lanes.ts';
import { CTX, EAGER_LIMIT, destroySimulated, done, send, simulatedProcesses } from './loopback-job.test-util.ts';

afterEach(destroySimulated);

const ANY = -1;
type Path = 'hosted' | 'lean' | 'direct' | 'injected' | 'local';
type Proto = 'eager' | 'sync' | 'rendezvous';
type MatcherKind = 'queues' | 'lanes';

interface Pair {
  /** the receiving device, endpoint `rxEp` */
  rx: Device;
  rxEp: number;
  /** the sending device, endpoint `txEp` */
  tx: Device;
  txEp: number;
  /** the device that hosts the sender's channel (whose transport counts what its process sends on it) */
  txHost: Device;
}

/** A receiver with `matcher` and a sender on `path`, in a job laid out for them. */
async function pair(path: Path, matcher: MatcherKind): Promise<Pair> {
  const lanes = matcher === 'lanes';
  if (path === 'local') {
    const job = await simulatedProcesses([{}, {}], { endpointsPerProcess: 2 });
    return { rx: job.main[0]!, rxEp: 0, tx: job.main[0]!, txEp: 1, txHost: job.main[0]! };
  }
  if (path === 'direct' || path === 'injected') {
    const job = await simulatedProcesses([{ lanes }, { user: path }]);
    return { rx: job.main[0]!, rxEp: 0, tx: job.user[1]!, txEp: 1, txHost: job.main[1]! };
  }
  const job = await simulatedProcesses([{ lanes }, {}]);
  return { rx: job.main[0]!, rxEp: 0, tx: job.main[1]!, txEp: 1, txHost: job.main[1]! };
}

/** A receive as Pt2ptComm makes it on a bound communicator: recvBytes for a specific source (the device chooses the route), else postRecv. */
function recvAs(d: Device, me: number, src: number, tag: number, bytes: number): DevRequest {
  const buf = new Uint8Array(bytes);
  if (src !== ANY) return d.recvBytes(me, CTX, src, tag, buf, 0, 'Irecv');
  const r = new DevRequest(REQ_KIND.RECV, 'Irecv');
  r.buf = buf;
  d.postRecv(r, me, CTX, src, tag);
  return r;
}

/** A send on `path` ('lean': sendBytes, as Pt2ptComm.Isend calls it on a bound communicator); `lean` says whether it took the lean route. */
function sendAs(p: Pair, path: Path, tag: number, data: Uint8Array, sync: boolean): { r: DevRequest; lean: boolean } {
  if (path === 'lean' && !sync) {
    const r = p.tx.sendBytes(p.txEp, p.rxEp, CTX, tag, data, 0, 'Isend');
    if (r !== null) return { r, lean: false };
    const sent = new DevRequest(REQ_KIND.SEND, 'Isend');
    sent.done = true;
    return { r: sent, lean: true };
  }
  return { r: send(p.tx, p.txEp, p.rxEp, tag, data, sync, 'Isend'), lean: false };
}

const turns = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves once `cond` holds (the loopback delivers in later turns; a slow machine may take many). */
async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

function message(len: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: len }, (_, i) => (i * 7 + seed) & 0xff);
}

const PATHS: Path[] = ['hosted', 'lean', 'direct', 'injected', 'local'];
const PROTOS: Proto[] = ['eager', 'sync', 'rendezvous'];
const MATCHERS: MatcherKind[] = ['queues', 'lanes'];

describe('device matrix: send path x protocol x matcher', () => {
  for (const path of PATHS) {
    for (const proto of PROTOS) {
      for (const matcher of MATCHERS) {
        if (path === 'local' && matcher === 'lanes') continue;
        it(`${path} / ${proto} / ${matcher}: a posted and an unexpected receive get their messages in order, whole`, async () => {
          const p = await pair(path, matcher);
          const len = proto === 'rendezvous' ? 3 * EAGER_LIMIT + 5 : 40;
          const sync = proto === 'sync';
          const m1 = message(len, 1);
          const m2 = message(len, 2);
          const tag = 7;
          // Posted before the message comes (the posted path), then two messages, the second unexpected.
          const a = recvAs(p.rx, p.rxEp, p.txEp, tag, len);
          const s1 = sendAs(p, path, tag, m1, sync);
          const s2 = sendAs(p, path, tag, m2, sync);
          expect(s1.lean).toBe(path === 'lean' && proto === 'eager');
          await done(a);
          await turns();
          // Eager sends complete at once; a synchronous one only once matched; a rendezvous one once its data
          // has gone (between endpoints of one process there is no rendezvous: Protocol.local keeps the bytes at once).
          expect(s2.r.done).toBe(proto === 'eager' || (path === 'local' && proto === 'rendezvous'));
          const b = recvAs(p.rx, p.rxEp, p.txEp, tag, len);
          await Promise.all([done(b), done(s1.r), done(s2.r)]);
          for (const [r, m] of [[a, m1], [b, m2]] as const) {
            expect(r.error).toBeNull();
            expect([r.sourceEndpoint, r.tag, r.count]).toEqual([p.txEp, tag, len]);
            expect(r.buf!.every((x, i) => x === m[i])).toBe(true);
          }
          expect(s1.r.error ?? s2.r.error).toBeNull();
          // The path the frames took: the sender's host carries a hosted or injected path's frames, a direct
          // route carries its own (only rendezvous data goes back through the host, which answers the CTS).
          const frames = path === 'local' ? 0 : path === 'direct' ? (proto === 'rendezvous' ? 2 : 0) : proto === 'rendezvous' ? 4 : 2;
          expect(p.txHost.channelStats()![0]!.sent).toBe(frames);
          // A lean receive stays in its lane only while nothing but plain eager frames come.
          if (matcher === 'lanes') expect(p.rx.laneState(CTX)).toBe(proto === 'eager' ? LANE_STATE.LEAN : LANE_STATE.GENERAL);
          else expect(p.rx.laneState(CTX)).toBe(-1);
          expect(p.rx.heldOperations()).toBe(0);
          expect(p.rx.stats.messagesReceived).toBe(2);
        });
      }
    }
  }
});

for (const matcher of MATCHERS) {
  describe(`device edge cases, ${matcher}`, () => {
    it('wildcard receives (ANY_SOURCE, ANY_TAG) take messages in arrival order per source and report source and tag', async () => {
      const job = await simulatedProcesses([{ lanes: matcher === 'lanes' }, {}, {}]);
      const [rx, t1, t2] = job.main as [Device, Device, Device];
      send(t1, 1, 0, 3, Uint8Array.of(10));
      send(t1, 1, 0, 4, Uint8Array.of(11));
      send(t2, 2, 0, 5, Uint8Array.of(20));
      await until(() => rx.unexpectedQueued() === 3, 'the three messages wait as unexpected');
      const got: number[][] = [];
      for (let i = 0; i < 3; i++) {
        const r = await done(recvAs(rx, 0, ANY, ANY, 4));
        got.push([r.sourceEndpoint, r.tag, r.buf![0]!]);
      }
      // Per source in order; between sources any order.
      expect(got.filter(([s]) => s === 1)).toEqual([[1, 3, 10], [1, 4, 11]]);
      expect(got.filter(([s]) => s === 2)).toEqual([[2, 5, 20]]);
      // ANY_TAG from one source, posted before: the oldest message of that source.
      const any = recvAs(rx, 0, 2, ANY, 4);
      send(t2, 2, 0, 9, Uint8Array.of(21));
      expect([(await done(any)).tag, any.buf![0]]).toEqual([9, 21]);
      if (matcher === 'lanes') expect(rx.laneState(CTX)).toBe(LANE_STATE.GENERAL);
    });

    it('probe sees an unexpected eager and rendezvous message without taking it; mprobe takes it for recvMatched', async () => {
      const job = await simulatedProcesses([{ lanes: matcher === 'lanes' }, {}]);
      const [rx, tx] = job.main as [Device, Device];
      expect(rx.probe(0, CTX, 1, 6)).toBeNull();
      const big = message(2 * EAGER_LIMIT, 3);
      send(tx, 1, 0, 6, Uint8Array.of(1, 2, 3));
      const sBig = send(tx, 1, 0, 8, big);
      await until(() => rx.unexpectedQueued() === 2, 'both messages wait as unexpected');
      expect(rx.probe(0, CTX, 1, 6)).toEqual({ sourceEndpoint: 1, tag: 6, count: 3 });
      expect(rx.probe(0, CTX, ANY, ANY)).toEqual({ sourceEndpoint: 1, tag: 6, count: 3 });
      expect(rx.probe(0, CTX, 1, 8)).toEqual({ sourceEndpoint: 1, tag: 8, count: big.length });
      // Probing left both in place (a lane moved them to the shared queues: the probe touched the context).
      if (matcher === 'lanes') expect(rx.laneState(CTX)).toBe(LANE_STATE.GENERAL);
      const m = rx.mprobe(0, CTX, 1, 8);
      expect(m?.info).toEqual({ sourceEndpoint: 1, tag: 8, count: big.length });
      expect(rx.probe(0, CTX, 1, 8)).toBeNull();
      const r = new DevRequest(REQ_KIND.RECV, 'Mrecv');
      r.buf = new Uint8Array(big.length);
      rx.recvMatched(r, m!.slot);
      await Promise.all([done(r), done(sBig)]);
      expect(r.buf.every((x, i) => x === big[i])).toBe(true);
      const small = await done(recvAs(rx, 0, 1, 6, 3));
      expect([...small.buf!]).toEqual([1, 2, 3]);
      expect(rx.unexpectedQueued()).toBe(0);
    });

    it('cancel takes back a pending receive, never a matched one, and the message goes to the next receive', async () => {
      const job = await simulatedProcesses([{ lanes: matcher === 'lanes' }, {}]);
      const [rx, tx] = job.main as [Device, Device];
      const r = recvAs(rx, 0, 1, 4, 8);
      expect(rx.postedQueued()).toBe(1);
      expect(rx.cancel(r)).toBe(true);
      expect([r.done, r.cancelled, rx.postedQueued(), rx.heldOperations()]).toEqual([true, true, 0, 0]);
      expect(rx.cancel(r)).toBe(false);
      send(tx, 1, 0, 4, Uint8Array.of(5));
      const next = recvAs(rx, 0, 1, 4, 8);
      await done(next);
      expect([next.cancelled, next.buf![0]]).toEqual([false, 5]);
      expect(rx.cancel(next)).toBe(false);
      // A send is never cancelled here.
      expect(rx.cancel(send(tx, 1, 0, 4, Uint8Array.of(6)))).toBe(false);
    });

    it('a receive shorter than its message completes with ERR_TRUNCATE, the first bytes in it', async () => {
      const job = await simulatedProcesses([{ lanes: matcher === 'lanes' }, {}]);
      const [rx, tx] = job.main as [Device, Device];
      const r = recvAs(rx, 0, 1, 2, 2);
      tx.sendBytes(1, 0, CTX, 2, Uint8Array.of(1, 2, 3), 0, 'Isend');
      await done(r);
      expect(r.error?.errorClass).toBe(ERR_TRUNCATE);
      expect([...r.buf!]).toEqual([1, 2]);
    });
  });
}

describe('lane demotion (receive lanes)', () => {
  it('moves a lane into the shared queues in order when a synchronous message comes: posted receives first, then unexpected messages', async () => {
    const job = await simulatedProcesses([{ lanes: true }, {}, {}]);
    const [rx, t1, t2] = job.main as [Device, Device, Device];
    // Unexpected lean messages in the lane, and lean receives posted that they do not match.
    expect(t1.sendBytes(1, 0, CTX, 1, Uint8Array.of(11), 0, 'Isend')).toBeNull();
    expect(t2.sendBytes(2, 0, CTX, 1, Uint8Array.of(21), 0, 'Isend')).toBeNull();
    await until(() => rx.unexpectedQueued() === 2, 'both lean messages wait in the lane');
    const waiting = recvAs(rx, 0, 1, 5, 4);
    expect(rx.laneState(CTX)).toBe(LANE_STATE.LEAN);
    expect(rx.heldOperations()).toBe(1);
    // A synchronous frame touches the context from the general path: the lane moves.
    const ss = send(t1, 1, 0, 5, Uint8Array.of(12), true);
    await done(waiting);
    await done(ss);
    expect(rx.laneState(CTX)).toBe(LANE_STATE.GENERAL);
    expect([waiting.sourceEndpoint, waiting.tag, waiting.buf![0]]).toEqual([1, 5, 12]);
    // The unexpected messages came along in arrival order, and still match by source.
    const fromTwo = await done(recvAs(rx, 0, 2, 1, 4));
    const fromOne = await done(recvAs(rx, 0, 1, 1, 4));
    expect([fromTwo.buf![0], fromOne.buf![0]]).toEqual([21, 11]);
    // After demotion byte-view receives take the general path (posted in the shared queues); lean sends still arrive there.
    const after = recvAs(rx, 0, 1, 3, 4);
    expect([rx.postedQueued(), rx.laneState(CTX)]).toEqual([1, LANE_STATE.GENERAL]);
    expect(t1.sendBytes(1, 0, CTX, 3, Uint8Array.of(13), 0, 'Isend')).toBeNull();
    expect((await done(after)).buf![0]).toBe(13);
    expect([rx.unexpectedQueued(), rx.postedQueued(), rx.heldOperations()]).toEqual([0, 0, 0]);
  });

  it('an ANY_SOURCE receive demotes the lane before it is posted, so it meets the lane\'s oldest message', async () => {
    const job = await simulatedProcesses([{ lanes: true }, {}]);
    const [rx, tx] = job.main as [Device, Device];
    const lean = recvAs(rx, 0, 1, 9, 4);
    tx.sendBytes(1, 0, CTX, 2, Uint8Array.of(1), 0, 'Isend');
    tx.sendBytes(1, 0, CTX, 9, Uint8Array.of(2), 0, 'Isend');
    await done(lean);
    expect(rx.laneState(CTX)).toBe(LANE_STATE.LEAN);
    const any = await done(recvAs(rx, 0, ANY, ANY, 4));
    expect(rx.laneState(CTX)).toBe(LANE_STATE.GENERAL);
    expect([lean.buf![0], any.tag, any.buf![0]]).toEqual([2, 2, 1]);
  });

  it('a device without lanes posts byte-view receives in the shared queues; a send to its own process or above the eager limit takes the general route', async () => {
    const job = await simulatedProcesses([{}, {}], { endpointsPerProcess: 2 });
    const [d, peer] = job.main as [Device, Device];
    expect(d.laneState(CTX)).toBe(-1);
    const posted = d.recvBytes(0, CTX, 2, 0, new Uint8Array(1), 0, 'Irecv');
    expect([posted.done, d.postedQueued()]).toEqual([false, 1]);
    expect(d.cancel(posted)).toBe(true);
    // To its own process: Protocol.local, a request of the general send (eager: complete at once).
    const local = d.sendBytes(0, 1, CTX, 0, Uint8Array.of(1), 0, 'Isend');
    expect(local?.done).toBe(true);
    const ownMessage = await done(recvAs(d, 1, 0, 0, 1));
    expect(ownMessage.buf![0]).toBe(1);
    expect(d.sendBytes(0, 2, CTX, 0, Uint8Array.of(1), 0, 'Isend')).toBeNull();
    // Above the eager limit: a rendezvous of the general send, complete once its data has gone.
    const big = message(EAGER_LIMIT + 1, 4);
    const rndv = d.sendBytes(0, 2, CTX, 0, big, 0, 'Isend');
    expect(rndv).not.toBeNull();
    const first = await done(recvAs(peer, 2, 0, 0, 1));
    const second = await done(recvAs(peer, 2, 0, 0, big.length));
    await done(rndv!);
    expect([first.buf![0], second.count, second.buf!.every((x, i) => x === big[i])]).toEqual([1, big.length, true]);
  });
});
