// lane-matcher.ts over a real shared state and Completion, with frames given as numbers and a payload
// range, as the transport's onEager hands them: matching in a lane (posted first, unexpected first, by
// source and tag), demotion into the shared queues in order when the general path touches a context,
// cancel, and failure.
import { describe, expect, it } from 'vitest';
import { FRAME_KIND, newFrameHeader, type FrameHeader } from '../transport/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { Completion } from './completion.ts';
import { LaneMatcher, type LaneHost } from './lane-matcher.ts';
import type { Matcher } from './matcher.ts';
import { LANE_STATE } from './receive-lanes.ts';
import { SlotPool } from './request-table.ts';
import { SharedState, STAT } from './shared-state.ts';
import { ThreadBridge } from './thread-bridge.ts';
import { createLifetime } from './lifetime.ts';

const ANY = -1;
const CTX = 7;
/** This process's one endpoint; sources 1 and 2 are other processes' endpoints. */
const ME = 0;

function setup() {
  const shared = SharedState.create({ processCount: 3, endpointsPerProcess: 1, channels: 1, matching: 'parallel', requestSlots: 64, multithreaded: false, blockedSlotBytes: 4 });
  const pool = new SlotPool(shared.table, null);
  const lifetime = createLifetime('predefined', shared.objects, shared.buffers.lifetime, 0);
  const stat = shared.statsRow(0);
  const completion = new Completion(shared, pool, lifetime, new ThreadBridge(shared), 0, stat, null);
  const demoted: { posted: [DevRequest, number, number][]; arrived: [number, number, number[]][] } = { posted: [], arrived: [] };
  // The general matcher stands in as a LaneHost only: these tests use the lanes' own methods.
  const general: LaneHost = {
    postDemoted: (r, _ctx, src, tag) => void demoted.posted.push([r, src, tag]),
    arriveDemoted: (p, h: FrameHeader, data) => void demoted.arrived.push([p, h.srcEndpoint * 1000 + h.tag, [...data]]),
  };
  const lanes = new LaneMatcher(general as LaneHost & Matcher, completion, shared, stat, ME);
  const recv = (src: number, tag: number, bytes = 8): DevRequest => {
    const r = lanes.leanRecv(CTX, src, tag, new Uint8Array(bytes), 'Irecv');
    expect(r).not.toBeNull();
    return r!;
  };
  // As the transport offers a plain EAGER frame (interface.ts EagerArrived): numbers, and the payload as a range of a larger read.
  const arrive = (src: number, tag: number, payload: number[]): boolean => {
    const read = Uint8Array.of(0xee, 0xee, ...payload, 0xee);
    return lanes.eagerArrived(src, CTX, src, ME, tag, read, 2, 2 + payload.length);
  };
  const stop = (): void => completion.stop();
  return { lanes, completion, stat, demoted, recv, arrive, stop };
}

