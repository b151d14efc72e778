// The device's point-to-point protocols (device.ts: eager, sync, rendezvous;
// matching order; unexpected messages) with three simulated ranks in one thread
// over the loopback transport (loopback-job.test-util.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { ERR_TRUNCATE } from '../util/index.ts';
import { EAGER_LIMIT, destroySimulated, done, recv, send, simulatedJob } from './loopback-job.test-util.ts';

afterEach(destroySimulated);

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
