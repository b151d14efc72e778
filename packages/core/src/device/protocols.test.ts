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

describe('send cancel over loopback (MPI 3.1 §3.8.4: CANCEL_SEND -> CANCEL_ACK)', () => {
  it('an unmatched synchronous or rendezvous send is cancelled and its message never reaches a receive', async () => {
    const [d0, d1] = await simulatedJob(2);
    const sync = send(d1!, 1, 0, 11, Uint8Array.of(1), true);
    const rndv = send(d1!, 1, 0, 11, new Uint8Array(3 * EAGER_LIMIT));
    // Let both messages arrive unexpected at rank 0 before the cancels follow them.
    await new Promise((r) => setTimeout(r, 5));
    expect(d0!.unexpectedQueued()).toBe(2);
    expect(d1!.cancel(sync)).toBe(false); // the answer comes from the receiver
    d1!.cancel(rndv);
    await done(sync);
    await done(rndv);
    expect([sync.cancelled, rndv.cancelled, sync.error, rndv.error]).toEqual([true, true, null, null]);
    expect(d0!.unexpectedQueued()).toBe(0);
    send(d1!, 1, 0, 11, Uint8Array.of(7));
    const r = await done(recv(d0!, 0, 1, 11, 8));
    expect([r.count, r.buf![0]]).toEqual([1, 7]);
  });

  it('a send whose message a receive matched first is not cancelled: it completes as matched', async () => {
    const [d0, d1] = await simulatedJob(2);
    const r = recv(d0!, 0, 1, 12, 3 * EAGER_LIMIT);
    const s = send(d1!, 1, 0, 12, new Uint8Array(3 * EAGER_LIMIT).fill(5));
    await new Promise((res) => setTimeout(res, 5));
    d1!.cancel(s);
    await done(s);
    await done(r);
    expect([s.cancelled, r.count, r.buf![0]]).toEqual([false, 3 * EAGER_LIMIT, 5]);
  });
});

describe('many requests in flight (Completion.reqs grows past its first 1,024 entries: issue 38)', () => {
  it('3,000 posted receives and 3,000 pending synchronous sends all complete with their own data', async () => {
    const [d0, d1] = await simulatedJob(2, 8192);
    const n = 3000;
    const recvs = Array.from({ length: n }, (_, i) => recv(d0!, 0, 1, 20 + (i % 7), 4));
    const sends = Array.from({ length: n }, (_, i) => send(d1!, 1, 0, 20 + (i % 7), new Uint8Array(Uint32Array.of(i).buffer), true));
    for (const r of recvs) await done(r);
    for (const s of sends) await done(s);
    // Per tag, in order (MPI's non-overtaking rule): receive k of tag t gets the k-th send of tag t.
    const got = recvs.map((r) => new Uint32Array(r.buf!.slice(0, 4).buffer)[0]);
    expect(got).toEqual(Array.from({ length: n }, (_, i) => i));
  }, 60_000);
});
