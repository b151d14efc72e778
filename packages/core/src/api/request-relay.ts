/**
 * A Request made in one thread, waited on in another (issue 3: requests are
 * usable in every thread of the process).
 *
 * The operation stays where it was started: its receive buffer and its
 * completion callback belong to that thread's event loop. What crosses is a
 * relay cell, a small growable SharedArrayBuffer:
 *
 *   words  STATE (PENDING | DONE), CANCEL (OPEN | REQUESTED | CLOSED),
 *          SOURCE, TAG, COUNT, ERROR, CANCELLED, VALUE_BYTES
 *   bytes  from VALUE_AT: msgpack of { value } or { message }
 *
 * The origin fills the cell when its request completes (source already a rank
 * of the request's communicator, the value dehydrated, so an idup's Comm
 * arrives live) and notifies STATE. Every thread that revives the cell gets
 * a RelayedRequest, a Request completed by a waitAsync on STATE, so wait,
 * test, status and the waitall family work on it as on any request. cancel()
 * in another thread sets CANCEL and the origin cancels; free() releases only
 * the caller's view (the operation completes anyway, MPI_Request_free);
 * start() belongs to the thread that owns the persistent request.
 */
import { DevRequest, REQ_KIND, packr } from '../device/index.ts';
import { ERR_ARG, ERR_OTHER, MPIError, mpiError, SUCCESS, waitAsync } from '../util/index.ts';
import { Request } from './request.ts';
import { runtime } from '../runtime/index.ts';

const W = { STATE: 0, CANCEL: 1, SOURCE: 2, TAG: 3, COUNT: 4, ERROR: 5, CANCELLED: 6, VALUE_BYTES: 7 } as const;
const WORDS = 8;
const VALUE_AT = WORDS * 4;
const PENDING = 0;
const DONE = 1;
const OPEN = 0;
const REQUESTED = 1;
const CLOSED = 2;
function noop(): void {}

/** Address space reserved per cell for the value; only the bytes a value needs are committed. */
const MAX_CELL_BYTES = 2 ** 30;

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
  // A growable SharedArrayBuffer (ES2024, in Node 20): the value's size is known only at completion.
  const cell = new (SharedArrayBuffer as unknown as new (bytes: number, options: { maxByteLength: number }) => SharedArrayBuffer)(VALUE_AT, { maxByteLength: MAX_CELL_BYTES });
  const words = new Int32Array(cell, 0, WORDS);
  const fill = (): void => fillCell(cell, words, req, dehydrateValue);
  if (req._isDone) {
    fill();
  } else {
    req._listen(fill);
    void waitAsync(words, W.CANCEL, OPEN)?.then(() => {
      if (Atomics.load(words, W.CANCEL) === REQUESTED && !req._isDone) req.cancel();
    });
  }
  return { cell, call: req._call };
}

function fillCell(cell: SharedArrayBuffer, words: Int32Array, req: Request<unknown>, dehydrateValue: (v: unknown) => unknown): void {
  const r = req._r!;
  const st = req.status!;
  words[W.SOURCE] = st.source;
  words[W.TAG] = st.tag;
  words[W.COUNT] = st._count;
  words[W.ERROR] = st.error;
  words[W.CANCELLED] = st.cancelled ? 1 : 0;
  let payload: Uint8Array;
  try {
    const value = r.error === null && req._valueOf !== null ? req._valueOf(r) : undefined;
    payload = packr.pack(r.error !== null ? { message: r.error.message } : { value: dehydrateValue(value) });
  } catch (e) {
    words[W.ERROR] = ERR_OTHER;
    payload = packr.pack({ message: `the value could not be relayed to another thread: ${String(e)}` });
  }
  (cell as unknown as { grow(bytes: number): void }).grow(VALUE_AT + payload.length);
  new Uint8Array(cell, VALUE_AT, payload.length).set(payload);
  words[W.VALUE_BYTES] = payload.length;
  Atomics.store(words, W.STATE, DONE);
  Atomics.notify(words, W.STATE);
  // Ends the origin's cancel watch: a later cancel() elsewhere finds CLOSED and does nothing.
  Atomics.store(words, W.CANCEL, CLOSED);
  Atomics.notify(words, W.CANCEL);
}

/**
 * A request of another thread, seen from this one (built by revive).
 * @internal
 */
export class RelayedRequest<T = unknown> extends Request<T> {
  readonly _cell: SharedArrayBuffer;
  readonly #words: Int32Array;
  readonly #reviveValue: (v: unknown) => unknown;
  /** holds this thread's event loop while the cell is pending (a waitAsync alone does not) */
  #keepAlive: NodeJS.Timeout | null = null;

  constructor(mark: RelayMark, reviveValue: (v: unknown) => unknown) {
    super(new DevRequest(REQ_KIND.GENERALIZED), null, mark.call);
    this._cell = mark.cell;
    this.#words = new Int32Array(mark.cell, 0, WORDS);
    this.#reviveValue = reviveValue;
    this._valueOf = (d) => d.value as T;
    const done = waitAsync(this.#words, W.STATE, PENDING);
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
    if (r.done || Atomics.load(this.#words, W.STATE) !== DONE) return;
    if (this.#keepAlive !== null) clearInterval(this.#keepAlive);
    const w = this.#words;
    r.sourceEndpoint = w[W.SOURCE]!;
    r.tag = w[W.TAG]!;
    r.count = w[W.COUNT]!;
    r.cancelled = w[W.CANCELLED] === 1;
    const outcome = packr.unpack(new Uint8Array(this._cell, VALUE_AT, w[W.VALUE_BYTES]!).slice()) as { value?: unknown; message?: string };
    const errorClass = w[W.ERROR]!;
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
    if (Atomics.compareExchange(this.#words, W.CANCEL, OPEN, REQUESTED) === OPEN) Atomics.notify(this.#words, W.CANCEL);
  }

  override start(): void {
    throw mpiError(ERR_ARG, `${this._call}.start`, 'this request was made in another thread: start a persistent request in the thread that made it');
  }
}
