// The per-peer neighbourhood step machine (neighbor-peers.ts): a plan started again and again on
// the same buffers (repeated neighbours, PROC_NULL edges, zero-byte blocks) over the simulator with
// no callback entries, recvThen, and recvIntoThen; LeanNeighbor's calls over a synchronous in-memory view (a call
// whose messages are there returns LEAN_DONE, overlapping calls each get a machine); and a message
// of another collective reported once every operation of the run has reported.
import { describe, expect, it } from 'vitest';
import { ERR_OTHER, MPIError, PROC_NULL, mpiError } from '../util/index.ts';
import { LEAN_DONE } from './lean-allreduce.ts';
import { LeanNeighbor, NeighborExchangePlan, type NeighborPlan } from './neighbor-peers.ts';
import { runPlan } from './plan.ts';
import type { CollPt2pt, ReceiveTarget, SendTarget } from './pt2pt.ts';
import { Sim, grid, withCallbacks } from './sim.test-util.ts';

/** A non-periodic line: PROC_NULL off both ends. */
function line(p: number, rank: number): NeighborPlan {
  const n = [rank > 0 ? rank - 1 : PROC_NULL, rank < p - 1 ? rank + 1 : PROC_NULL];
  return { sources: n, destinations: n, sendOrder: [1, 0] };
}


/** Slot i's expected first byte: what sources[i] put in the block paired with i (2d takes 2d + 1, and back). */
function want(plan: NeighborPlan, start: number, fill: number): number[] {
  return plan.sources.map((s, i) => (s === PROC_NULL ? fill : (16 * s + (i % 2 === 0 ? i + 1 : i - 1) + 64 * start) & 255));
}

describe('NeighborExchangePlan (planned at init, started again and again)', () => {
  const shapes: [string, number, (r: number) => NeighborPlan][] = [
    ['periodic 2x2 (repeated, adjacent)', 4, (r) => grid(2, 2, r)],
    ['periodic 1x2 (self and a peer, twice each)', 2, (r) => grid(1, 2, r)],
    ['periodic 3x3 (distinct)', 9, (r) => grid(3, 3, r)],
    ['a line of 4 (PROC_NULL at the ends)', 4, (r) => line(4, r)],
  ];
  for (const callbacks of ['none', 'recvThen', 'recvIntoThen'] as const) {
    it.each(shapes)(`%s: each of three starts delivers that start's blocks, callback entries: ${callbacks}`, async (_name, p, planOf) => {
      for (const bb of [0, 7, 300]) {
        const sim = new Sim(p, { seed: p + bb, rendezvousBytes: 256 });
        const got: number[][][] = [];
        await sim.run(async (sp, r) => {
          const plan = planOf(r);
          const deg = plan.destinations.length;
          const send = new Uint8Array(deg * bb);
          const recv = new Uint8Array(plan.sources.length * bb);
          const run = new NeighborExchangePlan(callbacks === 'none' ? sp : withCallbacks(sp, callbacks === 'recvIntoThen'), plan, 12, send, bb, recv, bb, 'NeighborAlltoallInit');
          got[r] = [];
          for (let start = 0; start < 3; start++) {
            for (let j = 0; j < deg; j++) send.fill((16 * r + j + 64 * start) & 255, j * bb, (j + 1) * bb);
            recv.fill(250);
            await runPlan(run);
            got[r]![start] = bb === 0 ? [] : plan.sources.map((_, i) => (recv[i * bb] === recv[(i + 1) * bb - 1] ? recv[i * bb]! : -1));
          }
        });
        if (bb === 0) continue;
        for (let r = 0; r < p; r++) {
          for (let start = 0; start < 3; start++) expect(got[r]![start], `rank ${r} start ${start} bb ${bb}`).toEqual(want(planOf(r), start, 250));
        }
      }
    });
  }
});

/**
 * A synchronous in-memory network of `p` views (one thread, no simulator): a send is delivered at
 * once, to a waiting receive (which reports before sendThen returns) or to a queue that a later
 * recvThen takes from before it returns, as the device does with messages already there.
 */
function syncViews(p: number, wrongTag: { tag: number } | null = null): CollPt2pt[] {
  const queued = new Map<string, Uint8Array[]>();
  const waiting = new Map<string, ReceiveTarget[]>();
  const key = (from: number, to: number, tag: number) => `${from}>${to}#${tag}`;
  return Array.from({ length: p }, (_, me): CollPt2pt => ({
    rank: me,
    size: p,
    send: () => Promise.reject(new Error('not used')),
    recv: () => Promise.reject(new Error('not used')),
    recvThen(source: number, tag: number, target: ReceiveTarget) {
      const q = queued.get(key(source, me, tag));
      const data = q?.shift();
      if (data !== undefined) target.received(data, wrongTag?.tag ?? tag, null);
      else waiting.set(key(source, me, tag), [...(waiting.get(key(source, me, tag)) ?? []), target]);
    },
    sendThen(dest: number, tag: number, data: Uint8Array, target: SendTarget) {
      const k = key(me, dest, tag);
      const w = waiting.get(k)?.shift();
      if (w !== undefined) w.received(data.slice(), wrongTag?.tag ?? tag, null);
      else queued.set(k, [...(queued.get(k) ?? []), data.slice()]);
      target.sent(null);
    },
    mismatch: (theirs, mine, source) => (theirs === mine ? null : mpiError(ERR_OTHER, 'NeighborAlltoall', `rank ${source} sent a message of another collective (tag ${theirs}, expected ${mine})`)),
  }));
}

