// claim-route-sender.ts against a claim-route table (claim-route-table.ts) and a route table: a
// sender joins the open route of (d, context, tag) with a mark on the engine path, keeps every
// other frame to d on the engine path (one path per (thread, endpoint) at a time: a frame of
// another key leaves the route with a FIN, the next of the key joins again), leaves a closing
// route at its next frame or through finish(), is refused once the route is closing, and the
// mirror finds the claim by the same hash as the claiming process's table.
import { describe, expect, it } from 'vitest';
import { CLAIM_PATH_ENGINE, CLAIM_PATH_ROUTE, ClaimRouteSender, type ClaimSendStep } from './claim-route-sender.ts';
import { ClaimRouteTable } from './claim-route-table.ts';
import { ClaimTable } from './claim-table.ts';
import { tagEpoch, tagThread } from './route-intake.ts';
import { MAX_ROUTE_USERS, ROUTE_STATE, RouteTable, routeUsers } from './route-table.ts';

const J = 2;
const LAYOUT = { processCount: 2, endpointsPerProcess: J, threads: 64 };
const Q = 1; // the remote process
const D = Q * J + 1; // an endpoint of it (local endpoint 1 there)
const CTX = 4;

function tables(): { routes: RouteTable; claims: ClaimRouteTable } {
  return {
    routes: new RouteTable(new SharedArrayBuffer(RouteTable.bytesFor(LAYOUT)), LAYOUT),
    claims: new ClaimRouteTable(new SharedArrayBuffer(ClaimRouteTable.bytesFor(2, 64)), 2, 64),
  };
}

/** Process Q's claim of (local endpoint 1, CTX, tag) in its own claim table: the entry it announces. */
function remoteEntry(tag: number): number {
  const own = new ClaimTable(new SharedArrayBuffer(ClaimTable.bytesFor(64)), 64);
  return own.claim(1, CTX, tag, 3).entry;
}

function copy(s: ClaimSendStep): ClaimSendStep {
  return { ...s };
}

const always = (): boolean => true;

