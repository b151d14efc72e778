// route-sender.ts against a route table: a sender joins an open route with a mark on the engine
// path, leaves it with a FIN when the reader closes (at its next frame, or through finish() when
// idle), is refused once the route is closing, joins the next reader, and a thread with a recycled
// id goes on from the epochs its predecessor reached.
import { describe, expect, it } from 'vitest';
import { PATH_ENGINE, PATH_READER, RouteSender, type SendStep } from './route-sender.ts';
import { RouteIntakes, tagEpoch, tagThread } from './route-intake.ts';
import { newFrameHeader } from '../transport/index.ts';
import { ROUTE_STATE, RouteTable, routeUsers } from './route-table.ts';

const LAYOUT = { processCount: 2, endpointsPerProcess: 2, threads: 64 };
const D = 3; // a remote endpoint

function table(): RouteTable {
  return new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT);
}

function copy(s: SendStep): SendStep {
  return { ...s };
}

describe('RouteSender', () => {
  it('stays on the engine path, untouched, while d has no reader', () => {
    const s = new RouteSender(table(), 5);
    for (let i = 0; i < 3; i++) {
      const step = copy(s.next(D));
      expect(step).toMatchObject({ path: PATH_ENGINE, mark: false });
      expect(tagThread(step.tag)).toBe(5);
      expect(tagEpoch(step.tag)).toBe(0);
    }
    expect(s.finish(true)).toEqual([]);
  });

  it('joins an open route with a mark on the engine path and leaves a closing one with a FIN on the reader\'s', () => {
    const t = table();
    const s = new RouteSender(t, 5);
    s.next(D);
    t.setRoute(D, 1, ROUTE_STATE.OPEN);
    const join = copy(s.next(D));
    expect(join).toMatchObject({ path: PATH_READER, readerEpoch: 1, mark: true, markPath: PATH_ENGINE });
    expect(tagEpoch(join.tag)).toBe(1);
    expect(copy(s.next(D))).toMatchObject({ path: PATH_READER, mark: false });
    expect(routeUsers(t.route(D))).toBe(1);
    expect(routeUsers(t.setRoute(D, 1, ROUTE_STATE.CLOSING))).toBe(1);
    const leave = copy(s.next(D));
    expect(leave).toMatchObject({ path: PATH_ENGINE, mark: true, markPath: PATH_READER, markReaderEpoch: 1 });
    expect(tagEpoch(leave.tag)).toBe(2);
    // The next reader of d: joined again, at the next epoch of the switch.
    t.setRoute(D, 2, ROUTE_STATE.OPEN);
    const again = copy(s.next(D));
    expect(again).toMatchObject({ path: PATH_READER, readerEpoch: 2, mark: true, markPath: PATH_ENGINE });
    expect(tagEpoch(again.tag)).toBe(3);
  });

  it('stays on the engine path, not registered, while mayJoin says its connection to the reader does not carry frames yet', () => {
    const t = table();
    const s = new RouteSender(t, 5);
    t.setRoute(D, 1, ROUTE_STATE.OPEN);
    const asked: number[][] = [];
    let ready = false;
    const mayJoin = (d: number, epoch: number): boolean => {
      asked.push([d, epoch]);
      return ready;
    };
    for (let i = 0; i < 3; i++) expect(copy(s.next(D, mayJoin))).toMatchObject({ path: PATH_ENGINE, mark: false });
    expect(asked).toEqual([[D, 1], [D, 1], [D, 1]]);
    // Not a user: a close now counts no FIN from this thread.
    expect(routeUsers(t.route(D))).toBe(0);
    ready = true;
    expect(copy(s.next(D, mayJoin))).toMatchObject({ path: PATH_READER, readerEpoch: 1, mark: true, markPath: PATH_ENGINE });
    expect(routeUsers(t.route(D))).toBe(1);
    // On the reader's path it is not asked again.
    expect(copy(s.next(D, () => false))).toMatchObject({ path: PATH_READER, mark: false });
  });

  it('is refused a route that is already closing, and stays on the engine path', () => {
    const t = table();
    t.setRoute(D, 1, ROUTE_STATE.OPEN);
    t.setRoute(D, 1, ROUTE_STATE.CLOSING);
    const s = new RouteSender(t, 2);
    expect(copy(s.next(D))).toMatchObject({ path: PATH_ENGINE, mark: false });
    expect(routeUsers(t.route(D))).toBe(0);
  });

  it('gives an idle sender its FIN through finish(), and every open one with finish(true)', () => {
    const t = table();
    const s = new RouteSender(t, 7);
    t.setRoute(D, 1, ROUTE_STATE.OPEN);
    t.setRoute(2, 4, ROUTE_STATE.OPEN);
    s.next(D);
    s.next(2);
    expect(s.finish()).toEqual([]);
    t.setRoute(D, 1, ROUTE_STATE.CLOSING);
    const fins = s.finish();
    expect(fins.map((f) => f.d)).toEqual([D]);
    expect(fins[0]!.step).toMatchObject({ path: PATH_ENGINE, mark: true, markPath: PATH_READER, markReaderEpoch: 1 });
    expect(s.finish()).toEqual([]); // already left
    const rest = s.finish(true);
    expect(rest.map((f) => f.d)).toEqual([2]);
    expect(rest[0]!.step).toMatchObject({ markReaderEpoch: 4, markPath: PATH_READER });
  });

  it('lets the next thread with a recycled id go on from the epochs its predecessor reached', () => {
    const t = table();
    const first = new RouteSender(t, 9);
    t.setRoute(D, 1, ROUTE_STATE.OPEN);
    first.next(D);
    first.finish(true); // it ends: epoch 2, engine path
    // The route is still open: the new thread joins it, at the epoch after its predecessor's FIN
    // (the receivers' mark word for id 9 is at 2: an epoch-1 mark would be taken as consumed).
    const second = new RouteSender(t, 9);
    const step = copy(second.next(D));
    expect(step).toMatchObject({ path: PATH_READER, mark: true, markPath: PATH_ENGINE });
    expect(tagEpoch(step.tag)).toBe(3);
    // One that died on a reader's path (odd epoch) is followed on the engine path at the next epoch.
    t.setRoute(D, 1, ROUTE_STATE.CLOSING);
    const third = new RouteSender(t, 11);
    t.setSenderEpoch(11, D, 3);
    expect(copy(third.next(D))).toMatchObject({ path: PATH_ENGINE, mark: false });
    expect(tagEpoch(third.next(D).tag)).toBe(4);
    expect(t.senderEpoch(11, D)).toBe(4);
  });

  it('feeds two consumers in order while d\'s reader opens and closes 50 times (sender and receiver tables apart)', async () => {
    // Process 1 sends from thread 6 to endpoint 1 of process 0 (J = 2): its table has the route
    // words, process 0's the mark words, as in a job.
    const senderSide = table();
    const receiverSide = table();
    const d = 1;
    const s = new RouteSender(senderSide, 6);
    const matched: number[] = [];
    const deliver = (_p: number, h: { tag: number }): void => void matched.push(h.tag);
    const consumers = [new RouteIntakes(receiverSide, 0, deliver), new RouteIntakes(receiverSide, 0, deliver)];
    const paths: { seq: number; n: number; isMark: boolean }[][] = [[], []];
    const header = newFrameHeader();
    const read = (p: number): void => {
      const f = paths[p]!.shift();
      if (f === undefined) return;
      header.dstEndpoint = d;
      header.seq = f.seq;
      header.tag = f.n;
      consumers[p]!.offer(1, header, new Uint8Array(0), f.isMark);
    };
    const push = (step: SendStep, n: number): void => {
      if (step.mark) paths[step.markPath]!.push({ seq: step.tag, n: -1, isMark: true });
      if (n >= 0) paths[step.path]!.push({ seq: step.tag, n, isMark: false });
    };
    let n = 0;
    let readerEpoch = 0;
    let x = 12345;
    const random = (): number => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (let round = 0; round < 50; round++) {
      senderSide.setRoute(d, ++readerEpoch, ROUTE_STATE.OPEN);
      for (let i = 0; i < 40; i++) {
        push(s.next(d), n++);
        if (random() < 0.5) read(random() < 0.5 ? 0 : 1);
      }
      senderSide.setRoute(d, readerEpoch, ROUTE_STATE.CLOSING);
      // Idle at the close half the time: the FIN comes from finish(), else from the next frame.
      if (random() < 0.5) for (const f of s.finish()) push(f.step, -1);
      for (let i = 0; i < 10; i++) {
        push(s.next(d), n++);
        if (random() < 0.5) read(random() < 0.5 ? 0 : 1);
      }
      if (random() < 0.2) await new Promise((res) => setTimeout(res, 0));
    }
    while (paths[0]!.length > 0 || paths[1]!.length > 0) {
      read(random() < 0.5 ? 0 : 1);
      if (random() < 0.05) await new Promise((res) => setTimeout(res, 0));
    }
    for (let i = 0; i < 5; i++) await new Promise((res) => setTimeout(res, 0));
    expect(consumers[0]!.heldCount + consumers[1]!.heldCount).toBe(0);
    expect(matched).toEqual(Array.from({ length: n }, (_, i) => i));
  });
});
