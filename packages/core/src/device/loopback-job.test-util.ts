/**
 * Test support for device/ (not exported from index.ts): simulated ranks in one
 * thread, each with its own shared state and Device, as separate processes
 * would have, connected by the loopback transport (no sockets, no child
 * processes), and small helpers to post sends and receives on them.
 */
import type { Logger } from '../log/index.ts';
import { createLoopbackFactory } from '../transport/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { Device } from './device.ts';
import { SharedState } from './shared-state.ts';

export const silentLog = { child: () => silentLog, trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, isLevelEnabled: () => false } as unknown as Logger;
export const EAGER_LIMIT = 1024;
export const CTX = 32;

const started: Device[] = [];

/** Destroys every device simulatedJob started (call it in afterEach). */
export function destroySimulated(): void {
  for (const d of started.splice(0)) d.destroy();
}

/** `ranks` started devices, one endpoint each, over one loopback network; `requestSlots` per rank (default 1024). */
export async function simulatedJob(ranks: number, requestSlots = 1024): Promise<Device[]> {
  const factory = createLoopbackFactory(ranks, 1);
  const devices = Array.from({ length: ranks }, (_, p) => {
    const shared = SharedState.create({
      processCount: ranks, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots, multithreaded: false, blockedSlotBytes: 4,
    });
    return new Device({
      process: p, processCount: ranks, endpointsPerProcess: 1, eagerLimit: EAGER_LIMIT, channels: 1, jobKey: 'k', listenHost: '127.0.0.1',
      transportFactory: factory, log: silentLog, threadId: 0, hosted: [0], statsRow: 0, refcount: 'predefined',
    }, shared);
  });
  const addresses = await Promise.all(devices.map((d) => d.listen()));
  for (const d of devices) d.start(addresses as string[]);
  started.push(...devices);
  return devices;
}

/** Resolves with r once it has completed. */
export function done(r: DevRequest): Promise<DevRequest> {
  return new Promise((resolve) => {
    if (r.done) resolve(r);
    else r.onComplete = resolve;
  });
}

/** Posts a receive of up to `bytes` bytes on endpoint `me`, as API call `call` would. */
export function recv(d: Device, me: number, src: number, tag: number, bytes: number, call?: string): DevRequest {
  const r = new DevRequest(REQ_KIND.RECV, call);
  r.buf = new Uint8Array(bytes);
  d.postRecv(r, me, CTX, src, tag);
  return r;
}

/** Sends `data` from endpoint `me`, as API call `call` would. */
export function send(d: Device, me: number, dst: number, tag: number, data: Uint8Array, sync = false, call?: string): DevRequest {
  const r = new DevRequest(REQ_KIND.SEND, call);
  d.send(r, me, dst, CTX, tag, data, false, sync);
  return r;
}
