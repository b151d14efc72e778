/**
 * A Request made in one thread, waited on in another (issue 3: requests are
 * usable in every thread of the process): the Request side of the relay cell
 * (runtime/relay-cell.ts, which says what crosses and how).
 *
 * The origin fills the cell when its request completes (source already a rank
 * of the request's communicator, the value dehydrated, so an idup's Comm
 * arrives live). Every thread that revives the cell gets a RelayedRequest, a
 * Request completed by a waitAsync on the cell, so wait, test, status and the
 * waitall family work on it as on any request. cancel() in another thread asks
 * the origin to cancel; free() releases only the caller's view (the operation
 * completes anyway, MPI_Request_free); start() belongs to the thread that owns
 * the persistent request.
 */
import { DevRequest, REQ_KIND } from '../device/index.ts';
import { ERR_ARG, MPIError, mpiError, SUCCESS } from '../util/index.ts';
import { Request } from './request.ts';
import { RelayCell, runtime } from '../runtime/index.ts';

function noop(): void {}

/** What crosses the thread boundary: the cell and the name of the call that made the request. */
export interface RelayMark {
  readonly cell: SharedArrayBuffer;
  readonly call: string;
}

/**
 * The cell for `req` (origin side): filled when the request completes, or now if it has.
 * @param dehydrateValue makes the request's value transferable (Comm -> handle...)
 */
export function relayOut(req: Request<unknown>, dehydrateValue: (v: unknown) => unknown): RelayMark {
  if (req instanceof RelayedRequest) return { cell: req._cell, call: req._call };
  if (req._r === null) throw mpiError(ERR_ARG, 'dehydrate', `${req._call}: a persistent request that was never started has nothing to wait for in another thread`);
  const cell = RelayCell.create();
  const fill = (): void => fillCell(cell, req, dehydrateValue);
  if (req._isDone) {
    fill();
  } else {
    req._listen(fill);
    cell.watchCancel(() => {
      if (!req._isDone) req.cancel();
    });
  }
  return { cell: cell.buffer, call: req._call };
}

function fillCell(cell: RelayCell, req: Request<unknown>, dehydrateValue: (v: unknown) => unknown): void {
  const r = req._r!;
  const st = req.status!;
  cell.fill({ source: st.source, tag: st.tag, count: st._count, error: st.error, cancelled: st.cancelled }, () => {
    const value = r.error === null && req._valueOf !== null ? req._valueOf(r) : undefined;
    return r.error !== null ? { message: r.error.message } : { value: dehydrateValue(value) };
  });
}

/**
 * A request of another thread, seen from this one (built by revive).
 * @internal
 */
export class RelayedRequest<T = unknown> extends Request<T> {
  readonly _cell: SharedArrayBuffer;
  readonly #relay: RelayCell;
  readonly #reviveValue: (v: unknown) => unknown;
  /** holds this thread's event loop while the cell is pending (a waitAsync alone does not) */
  #keepAlive: NodeJS.Timeout | null = null;

  constructor(mark: RelayMark, reviveValue: (v: unknown) => unknown) {
    super(new DevRequest(REQ_KIND.GENERALIZED), null, mark.call);
    this._cell = mark.cell;
    this.#relay = new RelayCell(mark.cell);
    this.#reviveValue = reviveValue;
    this._valueOf = (d) => d.value as T;
    const done = this.#relay.whenDone();
    if (done !== null) {
      this.#keepAlive = setInterval(noop, 1 << 30);
      void done.then(() => this.#land(true));
    } else {
      this.#land(false);
    }
  }

  /**
   * Copies the cell's outcome into the DevRequest once; `notify` runs the waiters.
   * Only the waitAsync and test() land a pending request: never a status check
   * such as _isDone, which waitall reads between counting and listening.
   */
  #land(notify: boolean): void {
    const r = this._r!;
    if (r.done || !this.#relay.isDone) return;
    if (this.#keepAlive !== null) clearInterval(this.#keepAlive);
    const st = this.#relay.status();
    r.sourceEndpoint = st.source;
    r.tag = st.tag;
    r.count = st.count;
    r.cancelled = st.cancelled;
    const outcome = this.#relay.content();
    const errorClass = st.error;
    if (errorClass !== SUCCESS) {
      r.error = new MPIError(errorClass, this._call, 'failed in the thread that started it');
      // the origin's own text (it names the call and the cause)
      if (outcome.message !== undefined) r.error.message = outcome.message;
    } else {
      r.value = this.#reviveValue(outcome.value);
    }
    if (notify) runtime().device.completeNow(r);
    else r.done = true;
  }

  /** test(): the cell may be done before its waitAsync has resolved. */
  override _poll(): void {
    this.#land(true);
  }

  override cancel(): void {
    this.#relay.requestCancel();
  }

  override start(): void {
    throw mpiError(ERR_ARG, `${this._call}.start`, 'this request was made in another thread: start a persistent request in the thread that made it');
  }
}
