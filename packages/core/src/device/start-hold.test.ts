// Frames that reach a device before Device.start (issue 34): a peer that started first sends to a
// process still in MPI.init, whose transport already listens. What those frames make the device
// send back (CANCEL_ACK, SYNC_ACK, RNDV_CTS) waits for start and then goes out, in order; nothing
// is dropped and nothing throws. Real devices on the loopback transport (loopback-job.test-util.ts),
// the receiver unstarted, on each matcher and in a multithreaded process; then StartHold alone.
import { afterEach, describe, expect, it } from 'vitest';
import { FRAME_KIND, newFrameHeader, type FrameHeader } from '../transport/index.ts';
import type { Device } from './device.ts';
import { CTX, EAGER_LIMIT, destroySimulated, done, recv, send, simulatedProcesses, type SimulatedProcess } from './loopback-job.test-util.ts';
import { StartHold, type SendPath } from './send-path.ts';

afterEach(destroySimulated);

const LAYOUTS: [string, SimulatedProcess][] = [
  ['shared queues', {}],
  ['receive lanes', { lanes: true }],
  ['a multithreaded process', { user: 'injected' }],
];

/** Resolves once `cond` holds (the loopback delivers in later turns; a slow machine may take many). */
async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** A few more turns of the event loop: time for anything (wrongly) sent to arrive. */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

const received = (d: Device): number => d.channelStats()![0]!.received;
const sent = (d: Device): number => d.channelStats()![0]!.sent;

describe.each(LAYOUTS)('frames that reach an unstarted device (%s)', (_name, layout) => {
  it('a cancel request is answered once the device starts: the send completes as cancelled, the message is gone', async () => {
    const job = await simulatedProcesses([{ ...layout, unstarted: true }, {}]);
    const [rx, tx] = job.main as [Device, Device];
    const r = send(tx, 1, 0, 5, Uint8Array.of(111), true, 'Issend');
    tx.cancel(r);
    // The message (EAGER_SYNC) and the cancel request (CANCEL_SEND) have reached the unstarted device.
    await until(() => received(rx) === 2, 'both frames reached the receiver');
    await turns();
    expect([r.done, sent(rx)]).toEqual([false, 0]);
    rx.start(job.addresses);
    await done(r);
    expect([r.error, r.cancelled, sent(rx), rx.probe(0, CTX, 1, 5), rx.unexpectedQueued()]).toEqual([null, true, 1, null, 0]);
  });

  it('a synchronous and a rendezvous message matched before start get their SYNC_ACK and RNDV_CTS after it, and arrive whole', async () => {
    const job = await simulatedProcesses([{ ...layout, unstarted: true }, {}]);
    const [rx, tx] = job.main as [Device, Device];
    const big = Uint8Array.from({ length: 3 * EAGER_LIMIT + 5 }, (_, i) => (i * 7) & 0xff);
    const rSync = recv(rx, 0, 1, 1, 8, 'Irecv');
    const rBig = recv(rx, 0, 1, 2, big.length, 'Irecv');
    const sSync = send(tx, 1, 0, 1, Uint8Array.of(1, 2, 3), true, 'Issend');
    const sBig = send(tx, 1, 0, 2, big, false, 'Isend');
    await until(() => received(rx) === 2, 'both messages reached the receiver');
    await turns();
    expect([sSync.done, sBig.done, rBig.done, sent(rx)]).toEqual([false, false, false, 0]);
    rx.start(job.addresses);
    await Promise.all([done(sSync), done(sBig), done(rSync), done(rBig)]);
    expect([sSync.error, sBig.error, rSync.error, rBig.error]).toEqual([null, null, null, null]);
    expect([rSync.count, Array.from(rSync.buf!.subarray(0, 3)), rBig.count]).toEqual([3, [1, 2, 3], big.length]);
    expect(rBig.buf!).toEqual(big);
    // SYNC_ACK and RNDV_CTS, sent at start.
    expect(sent(rx)).toBe(2);
  });
});

/** A path that records what it is given (StartHold's pure logic). */
function recordingPath(): SendPath & { frames: [number, number, number, number[] | null, string][] } {
  const frames: [number, number, number, number[] | null, string][] = [];
  return {
    frames,
    out: (proc, h, payload, call) => frames.push([proc, h.kind, h.aux, payload === null ? null : Array.from(payload), call]),
    first: () => { throw new Error('not expected'); },
    eagerMax: () => 0,
    hosts: () => false,
    queueEager: () => false,
    waitsToOpen: () => false,
  };
}

describe('StartHold', () => {
  it('keeps copies of the frames sent before release, sends them in order on release, forwards later ones', () => {
    const hold = new StartHold();
    const h: FrameHeader = newFrameHeader();
    const payload = Uint8Array.of(9, 9);
    h.kind = FRAME_KIND.CANCEL_ACK;
    h.aux = 1;
    hold.out(1, h, null, 'progress');
    h.kind = FRAME_KIND.RMA;
    h.aux = 2;
    hold.out(2, h, payload, 'Put');
    // The caller reuses its header and payload: what was held must not change.
    h.aux = 99;
    payload.fill(0);
    const path = recordingPath();
    expect(path.frames).toEqual([]);
    hold.release(path);
    expect(path.frames).toEqual([[1, FRAME_KIND.CANCEL_ACK, 1, null, 'progress'], [2, FRAME_KIND.RMA, 2, [9, 9], 'Put']]);
    h.kind = FRAME_KIND.SYNC_ACK;
    h.aux = 3;
    hold.out(0, h, null, 'progress');
    expect(path.frames.at(-1)).toEqual([0, FRAME_KIND.SYNC_ACK, 3, null, 'progress']);
    expect(path.frames.length).toBe(3);
  });

  it('refuses a message of its own before start (an internal error, never a silent hold)', () => {
    const hold = new StartHold();
    expect(() => hold.first()).toThrow(/internal: the device sent a message before Device.start/);
    expect([hold.eagerMax(), hold.hosts(), hold.queueEager(), hold.waitsToOpen()]).toEqual([0, false, false, false]);
  });
});