describe('LaneMatcher', () => {
  it('matches a posted receive with an arriving frame by source and tag, and counts it', () => {
    const t = setup();
    const a = t.recv(1, 5);
    const b = t.recv(2, ANY);
    expect(t.completion.active).toBe(1); // the lane holds the event loop once
    expect(t.arrive(2, 9, [1, 2, 3])).toBe(true);
    expect(b.done && !a.done).toBe(true);
    expect([...b.buf!.subarray(0, b.count)]).toEqual([1, 2, 3]);
    expect([b.sourceEndpoint, b.tag]).toEqual([2, 9]);
    expect(t.arrive(1, 5, [4])).toBe(true);
    expect(a.done).toBe(true);
    expect(t.completion.active).toBe(0);
    expect(t.stat[STAT.RECEIVED]).toBe(2);
    expect(t.stat[STAT.BYTES_RECEIVED]).toBe(4);
    t.stop();
  });

  it('keeps unexpected frames in arrival order and gives them to later receives', () => {
    const t = setup();
    t.arrive(1, 5, [1]);
    t.arrive(1, 6, [2]);
    t.arrive(1, 5, [3]);
    expect(t.lanes.unexpectedCount()).toBe(3);
    const r = t.recv(1, 5);
    expect(r.done && r.buf![0]).toBe(1);
    const any = t.recv(1, ANY);
    expect(any.done && any.buf![0]).toBe(2);
    expect(t.recv(1, 5).buf![0]).toBe(3);
    expect(t.lanes.unexpectedCount()).toBe(0);
    t.stop();
  });

  it('truncates a message longer than the receive buffer with ERR_TRUNCATE', () => {
    const t = setup();
    const r = t.recv(1, 5, 2);
    t.arrive(1, 5, [1, 2, 3]);
    expect(r.done).toBe(true);
    expect(r.error?.message).toMatch(/3 bytes .* buffer of 2 bytes/);
    t.stop();
  });

  it('declines an eager frame whose endpoints a peer could not send (left to the device\'s check) and touches nothing', () => {
    const t = setup();
    const read = Uint8Array.of(1);
    // Source endpoint not the sending process's, or destination not this process's endpoint.
    expect(t.lanes.eagerArrived(1, CTX, 2, ME, 5, read, 0, 1)).toBe(false);
    expect(t.lanes.eagerArrived(1, CTX, 1, 2, 5, read, 0, 1)).toBe(false);
    expect(t.lanes.state(CTX)).toBe(LANE_STATE.UNDECIDED);
    expect(t.stat[STAT.RECEIVED]).toBe(0);
    t.stop();
  });

  it('demotes a context the general path touches: posted receives in posting order, then unexpected messages in arrival order', () => {
    const t = setup();
    t.arrive(2, 1, [9]);
    t.arrive(1, 2, [8]);
    const a = t.recv(1, 5);
    const b = t.recv(2, 6);
    expect(t.completion.active).toBe(1);
    t.lanes.generalTouch(CTX, ANY);
    expect(t.lanes.state(CTX)).toBe(LANE_STATE.GENERAL);
    expect(t.demoted.posted.map(([r, src, tag]) => [r === a ? 'a' : r === b ? 'b' : '?', src, tag])).toEqual([['a', 1, 5], ['b', 2, 6]]);
    expect(t.demoted.arrived).toEqual([[2, 2001, [9]], [1, 1002, [8]]]);
    // The lane's hold went with it; a GENERAL context takes no lean receive again, nor a frame.
    expect(t.completion.active).toBe(0);
    expect(t.lanes.leanRecv(CTX, 1, 5, new Uint8Array(1), 'Irecv')).toBeNull();
    expect(t.arrive(1, 5, [1])).toBe(false);
    t.stop();
  });

  it('a local source never demotes (lanes hold only other processes\' messages)', () => {
    const t = setup();
    t.recv(1, 5);
    t.lanes.generalTouch(CTX, ME);
    expect(t.lanes.state(CTX)).toBe(LANE_STATE.LEAN);
    expect(t.lanes.leanRecv(CTX, ME, 5, new Uint8Array(1), 'Irecv')).toBeNull();
    t.stop();
  });

  it('decoded frames go the same way: arrive() matches plain EAGER and demotes for anything else', () => {
    const t = setup();
    const r = t.recv(1, 5);
    const h = newFrameHeader();
    h.kind = FRAME_KIND.EAGER;
    h.contextId = CTX;
    h.srcEndpoint = 1;
    h.tag = 5;
    expect(t.lanes.arrive(1, h, new Uint8Array([7]))).toBe(true);
    expect(r.done && r.buf![0]).toBe(7);
    const s = t.recv(1, 6);
    h.kind = FRAME_KIND.RNDV_RTS;
    expect(t.lanes.arrive(1, h, new Uint8Array(0))).toBe(false);
    expect(t.demoted.posted.map(([q]) => q)).toEqual([s]);
    t.stop();
  });

  it('cancels a posted lean receive and releases the lane\'s hold', () => {
    const t = setup();
    const r = t.recv(1, 5);
    expect(t.lanes.cancel(r)).toBe(true);
    expect(r.done && r.cancelled).toBe(true);
    expect(t.completion.active).toBe(0);
    expect(t.lanes.cancel(r)).toBe(false);
    expect(t.lanes.cancel(new DevRequest(REQ_KIND.RECV))).toBe(false);
    t.stop();
  });

  it('fails waiting lean receives with the device\'s error, and sends later ones to the general path', () => {
    const t = setup();
    const r = t.recv(1, 5);
    const err = new Error('lost') as Parameters<LaneMatcher['fail']>[0];
    t.lanes.fail(err);
    expect(r.done && r.error).toBe(err);
    expect(t.completion.active).toBe(0);
    expect(t.lanes.leanRecv(CTX, 1, 5, new Uint8Array(1), 'Irecv')).toBeNull();
    t.stop();
  });
});
