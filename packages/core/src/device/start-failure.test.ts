// A request that fails to start (device.ts: no free request slot, no room in the
// shared big arena) leaves nothing behind, in every --refcount strategy: its slot
// goes back, the references it took (lifetime.ts acquire) are dropped, it is no
// longer counted live, and it does not hold the event loop. Simulated ranks over
// the loopback transport, as protocols.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../log/index.ts';
import { createLoopbackFactory } from '../transport/kit.ts';
import { ERR_NO_MEM, MPIError } from '../util/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { Device } from './device.ts';
import { REFCOUNT_STRATEGIES, type RefcountStrategy } from './lifetime.ts';
import { OBJECT_KIND } from './object-table.ts';
import { SharedState } from './shared-state.ts';

const silent = { child: () => silent, trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {}, isLevelEnabled: () => false } as unknown as Logger;
const EAGER_LIMIT = 1024;
const CTX = 32;
const SLOTS = 64;
const started: Device[] = [];
afterEach(() => {
  for (const d of started.splice(0)) d.destroy();
});

/** Two simulated ranks; rank 0 hosts no channel when `multithreaded` (its sends go through shared memory). */
async function simulatedJob(refcount: RefcountStrategy, multithreaded: boolean): Promise<Device[]> {
  const factory = createLoopbackFactory(2, 1);
  const devices = Array.from({ length: 2 }, (_, p) => {
    const shared = SharedState.create({
      processCount: 2, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots: SLOTS, multithreaded, blockedSlotBytes: 4,
    });
    return new Device({
      process: p, processCount: 2, endpointsPerProcess: 1, eagerLimit: EAGER_LIMIT, channels: 1, jobKey: 'k', listenHost: '127.0.0.1',
      transportFactory: factory, log: silent, threadId: 0, hosted: multithreaded && p === 0 ? [] : [0], statsRow: 0, refcount,
    }, shared);
  });
  const addresses = await Promise.all(devices.map((d) => d.listen()));
  for (const d of devices) d.start(addresses as string[]);
  started.push(...devices);
  return devices;
}

/** The error `fn` throws (it must throw). */
function thrown(fn: () => void): MPIError {
  try {
    fn();
  } catch (e) {
    if (e instanceof MPIError) return e;
    throw e;
  }
  throw new Error('expected an MPIError');
}

/** Ref'd timers: the device's keep-alive is one while it holds the event loop. */
const heldTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe.each(REFCOUNT_STRATEGIES)('a request that fails to start (--refcount %s)', (refcount) => {
  it('with every slot in use: postRecv, a synchronous send, a rendezvous send and a matched receive drop their references, their live count and their hold', async () => {
    const [d0, d1] = await simulatedJob(refcount, false);
    const comm = d0!.lifetime.create(OBJECT_KIND.COMM, [CTX, 0, 0], null, 'test');
    const type = d0!.lifetime.create(OBJECT_KIND.DATATYPE, [], null, 'test');
    const count = d0!.objects.refCount(comm);
    // A message for a matched receive, taken by mprobe before the slots run out.
    const r1 = new DevRequest(REQ_KIND.SEND);
    d1!.send(r1, 1, 0, CTX, 3, Uint8Array.of(7), false, false);
    while (d0!.probe(0, CTX, 1, 3) === null) await new Promise((r) => setTimeout(r, 1));
    const matched = d0!.mprobe(0, CTX, 1, 3)!;
    const pending: DevRequest[] = [];
    for (;;) {
      const r = new DevRequest(REQ_KIND.RECV);
      r.buf = new Uint8Array(4);
      d0!.lifetime.acquire(r, comm, type, 0);
      try {
        d0!.postRecv(r, 0, CTX, 1, 9);
      } catch (e) {
        expect((e as MPIError).errorClass).toBe(ERR_NO_MEM);
        break;
      }
      pending.push(r);
      expect(pending.length).toBeLessThan(SLOTS);
    }
    const live = d0!.lifetime.liveRequests();
    expect(live).toBe(pending.length);
    const timers = heldTimers();
    // Each named as the API call that starts it would name it: the error says that call.
    const starts: [string, number, (r: DevRequest) => void][] = [
      ['Irecv', REQ_KIND.RECV, (r) => d0!.postRecv(r, 0, CTX, 1, 9)],
      ['Issend', REQ_KIND.SEND, (r) => d0!.send(r, 0, 1, CTX, 9, Uint8Array.of(1), false, true)],
      ['Isend', REQ_KIND.SEND, (r) => d0!.send(r, 0, 1, CTX, 9, new Uint8Array(4 * EAGER_LIMIT), false, false)],
      ['Message.irecv', REQ_KIND.RECV, (r) => d0!.recvMatched(r, matched.slot)],
    ];
    for (const [call, kind, start] of starts) {
      const r = new DevRequest(kind, call);
      r.buf = new Uint8Array(4);
      d0!.lifetime.acquire(r, comm, type, 0);
      const e = thrown(() => start(r));
      expect([e.errorClass, e.call, e.message.startsWith(`MPI_ERR_NO_MEM: ${call}: all `)]).toEqual([ERR_NO_MEM, call, true]);
      expect(r.refMode).toBe(0);
      expect(r.slot).toBe(-1);
      expect(d0!.lifetime.liveRequests()).toBe(live);
    }
    expect(heldTimers()).toBe(timers);
    // Cancelling the receives gives everything back; the matched message is still receivable.
    for (const r of pending) expect(d0!.cancel(r)).toBe(true);
    expect(d0!.lifetime.liveRequests()).toBe(0);
    const r = new DevRequest(REQ_KIND.RECV);
    r.buf = new Uint8Array(4);
    d0!.recvMatched(r, matched.slot);
    expect([r.done, r.count, r.buf[0]]).toEqual([true, 1, 7]);
    d0!.lifetime.collect();
    expect(d0!.objects.refCount(comm)).toBe(count);
    d0!.lifetime.userFree(comm);
    d0!.lifetime.userFree(type);
    d0!.lifetime.collect();
    expect([d0!.objects.isLive(comm), d0!.objects.isLive(type)]).toEqual([false, false]);
  });

  it('with no room in the big arena (a rendezvous send from a thread that hosts no channel)', async () => {
    const [d0] = await simulatedJob(refcount, true);
    const comm = d0!.lifetime.create(OBJECT_KIND.COMM, [CTX, 0, 0], null, 'test');
    const count = d0!.objects.refCount(comm);
    const free = d0!.pool.alloc(1);
    d0!.pool.free(free);
    const timers = heldTimers();
    const r = new DevRequest(REQ_KIND.SEND);
    d0!.lifetime.acquire(r, comm, 0, 0);
    // Above the arena's largest block (1 GiB); the bytes are never touched.
    const e = thrown(() => d0!.send(r, 0, 1, CTX, 1, new Uint8Array(2 ** 30 + 1), false, false));
    expect([e.errorClass, r.refMode, r.slot, d0!.lifetime.liveRequests(), heldTimers()]).toEqual([ERR_NO_MEM, 0, -1, 0, timers]);
    // The slot went back: the next one allocated is the same.
    const again = d0!.pool.alloc(1);
    expect(again).toBe(free);
    d0!.pool.free(again);
    d0!.lifetime.collect();
    expect(d0!.objects.refCount(comm)).toBe(count);
  });
});
