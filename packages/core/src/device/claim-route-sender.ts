/**
 * One sending thread's choice of path per frame under receive-claim routes (docs/adr/0023, step
 * 2): for each remote endpoint d, the engine path (its connection to the channel's host, path 0)
 * or the route of one claim of d's process (a connection of its own to the claiming thread's
 * socket, path 1), with route-switch.ts's mark on the path it leaves and the tag every frame
 * carries (route-intake.ts), exactly as route-sender.ts does for endpoint readers.
 *
 * The rule that keeps MPI's order without a send-order number: a thread's frames to one endpoint
 * take ONE path at a time, whatever their context and tag, and every switch goes through the
 * engine path with a mark (a claim route to another claim route means FIN, then a mark). The
 * receiver's consumers (the channel's host, each claim's socket) then arrive the thread's frames
 * to d in the order sent, so the arrival numbers the match queues stamp (match-queues.ts) follow
 * the send order per sending thread, and a demotion's merge by arrival number stays right
 * (docs/adr/0023 "What is built": step 2). The price: a frame to d of another key while on a
 * claim's route leaves it (FIN), and the next frame of the key joins it again (a mark), each
 * join counted as one more user of the route (one more FIN for the claim's socket to wait for):
 * a sender that interleaves keys pays a switch per change of key, and once a route has
 * MAX_ROUTE_USERS joins from this process its frames stay on the engine path.
 *
 * Rules per frame to d for (context, tag), read from the shared words (one hashed probe of the
 * claim-route mirror, then one Atomics.load):
 * - on the engine path: d's process announced an open route for (d, context, tag) that this thread
 *   has not joined: register as a user (refused once it is closing) and switch to it, once this
 *   thread's connection to its socket carries frames (mayJoin);
 * - on a claim's route: stay while the frame has the claim's key and the route is open; else
 *   switch back (the mark on the route's connection is the FIN the claim's socket counts).
 */
import { routeTag } from './route-intake.ts';
import { SenderRoute } from './route-switch.ts';
import { ROUTE_STATE, routeEpoch, routeState, type RouteTable } from './route-table.ts';
import type { ClaimRouteTable } from './claim-route-table.ts';

export const CLAIM_PATH_ENGINE = 0;
export const CLAIM_PATH_ROUTE = 1;

/** What to do for the next frame to d (a reused object: read it before the next call). */
export interface ClaimSendStep {
  /** CLAIM_PATH_ENGINE or CLAIM_PATH_ROUTE */
  path: number;
  /** the claim entry (of d's process) whose route CLAIM_PATH_ROUTE means */
  entry: number;
  /** the frame's header seq word */
  tag: number;
  /** send a mark with `tag` on `markPath` before the frame (on `markEntry`'s route when that is CLAIM_PATH_ROUTE: the FIN) */
  mark: boolean;
  markPath: number;
  markEntry: number;
}

interface Stream {
  readonly sender: SenderRoute;
  /** the claim entry whose route the thread is on (-1: the engine path) */
  on: number;
}

export class ClaimRouteSender {
  readonly #routes: RouteTable;
  readonly #claims: ClaimRouteTable;
  readonly #thread: number;
  readonly #endpointsPerProcess: number;
  readonly #streams = new Map<number, Stream>();
  readonly #step: ClaimSendStep = { path: CLAIM_PATH_ENGINE, entry: -1, tag: 0, mark: false, markPath: CLAIM_PATH_ENGINE, markEntry: -1 };

  constructor(routes: RouteTable, claims: ClaimRouteTable, thread: number, endpointsPerProcess: number) {
    this.#routes = routes;
    this.#claims = claims;
    this.#thread = thread;
    this.#endpointsPerProcess = endpointsPerProcess;
  }

  /**
   * The step for the next frame to remote endpoint `d` on (ctx, tag). `mayJoin(d, entry, epoch)`,
   * asked only when a route of d's process for the key is open and not joined yet: whether this
   * thread's connection to that claim's socket carries frames yet (its handshake needs this
   * thread's event loop); false keeps the frame on the engine path and asks again next time.
   */
  next(d: number, ctx: number, tag: number, mayJoin: (d: number, entry: number, epoch: number) => boolean): ClaimSendStep {
    const s = this.#stream(d);
    const q = (d / this.#endpointsPerProcess) | 0;
    const claims = this.#claims;
    let want = CLAIM_PATH_ENGINE;
    let target = -1;
    if (s.on >= 0) {
      const w = claims.route(q, s.on);
      if (routeState(w) === ROUTE_STATE.OPEN && claims.find(q, d - q * this.#endpointsPerProcess, ctx, tag) === s.on) {
        want = CLAIM_PATH_ROUTE;
        target = s.on;
      }
    } else {
      const e = claims.find(q, d - q * this.#endpointsPerProcess, ctx, tag);
      if (e >= 0) {
        const w = claims.route(q, e);
        if (routeState(w) === ROUTE_STATE.OPEN && mayJoin(d, e, routeEpoch(w)) && claims.registerUser(q, e, routeEpoch(w))) {
          want = CLAIM_PATH_ROUTE;
          target = e;
        }
      }
    }
    return this.#take(d, s, want, target);
  }

  /** FIN steps for every stream on a claim's route that is no longer open (`all`: every one, the thread is about to end), with their endpoints. */
  finish(all = false): { d: number; step: ClaimSendStep }[] {
    const out: { d: number; step: ClaimSendStep }[] = [];
    for (const [d, s] of this.#streams) {
      if (s.on < 0) continue;
      const q = (d / this.#endpointsPerProcess) | 0;
      if (all || routeState(this.#claims.route(q, s.on)) !== ROUTE_STATE.OPEN) out.push({ d, step: { ...this.#take(d, s, CLAIM_PATH_ENGINE, -1) } });
    }
    return out;
  }

  /** Whether this thread is on some claim's route now. */
  get onAnyRoute(): boolean {
    for (const s of this.#streams.values()) if (s.on >= 0) return true;
    return false;
  }

  /** Whether one of this thread's streams is on the route of claim `entry` of process `q` now (has joined it and not sent its FIN). */
  onRoute(q: number, entry: number): boolean {
    for (const [d, s] of this.#streams) if (s.on === entry && ((d / this.#endpointsPerProcess) | 0) === q) return true;
    return false;
  }

  #stream(d: number): Stream {
    let s = this.#streams.get(d);
    if (s === undefined) {
      let epoch = this.#routes.senderEpoch(this.#thread, d);
      // A previous thread with this id that died on a route (odd epoch) never sent its FIN: go on at
      // the next epoch on the engine path (the socket takes the end of its connection for the FIN).
      if ((epoch & 1) === CLAIM_PATH_ROUTE) {
        epoch++;
        this.#routes.setSenderEpoch(this.#thread, d, epoch);
      }
      s = { sender: new SenderRoute(CLAIM_PATH_ENGINE, epoch), on: -1 };
      this.#streams.set(d, s);
    }
    return s;
  }

  #take(d: number, s: Stream, want: number, target: number): ClaimSendStep {
    const left = s.on;
    const r = s.sender.next(want);
    const out = this.#step;
    out.path = r.path;
    out.entry = target;
    out.tag = routeTag(this.#thread, r.epoch);
    out.mark = r.mark;
    out.markPath = r.markPath;
    out.markEntry = left;
    s.on = target;
    if (r.mark) this.#routes.setSenderEpoch(this.#thread, d, r.epoch);
    return out;
  }
}
