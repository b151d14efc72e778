/**
 * One sending thread's choice of path per frame under ADR 0019 (used by reader-routes.ts): for each remote endpoint d, the engine path (its thread connection to the channel's
 * host, path 0) or d's reader (a connection of its own to the reader's socket, path 1), with the
 * mark that a switch sends on the path it leaves and the tag every frame carries (route-intake.ts).
 *
 * Rules, read from the route table (route-table.ts) at each frame, one Atomics.load:
 * - engine path, d's route open in an epoch this thread has not used: register as a user
 *   (refused once the route is closing) and switch to the reader of that epoch;
 * - reader path, d's route no longer open in the epoch this thread registered for: switch back
 *   (the mark on the reader's connection is the FIN the reader counts).
 * A switch always goes through the engine path (reader k to reader k + 1 means FIN, then a new
 * mark), so path = epoch parity and the epochs kept in the table (senderEpoch: thread ids are
 * recycled) are enough to go on from where the last thread with this id stopped.
 *
 * A thread that stops sending to d still has to leave a closing route: finish() gives the FIN
 * steps of every route whose reader has closed (the device runs it when the route-change counter
 * moves, and before the thread's id is released).
 */
import { routeTag } from './route-intake.ts';
import { SenderRoute } from './route-switch.ts';
import { ROUTE_STATE, routeEpoch, routeState, type RouteTable } from './route-table.ts';

export const PATH_ENGINE = 0;
export const PATH_READER = 1;

/** What to do for the next frame to d (a reused object: read it before the next call). */
export interface SendStep {
  /** PATH_ENGINE or PATH_READER */
  path: number;
  /** the reader epoch whose socket path PATH_READER means (readerSocketName) */
  readerEpoch: number;
  /** the frame's header seq word */
  tag: number;
  /** send a mark with `tag` on `markPath` (and `markReaderEpoch`'s socket) before the frame */
  mark: boolean;
  markPath: number;
  markReaderEpoch: number;
}

interface Route {
  sender: SenderRoute;
  /** the reader epoch this thread registered for last (0: none) */
  registered: number;
}

export class RouteSender {
  readonly #table: RouteTable;
  readonly #thread: number;
  readonly #routes = new Map<number, Route>();
  readonly #step: SendStep = { path: PATH_ENGINE, readerEpoch: 0, tag: 0, mark: false, markPath: PATH_ENGINE, markReaderEpoch: 0 };

  constructor(table: RouteTable, thread: number) {
    this.#table = table;
    this.#thread = thread;
  }

  /**
   * The step for the next frame to remote endpoint `d`. `mayJoin(d, epoch)`, asked only when d's
   * route is open in an epoch this thread may join: whether this thread's connection to that
   * reader carries frames yet (docs/adr/0019 Left item 1: its handshake runs on this thread's
   * event loop, so a thread that joined before it completes and then computes would hold its
   * frames); false keeps the frame on the engine path, and the question comes again at the next
   * frame. Absent: join at once.
   */
  next(d: number, mayJoin?: (d: number, epoch: number) => boolean): SendStep {
    const r = this.#route(d);
    const w = this.#table.route(d);
    const onReader = (r.sender.epoch & 1) === PATH_READER;
    let want = onReader ? PATH_READER : PATH_ENGINE;
    if (onReader) {
      if (routeState(w) !== ROUTE_STATE.OPEN || routeEpoch(w) !== r.registered) want = PATH_ENGINE;
    } else if (routeState(w) === ROUTE_STATE.OPEN && routeEpoch(w) > r.registered && (mayJoin === undefined || mayJoin(d, routeEpoch(w))) && this.#table.registerUser(d, routeEpoch(w))) {
      r.registered = routeEpoch(w);
      want = PATH_READER;
    }
    return this.#take(d, r, want);
  }

  /** FIN steps for every route this thread is on whose reader has closed, with their endpoints. */
  finish(all = false): { d: number; step: SendStep }[] {
    const out: { d: number; step: SendStep }[] = [];
    for (const [d, r] of this.#routes) {
      if ((r.sender.epoch & 1) !== PATH_READER) continue;
      const w = this.#table.route(d);
      if (all || routeState(w) !== ROUTE_STATE.OPEN || routeEpoch(w) !== r.registered) out.push({ d, step: { ...this.#take(d, r, PATH_ENGINE) } });
    }
    return out;
  }

  #route(d: number): Route {
    let r = this.#routes.get(d);
    if (r === undefined) {
      let epoch = this.#table.senderEpoch(this.#thread, d);
      // A previous thread with this id that left its routes (finish(true) before its id went back)
      // ended on the engine path (even epoch). One that died on a reader's path (odd) never sent
      // its FIN: go on at the next epoch on the engine path, and the reader must take the end of
      // that thread's connection for the FIN (not built: the reader's side, ADR 0019 gap 4).
      if ((epoch & 1) === PATH_READER) {
        epoch++;
        this.#table.setSenderEpoch(this.#thread, d, epoch);
      }
      r = { sender: new SenderRoute(PATH_ENGINE, epoch), registered: 0 };
      this.#routes.set(d, r);
    }
    return r;
  }

  #take(d: number, r: Route, want: number): SendStep {
    const s = r.sender.next(want);
    const out = this.#step;
    out.path = s.path;
    out.readerEpoch = r.registered;
    out.tag = routeTag(this.#thread, s.epoch);
    out.mark = s.mark;
    out.markPath = s.markPath;
    out.markReaderEpoch = r.registered;
    if (s.mark) this.#table.setSenderEpoch(this.#thread, d, s.epoch);
    return out;
  }
}
