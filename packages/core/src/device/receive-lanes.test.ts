/** receive-lanes.ts: context states decided by the first touch, FIFO matching per source with ANY_TAG, cancel, and demotion handing back the lane. */
import { describe, expect, it } from 'vitest';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { LANE_STATE, ReceiveLanes } from './receive-lanes.ts';

const ANY = -1;
const msg = (src: number, tag: number, v: number) => ({ src, tag, srcProcess: src, data: Uint8Array.of(v) });

describe('ReceiveLanes', () => {
  it('a context is lean or general by its first touch, and general for good', () => {
    const lanes = new ReceiveLanes();
    expect(lanes.state(5)).toBe(LANE_STATE.UNDECIDED);
    const lane = lanes.lean(5);
    expect(lane).not.toBeNull();
    expect(lanes.lean(5)).toBe(lane);
    expect(lanes.general(7)).toBeNull(); // undecided: nothing to move
    expect(lanes.lean(7)).toBeNull();
    expect(lanes.general(5)).toBe(lane); // the lane to move into the shared queues
    expect(lanes.state(5)).toBe(LANE_STATE.GENERAL);
    expect(lanes.lean(5)).toBeNull();
    expect(lanes.general(5)).toBeNull();
    expect(lanes.lanes()).toEqual([]);
  });

  it('on a collective context matches the sequence bits of a tag only (util/coll-tag.ts), on a point-to-point one the whole tag', () => {
    const seq = 3;
    const coll = new ReceiveLanes().lean(9)!; // suffix 1: a collective context
    coll.unexpected.push(msg(2, seq | (1 << 20), 0));
    expect(coll.takeUnexpected(2, seq | (2 << 20))!.data[0]).toBe(0);
    const r = new DevRequest(REQ_KIND.RECV);
    coll.posted.push({ r, src: 2, tag: seq | (4 << 20) });
    expect(coll.takePosted(2, (seq + 1) | (4 << 20))).toBeNull();
    expect(coll.takePosted(2, seq | (3 << 20))).toBe(r);
    const p2p = new ReceiveLanes().lean(8)!; // suffix 0: user point-to-point
    p2p.unexpected.push(msg(2, seq | (1 << 20), 0));
    expect(p2p.takeUnexpected(2, seq | (2 << 20))).toBeNull();
    expect(p2p.takeUnexpected(2, seq | (1 << 20))!.data[0]).toBe(0);
  });

  it('matches the oldest entry of the same source, a tag or ANY_TAG, in both directions', () => {
    const lane = new ReceiveLanes().lean(1)!;
    lane.unexpected.push(msg(2, 9, 0), msg(3, 8, 1), msg(3, 9, 2), msg(3, 9, 3));
    expect(lane.takeUnexpected(3, 9)!.data[0]).toBe(2);
    expect(lane.takeUnexpected(3, ANY)!.data[0]).toBe(1);
    expect(lane.takeUnexpected(4, ANY)).toBeNull();
    expect(lane.unexpected.map((m) => m.data[0])).toEqual([0, 3]);
    const [a, b, c] = [0, 1, 2].map(() => new DevRequest(REQ_KIND.RECV));
    lane.posted.push({ r: a!, src: 3, tag: 5 }, { r: b!, src: 3, tag: ANY }, { r: c!, src: 3, tag: 6 });
    expect(lane.takePosted(3, 6)).toBe(b); // ANY_TAG posted before the tag-6 receive
    expect(lane.takePosted(3, 6)).toBe(c);
    expect(lane.takePosted(2, 5)).toBeNull();
    expect(lane.unlink(a!)).toBe(true);
    expect(lane.unlink(a!)).toBe(false);
    expect(lane.posted).toEqual([]);
  });
});