describe('LeanNeighbor (the blocking and nonblocking calls of a communicator)', () => {
  it('a call whose messages are there returns LEAN_DONE; the first rank to call waits; results by source', async () => {
    const p = 4;
    const views = syncViews(p);
    const leans = views.map((v, r) => new LeanNeighbor(grid(2, 2, r), () => v));
    const bb = 5;
    const recvs = views.map(() => new Uint8Array(4 * bb));
    const calls: Promise<void>[] = [];
    for (let r = 0; r < p; r++) {
      const send = new Uint8Array(4 * bb);
      for (let j = 0; j < 4; j++) send.fill(16 * r + j, j * bb, (j + 1) * bb);
      calls.push(leans[r]!.start('NeighborAlltoall', 3, send, bb, recvs[r]!, bb));
    }
    // rank 3's neighbours (1 and 2) had sent before it called: it finished within the call
    expect(calls[3]).toBe(LEAN_DONE);
    expect(calls[0]).not.toBe(LEAN_DONE);
    await Promise.all(calls);
    for (let r = 0; r < p; r++) expect(Array.from({ length: 4 }, (_, i) => recvs[r]![i * bb]), `rank ${r}`).toEqual(want(grid(2, 2, r), 0, 0));
  });

  it('overlapping calls of one name each run their own machine; a finished one serves the next call', async () => {
    const views = syncViews(2);
    const leans = views.map((v, r) => new LeanNeighbor(grid(1, 2, r), () => v));
    const bb = 3;
    const run = (r: number, tag: number) => {
      const send = new Uint8Array(4 * bb);
      for (let j = 0; j < 4; j++) send.fill(16 * r + j + 64 * tag, j * bb, (j + 1) * bb);
      const recv = new Uint8Array(4 * bb);
      return { recv, done: leans[r]!.start('IneighborAlltoall', tag, send, bb, recv, bb) };
    };
    // rank 0 starts two calls before rank 1 starts any: both of rank 0's wait, each on its own machine
    const a0 = run(0, 0);
    const b0 = run(0, 1);
    const a1 = run(1, 0);
    const b1 = run(1, 1);
    await Promise.all([a0.done, b0.done, a1.done, b1.done]);
    for (const [r, c, tag] of [[0, a0, 0], [0, b0, 1], [1, a1, 0], [1, b1, 1]] as const) {
      expect(Array.from({ length: 4 }, (_, i) => c.recv[i * bb]), `rank ${r} call ${tag}`).toEqual(want(grid(1, 2, r), tag, 0));
    }
    // and again, now on kept machines
    const c0 = run(0, 2);
    const c1 = run(1, 2);
    await Promise.all([c0.done, c1.done]);
    expect(Array.from({ length: 4 }, (_, i) => c1.recv[i * bb])).toEqual(want(grid(1, 2, 1), 2, 0));
  });

  it('tells a blocking call\'s wait once each way when it must wait, before it settles; never when it finished within the call, nor for an I… call', async () => {
    const p = 4;
    const views = syncViews(p);
    const events: string[][] = views.map(() => []);
    const open = views.map(() => 0);
    const waitOf = (r: number) => (call: string) => (call === 'NeighborAlltoall'
      ? { enter: () => { events[r]!.push(`enter ${call}`); open[r]!++; }, leave: () => { events[r]!.push(`leave ${call}`); open[r]!--; } }
      : null);
    const leans = views.map((v, r) => new LeanNeighbor(grid(2, 2, r), () => v, waitOf(r)));
    const bb = 2;
    const openWhenSettled: number[] = [];
    const start = (call: string, tag: number): Promise<void>[] => views.map((_, r) => {
      const done = leans[r]!.start(call, tag, new Uint8Array(4 * bb).fill(r), bb, new Uint8Array(4 * bb), bb);
      return done.then(() => { openWhenSettled.push(open[r]!); });
    });
    await Promise.all(start('NeighborAlltoall', 1));
    // ranks 0-2 waited (a neighbour had not sent yet), rank 3 finished within its call
    expect(events.map((e) => e.join(','))).toEqual([0, 1, 2].map(() => 'enter NeighborAlltoall,leave NeighborAlltoall').concat(['']));
    await Promise.all(start('IneighborAlltoall', 2));
    expect(events.map((e) => e.length)).toEqual([2, 2, 2, 0]);
    expect(openWhenSettled).toEqual(new Array(2 * p).fill(0));
  });

  it('a blocking call that fails leaves its wait and rejects with the run\'s MPIError', async () => {
    const views = syncViews(2, { tag: 99 });
    const open = [0, 0];
    const leans = views.map((v, r) => new LeanNeighbor(line(2, r), () => v, () => ({ enter: () => { open[r]!++; }, leave: () => { open[r]!--; } })));
    const out = [0, 1].map((r) => leans[r]!.start('NeighborAlltoall', 4, new Uint8Array(2 * 4), 4, new Uint8Array(2 * 4), 4));
    for (const o of out) expect(((await o.then(() => null, (x: unknown) => x)) as MPIError).errorClass).toBe(ERR_OTHER);
    expect(open).toEqual([0, 0]);
  });

  it('a message of another collective is an MPIError of the view, reported once every operation has reported', async () => {
    const wrong = { tag: 99 };
    const views = syncViews(2, wrong);
    const leans = views.map((v, r) => new LeanNeighbor(line(2, r), () => v));
    const out = [0, 1].map((r) => leans[r]!.start('NeighborAlltoall', 4, new Uint8Array(2 * 4), 4, new Uint8Array(2 * 4), 4));
    for (const o of out) {
      const e = await o.then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(MPIError);
      expect((e as MPIError).errorClass).toBe(ERR_OTHER);
    }
  });
});