describe('ClaimRouteTable', () => {
  it('finds an announced claim by the claiming process\'s hash, and nothing it did not announce', () => {
    const { claims } = tables();
    const e = remoteEntry(7);
    expect(claims.find(Q, 1, CTX, 7)).toBe(-1);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    expect(claims.find(Q, 1, CTX, 7)).toBe(e);
    expect(claims.find(Q, 0, CTX, 7)).toBe(-1);
    expect(claims.find(Q, 1, CTX, 8)).toBe(-1);
    expect(claims.find(0, 1, CTX, 7)).toBe(-1);
  });

  it('keeps a route moving forward and counts its users until it closes', () => {
    const { claims } = tables();
    claims.setRoute(Q, 5, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    expect(claims.registerUser(Q, 5, 1)).toBe(true);
    expect(claims.registerUser(Q, 5, 1)).toBe(true);
    // An OPEN that arrives after the CLOSE (another thread recorded it) is ignored.
    const closing = claims.setRoute(Q, 5, 1, CTX, 7, 1, ROUTE_STATE.CLOSING);
    expect(routeUsers(closing)).toBe(2);
    expect(claims.setRoute(Q, 5, 1, CTX, 7, 1, ROUTE_STATE.OPEN)).toBe(-1);
    expect(claims.registerUser(Q, 5, 1)).toBe(false);
  });

  it('records the answers to a close per process and wakes the closing thread', async () => {
    const { claims } = tables();
    expect(claims.closedUsers(9, 0)).toBe(-1);
    const seen = claims.closedChanges(9);
    const woke = claims.closedAfter(9, seen);
    claims.recordClosed(9, 0, 3);
    await woke;
    expect(claims.closedUsers(9, 0)).toBe(3);
    expect(claims.closedUsers(9, 1)).toBe(-1);
    claims.addOpen(3, 1);
    claims.addOpen(3, 1);
    claims.addOpen(7, 1);
    claims.addOpen(3, -1);
    expect(claims.openCount()).toBe(2);
    // A thread that ended with a route open: counted once, then forgotten.
    expect(claims.takeOpenOf(7)).toBe(1);
    expect(claims.takeOpenOf(7)).toBe(0);
    expect(claims.openCount()).toBe(1);
  });
});

describe('ClaimRouteSender', () => {
  it('joins the open route of its key with a mark on the engine path, and leaves it with a FIN once it closes', () => {
    const { routes, claims } = tables();
    const s = new ClaimRouteSender(routes, claims, 5, J);
    expect(copy(s.next(D, CTX, 7, always))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
    const e = remoteEntry(7);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    const join = copy(s.next(D, CTX, 7, always));
    expect(join).toMatchObject({ path: CLAIM_PATH_ROUTE, entry: e, mark: true, markPath: CLAIM_PATH_ENGINE });
    expect(tagThread(join.tag)).toBe(5);
    expect(tagEpoch(join.tag)).toBe(1);
    expect(routes.senderEpoch(5, D)).toBe(1);
    expect(copy(s.next(D, CTX, 7, always))).toMatchObject({ path: CLAIM_PATH_ROUTE, entry: e, mark: false });
    expect(routeUsers(claims.route(Q, e))).toBe(1);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.CLOSING);
    const leave = copy(s.next(D, CTX, 7, always));
    expect(leave).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: true, markPath: CLAIM_PATH_ROUTE, markEntry: e });
    expect(tagEpoch(leave.tag)).toBe(2);
  });

  it('sends every other frame to d by the engine path: a frame of another key leaves the route with a FIN, the next of the key joins it again', () => {
    const { routes, claims } = tables();
    const s = new ClaimRouteSender(routes, claims, 5, J);
    const e = remoteEntry(7);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    expect(copy(s.next(D, CTX, 7, always))).toMatchObject({ path: CLAIM_PATH_ROUTE, mark: true });
    // Another tag, then another context: the engine, the first with the FIN.
    expect(copy(s.next(D, CTX, 8, always))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: true, markPath: CLAIM_PATH_ROUTE, markEntry: e });
    expect(copy(s.next(D, CTX + 1, 7, always))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
    expect(s.onRoute(Q, e)).toBe(false);
    const again = copy(s.next(D, CTX, 7, always));
    expect(again).toMatchObject({ path: CLAIM_PATH_ROUTE, entry: e, mark: true, markPath: CLAIM_PATH_ENGINE });
    expect(tagEpoch(again.tag)).toBe(3);
    expect(s.onRoute(Q, e)).toBe(true);
    // Each join is one more user: one more FIN for the claim's socket to wait for.
    expect(routeUsers(claims.route(Q, e))).toBe(2);
    // A frame to another endpoint is another stream: untouched by this one.
    expect(copy(s.next(D - 1, CTX, 7, always))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
  });

  it('stays on the engine path once a route has had MAX_ROUTE_USERS joins from this process', () => {
    const { routes, claims } = tables();
    const s = new ClaimRouteSender(routes, claims, 5, J);
    const e = remoteEntry(7);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    for (let i = 0; i < MAX_ROUTE_USERS; i++) {
      expect(s.next(D, CTX, 7, always).path).toBe(CLAIM_PATH_ROUTE);
      expect(s.next(D, CTX, 8, always).path).toBe(CLAIM_PATH_ENGINE);
    }
    expect(copy(s.next(D, CTX, 7, always))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
    expect(routeUsers(claims.route(Q, e))).toBe(MAX_ROUTE_USERS);
  });

  it('stays on the engine path, not registered, until mayJoin says its connection carries frames', () => {
    const { routes, claims } = tables();
    const s = new ClaimRouteSender(routes, claims, 5, J);
    const e = remoteEntry(7);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    let ready = false;
    const asked: number[][] = [];
    const mayJoin = (d: number, entry: number, epoch: number): boolean => {
      asked.push([d, entry, epoch]);
      return ready;
    };
    expect(copy(s.next(D, CTX, 7, mayJoin))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
    expect(routeUsers(claims.route(Q, e))).toBe(0);
    ready = true;
    expect(copy(s.next(D, CTX, 7, mayJoin))).toMatchObject({ path: CLAIM_PATH_ROUTE, mark: true });
    expect(asked).toEqual([[D, e, 1], [D, e, 1]]);
  });

  it('gives FIN steps through finish() for an idle thread whose route closed, and for every route when it ends', () => {
    const { routes, claims } = tables();
    const s = new ClaimRouteSender(routes, claims, 5, J);
    const e = remoteEntry(7);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    s.next(D, CTX, 7, always);
    expect(s.finish()).toEqual([]);
    expect(s.onAnyRoute).toBe(true);
    const all = s.finish(true);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ d: D, step: { path: CLAIM_PATH_ENGINE, mark: true, markPath: CLAIM_PATH_ROUTE, markEntry: e } });
    expect(s.onAnyRoute).toBe(false);
    expect(s.finish(true)).toEqual([]);
  });

  it('is refused once the route is closing, and a recycled thread id goes on from its predecessor\'s epoch', () => {
    const { routes, claims } = tables();
    const e = remoteEntry(7);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.OPEN);
    claims.setRoute(Q, e, 1, CTX, 7, 1, ROUTE_STATE.CLOSING);
    const late = new ClaimRouteSender(routes, claims, 6, J);
    expect(copy(late.next(D, CTX, 7, always))).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
    // Thread 5 died on a route (odd epoch): its successor starts on the engine path at the next one.
    routes.setSenderEpoch(5, D, 3);
    const next = new ClaimRouteSender(routes, claims, 5, J);
    const step = copy(next.next(D, CTX, 9, always));
    expect(step).toMatchObject({ path: CLAIM_PATH_ENGINE, mark: false });
    expect(tagEpoch(step.tag)).toBe(4);
  });
});
