// The device's point-to-point protocols (device.ts: eager, sync, rendezvous;
// matching order; unexpected messages) with three simulated ranks in one thread
// over the loopback transport: no sockets, no child processes. Each rank has its
// own shared state and Device, as separate processes would.
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../log/index.ts';
import { createLoopbackFactory } from '../transport/index.ts';
import { ERR_TRUNCATE } from '../util/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { Device } from './device.ts';
import { SharedState } from './shared-state.ts';

const silent = { child: () => silent, trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, isLevelEnabled: () => false } as unknown as Logger;
const EAGER_LIMIT = 1024;
const CTX = 32;
const started: Device[] = [];
afterEach(() => {
  for (const d of started.splice(0)) d.destroy();
});

async function simulatedJob(ranks: number): Promise<Device[]> {
  const factory = createLoopbackFactory(ranks, 1);
  const devices = Array.from({ length: ranks }, (_, p) => {
    const shared = SharedState.create({
      processCount: ranks, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots: 1024, multithreaded: false, blockedSlotBytes: 4,
    });
    return new Device({
      process: p, processCount: ranks, endpointsPerProcess: 1, eagerLimit: EAGER_LIMIT, channels: 1, jobKey: 'k', listenHost: '127.0.0.1',
      transportFactory: factory, log: silent, threadId: 0, hosted: [0], statsRow: 0, refcount: 'predefined',
    }, shared);
  });
  const addresses = await Promise.all(devices.map((d) => d.listen()));
  for (const d of devices) d.start(addresses as string[]);
  started.push(...devices);
  return devices;
}

function done(r: DevRequest): Promise<DevRequest> {
  return new Promise((resolve) => {
    if (r.done) resolve(r);
    else r.onComplete = resolve;
  });
}

function recv(d: Device, me: number, src: number, tag: number, bytes: number): DevRequest {
  const r = new DevRequest(REQ_KIND.RECV);
  r.buf = new Uint8Array(bytes);
  d.postRecv(r, me, CTX, src, tag);
  return r;
}

function send(d: Device, me: number, dst: number, tag: number, data: Uint8Array, sync = false): DevRequest {
  const r = new DevRequest(REQ_KIND.SEND);
  d.send(r, me, dst, CTX, tag, data, false, sync);
  return r;
}

describe('device protocols over loopback (3 simulated ranks)', () => {
  it('eager, posted before and after arrival, keeps per-pair order and reports source and tag', async () => {
    const [d0, d1, d2] = await simulatedJob(3);
    const early = recv(d0, 0, 1, 5, 8);
    send(d1!, 1, 0, 5, Uint8Array.of(1, 2, 3));
    send(d1!, 1, 0, 5, Uint8Array.of(4));
    send(d2!, 2, 0, 6, Uint8Array.of(9, 9));
    await done(early);
    expect([early.sourceEndpoint, early.tag, early.count, ...early.buf!.subarray(0, 3)]).toEqual([1, 5, 3, 1, 2, 3]);
    const second = await done(recv(d0!, 0, -1, 5, 8));
    expect([second.sourceEndpoint, second.count, second.buf![0]]).toEqual([1, 1, 4]);
    const fromTwo = await done(recv(d0!, 0, -1, -1, 8));
    expect([fromTwo.sourceEndpoint, fromTwo.tag, fromTwo.count]).toEqual([2, 6, 2]);
  });

  it('rendezvous: a message above the eager limit lands in the receive buffer once the receive is posted', async () => {
    const [d0, d1] = await simulatedJob(3);
    const big = Uint8Array.from({ length: 5 * EAGER_LIMIT }, (_, i) => i & 0xff);
    const s = send(d1!, 1, 0, 7, big);
    await new Promise((r) => setTimeout(r, 5));
    expect(s.done).toBe(false); // only the request-to-send has gone: nothing big is buffered
    const r = await done(recv(d0!, 0, 1, 7, big.length));
    await done(s);
    expect(r.count).toBe(big.length);
    expect(r.buf!.every((x, i) => x === (i & 0xff))).toBe(true);
  });

  it('a synchronous send completes only once matched', async () => {
    const [d0, , d2] = await simulatedJob(3);
    const s = send(d2!, 2, 0, 8, Uint8Array.of(42), true);
    await new Promise((r) => setTimeout(r, 5));
    expect(s.done).toBe(false);
    const r = await done(recv(d0!, 0, 2, 8, 1));
    await done(s);
    expect(r.buf![0]).toBe(42);
  });

  it('a receive shorter than the message completes with ERR_TRUNCATE', async () => {
    const [d0, d1] = await simulatedJob(2);
    send(d1!, 1, 0, 9, new Uint8Array(16));
    const r = await done(recv(d0!, 0, 1, 9, 4));
    expect(r.error?.errorClass).toBe(ERR_TRUNCATE);
  });
});
