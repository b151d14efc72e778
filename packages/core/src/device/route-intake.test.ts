// route-intake.ts: two consumers (a channel host and an endpoint reader) over real frame headers
// and payloads that the "transport" reuses after each call, four senders switching paths at
// random: every sender's frames are matched in the order sent, with their own bytes, and nothing
// stays held once both paths are read; untagged frames pass at once.
import { describe, expect, it } from 'vitest';
import { newFrameHeader, type FrameHeader } from '../transport/index.ts';
import { RouteIntakes, isRouteTagged, routeTag, tagEpoch, tagThread } from './route-intake.ts';
import { SenderRoute } from './route-switch.ts';
import { RouteTable } from './route-table.ts';

const LAYOUT = { processCount: 3, endpointsPerProcess: 2, threads: 64 };
/** This process is process 0: endpoints 0 and 1. */
const FIRST = 0;

interface Sent {
  srcProcess: number;
  thread: number;
  dst: number;
  route: SenderRoute;
  next: number;
}

/** A tiny deterministic generator, so that a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((res) => setTimeout(res, 0));
}

describe('route tags', () => {
  it('carry thread and epoch in a u32 with the top bit set', () => {
    for (const [thread, epoch] of [[0, 0], [63, 0], [5, (1 << 22) - 1], [63, 12345]] as const) {
      const t = routeTag(thread, epoch);
      expect(t).toBeGreaterThanOrEqual(0x8000_0000);
      expect(t).toBeLessThanOrEqual(0xffff_ffff);
      expect(isRouteTagged(t)).toBe(true);
      expect(tagThread(t)).toBe(thread);
      expect(tagEpoch(t)).toBe(epoch);
    }
    expect(isRouteTagged(0)).toBe(false);
    expect(isRouteTagged(0x7fff_ffff)).toBe(false);
  });
});

describe('RouteIntakes', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('matches 4 senders in order across random switches (seed %i)', async (seed) => {
    const random = rng(seed);
    const table = new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT);
    const matched = new Map<string, number[]>();
    const deliver = (srcProcess: number, h: FrameHeader, payload: Uint8Array): void => {
      const key = `${srcProcess}/${tagThread(h.seq)}/${h.dstEndpoint}`;
      const list = matched.get(key) ?? [];
      // The frame's number is in its tag-free fields and in its bytes: both must be the sender's.
      expect(new DataView(payload.buffer, payload.byteOffset).getUint32(0)).toBe(h.tag);
      list.push(h.tag);
      matched.set(key, list);
    };
    const consumers = [new RouteIntakes(table, FIRST, deliver), new RouteIntakes(table, FIRST, deliver)];
    const senders: Sent[] = [
      { srcProcess: 1, thread: 3, dst: 0 }, { srcProcess: 1, thread: 3, dst: 1 },
      { srcProcess: 2, thread: 3, dst: 0 }, { srcProcess: 2, thread: 63, dst: 1 },
    ].map((s) => ({ ...s, route: new SenderRoute(0), next: 0 }));
    const paths: { srcProcess: number; seq: number; dst: number; n: number; isMark: boolean }[][] = [[], []];
    const want = senders.map(() => 0);
    // The transport's reused header and read buffer: overwritten after every call.
    const header = newFrameHeader();
    const buffer = new Uint8Array(64);
    const read = (p: number): void => {
      const f = paths[p]!.shift();
      if (f === undefined) return;
      header.kind = f.isMark ? 7 : 1;
      header.srcEndpoint = f.srcProcess * 2;
      header.dstEndpoint = f.dst;
      header.seq = f.seq;
      header.tag = f.n;
      new DataView(buffer.buffer).setUint32(0, f.n);
      consumers[p]!.offer(f.srcProcess, header, buffer.subarray(0, 4), f.isMark);
      header.tag = -1;
      header.seq = 0;
      buffer.fill(0xff);
    };
    const total = 3000;
    for (let i = 0; i < total; i++) {
      const k = Math.floor(random() * senders.length);
      const s = senders[k]!;
      if (random() < 0.05) want[k] = 1 - want[k]!;
      const step = s.route.next(want[k]!);
      if (step.mark) paths[step.markPath]!.push({ srcProcess: s.srcProcess, seq: routeTag(s.thread, step.epoch), dst: s.dst, n: -1, isMark: true });
      paths[step.path]!.push({ srcProcess: s.srcProcess, seq: routeTag(s.thread, step.epoch), dst: s.dst, n: s.next++, isMark: false });
      const r = random();
      if (r < 0.3) read(0);
      else if (r < 0.6) read(1);
      if (random() < 0.02) await settle(); // lets held intakes wake on their words
    }
    while (paths[0]!.length > 0 || paths[1]!.length > 0) {
      read(random() < 0.5 ? 0 : 1);
      if (random() < 0.05) await settle();
    }
    await settle();
    expect(consumers[0]!.heldCount + consumers[1]!.heldCount, 'frames still held after both paths were read').toBe(0);
    for (const s of senders) {
      expect(matched.get(`${s.srcProcess}/${s.thread}/${s.dst}`) ?? []).toEqual(Array.from({ length: s.next }, (_, i) => i));
    }
  });

  it('passes untagged frames at once, without holding them', () => {
    const table = new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT);
    const got: number[] = [];
    const c = new RouteIntakes(table, FIRST, (_p, h) => got.push(h.tag));
    const h = newFrameHeader();
    // A tagged frame of epoch 1 waits for a mark that has not come...
    h.seq = routeTag(4, 1);
    h.dstEndpoint = 0;
    h.tag = 1;
    c.offer(1, h, new Uint8Array(0), false);
    // ...an untagged one (a sender without routes) does not wait behind it.
    h.seq = 0;
    h.tag = 2;
    c.offer(1, h, new Uint8Array(0), false);
    expect(got).toEqual([2]);
    expect(c.heldCount).toBe(1);
  });
});
