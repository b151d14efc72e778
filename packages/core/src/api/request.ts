/**
 * Request: the handle of a nonblocking operation (API.md "Request and Status").
 *
 * A request is active from its start until its completion has been reported
 * (wait resolved, test returned true, or it was part of a completed
 * waitall/waitany/...), or until it is freed; an inactive request behaves like
 * MPI_REQUEST_NULL in waitany/testany/waitsome and as complete in
 * waitall/testall. wait() on a completed request resolves the same value again.
 */
import { DevRequest, REQ_KIND, type Device } from '../device/index.ts';
import { callSite, ERR_ARG, ERR_IN_STATUS, ERR_OTHER, MPIError, mpiError, rejectAtCallSite, SUCCESS } from '../util/index.ts';
import { UNDEFINED } from './constants.ts';
import { Status } from './status.ts';
import { runtime, runtimeOrNull } from '../runtime/index.ts';
import { promisePlan, type CollPlan } from '../coll/index.ts';
import { PlanRun } from './plan-run.ts';
import { typeHandleOf } from './buffer.ts';

type Waiter = (req: Request<unknown>) => void;

/** What a request needs from its communicator: the rank of a source endpoint, a name for the roll-call, its record. */
export interface RequestComm {
  readonly name: string;
  /** its object-table record, which the request references (device/lifetime.ts) */
  readonly _handle: number;
  /** its context id: a wait that blocks adds its time to the communicator's comm.stats().blockedMs */
  readonly _ctx: number;
  _rankOfEndpoint(endpoint: number): number;
}

/**
 * The one completed DevRequest that every lean send's Request shares (Device.sendBytes's lean
 * route, docs/adr/0020-lean-common-path.md step 3): an eager send that completed at once has nothing of
 * its own to keep (its status is a completed send's: no source, tag or count, no error), and
 * nothing writes to a done DevRequest again, so one object serves them all and a lean Isend
 * makes no DevRequest.
 */
const LEAN_SENT = new DevRequest(REQ_KIND.SEND, 'Isend');
LEAN_SENT.done = true;

function onDevComplete(r: DevRequest): void {
  (r.owner as Request<unknown>)._onDone();
}

export class Request<T = void> {
  // Every field is declared here and set in the constructor, not by class-field initializers: V8 runs
  // those as a function of their own per object made, a call on the path of every message
  // (docs/adr/0020-lean-common-path.md); hence _ fields where # would otherwise do.
  /** the current operation (a persistent point-to-point request gets a new one per start; a persistent collective reuses one, PlannedRequest) */
  declare _r: DevRequest | null;
  declare _comm: RequestComm | null;
  /** completion reported to the user: the request is inactive */
  declare _reported: boolean;
  declare _freed: boolean;
  /** persistent: starts one operation */
  declare _starter: ((r: DevRequest) => void) | null;
  /** turns the completed DevRequest into the value wait() resolves to */
  declare _valueOf: ((r: DevRequest) => T) | null;
  declare _call: string;
  /** persistent: `${_call}.start`, made at the first start (the name its operations and errors carry); private */
  declare _startCall: string | null;
  /** persistent: the handles it holds from init to free (non-transient references); private */
  declare _held: number[] | null;
  /** private */
  declare _status: Status | null;
  /** completion callbacks: one in the common case, an array when several wait; private */
  declare _waiter: Waiter | null;
  declare _waiters: Waiter[] | null;

  /** @internal */
  constructor(r: DevRequest | null, comm: RequestComm | null, call: string) {
    this._r = r;
    this._comm = comm;
    this._reported = false;
    this._freed = false;
    this._starter = null;
    this._valueOf = null;
    this._call = call;
    this._startCall = null;
    this._held = null;
    this._status = null;
    this._waiter = null;
    this._waiters = null;
    if (r !== null) {
      // #attach inline: a call less for every request made (the lean path counts them, ADR 0020).
      r.owner = this;
      r.onComplete = onDevComplete;
    }
  }

  #attach(r: DevRequest): void {
    r.owner = this;
    r.onComplete = onDevComplete;
  }

  /** @internal A request already complete (PROC_NULL, or a start of nothing). */
  static _completed<T>(r: DevRequest, comm: RequestComm | null, call: string): Request<T> {
    r.done = true;
    return new Request<T>(r, comm, call);
  }

  /** @internal The request of a send that left by the lean route (Device.sendBytes returned null): complete, sharing LEAN_SENT, with no DevRequest of its own. */
  static _leanSent(comm: RequestComm): Request<void> {
    const req = new Request<void>(null, comm, 'Isend');
    req._r = LEAN_SENT;
    return req;
  }

  /**
   * @internal A persistent request's references, held until free(): its communicator, the
   * datatype of `buf` and the op handle `op` (0: none; persistent reductions). Returns the datatype
   * handle each start references.
   */
  _hold(comm: number, buf: unknown, op = 0): number {
    const lt = runtime(this._call).device.lifetime;
    const type = typeHandleOf(buf, lt.countsPredefined);
    this._held = op === 0 ? [comm, type] : [comm, type, op];
    lt.retain(comm);
    if (type !== 0) lt.retain(type);
    if (op !== 0) lt.retain(op);
    lt.countRequest(1);
    return type;
  }

  /**
   * @internal A generalized request completed by a promise (nonblocking collectives, idup); it
   * references its communicator and the datatype and op handles given until it completes.
   */
  static _fromPromise<T>(promise: Promise<T>, comm: RequestComm | null, call: string, type = 0, op = 0): Request<T> {
    const r = new DevRequest(REQ_KIND.GENERALIZED, call);
    const req = new Request<T>(r, comm, call);
    const device = runtime(call).device;
    device.lifetime.acquire(r, comm?._handle ?? 0, type, op);
    req._valueOf = (d) => d.value as T;
    completeWith(device, r, promise, call);
    return req;
  }

  /**
   * @internal A persistent request whose every start() runs `run` and completes with its promise,
   * as _fromPromise does (MPI 4.0 persistent collectives, e.g. NeighborAlltoallInit). Like
   * SendInit it holds its communicator, the datatype of `buf` (a checked BufSpec) and the op
   * handle `op` (0: none) until free().
   */
  static _persistentFromPromise(comm: RequestComm, call: string, buf: unknown, run: () => Promise<void>, op = 0): Request<void> {
    return Request._persistentFromPlan(comm, call, buf, promisePlan(run), op);
  }

  /**
   * @internal A persistent request whose every start() runs `plan` (coll/plan.ts), made at init
   * (PlannedRequest: what init makes serves every start).
   */
  static _persistentFromPlan(comm: RequestComm, call: string, buf: unknown, plan: CollPlan, op = 0): Request<void> {
    return new PlannedRequest(comm, call, buf, plan, op);
  }

  /** @internal */
  _onDone(): void {
    this._status = null;
    const w = this._waiter;
    if (w !== null) {
      this._waiter = null;
      w(this as Request<unknown>);
    }
    const ws = this._waiters;
    if (ws !== null) {
      this._waiters = null;
      for (let i = 0; i < ws.length; i++) ws[i]!(this as Request<unknown>);
    }
  }

  /** @internal Registers a one-shot completion callback (the request must be pending). */
  _listen(fn: Waiter): void {
    if (this._waiter === null && this._waiters === null) this._waiter = fn;
    else (this._waiters ??= []).push(fn);
  }

  /** @internal */
  _unlisten(fn: Waiter): void {
    if (this._waiter === fn) {
      this._waiter = null;
      return;
    }
    const ws = this._waiters;
    if (ws === null) return;
    const i = ws.indexOf(fn);
    if (i >= 0) ws.splice(i, 1);
  }

  /** @internal true when there is nothing left to wait for. */
  get _isDone(): boolean {
    return this._r === null || this._r.done;
  }

  /** @internal Inactive: reported, freed, or a persistent request not started. */
  get _isInactive(): boolean {
    return this._reported || this._freed || this._r === null;
  }

  /** @internal The value of a completed request; throws its error. */
  _result(): T {
    const r = this._r;
    this._reported = true;
    if (r === null) return undefined as T;
    if (r.error !== null) throw r.error;
    return this._valueOf === null ? (undefined as T) : this._valueOf(r);
  }

  /**
   * Resolves once the operation completes: the received value for irecv, the new
   * Comm for idup, otherwise undefined. Rejects with the operation's MPIError.
   * @example const v = await comm.irecv(0, 5).wait();
   */
  wait(): Promise<T> {
    if (this._isDone) {
      try {
        return Promise.resolve(this._result());
      } catch (e) {
        return rejectAtCallSite(e);
      }
    }
    const rt = runtime('Request.wait');
    return new Promise<T>((resolve) => {
      rt.blocked.enter(this._call, this._comm?.name ?? '', null, null, this._comm?._ctx ?? -1);
      this._listen(() => {
        rt.blocked.leave();
        try {
          resolve(this._result());
        } catch (e) {
          // Made where the request completed: rejected at the awaiting call, its stack names the user's (util/user-stack.ts).
          resolve(rejectAtCallSite(e));
        }
      });
    });
  }

  /**
   * True once complete (then the request becomes inactive). Progress comes from
   * the event loop: a loop that polls test() must yield (await) between calls.
   * @throws MPIError the operation's error, once complete.
   */
  test(): boolean {
    if (!this._isDone) {
      this._poll();
      if (!this._isDone) return false;
    }
    try {
      this._result();
    } catch (e) {
      throwAtCallSite(e);
    }
    return true;
  }

  /** @internal Picks up a completion another thread has made for this request (test() calls it). */
  _poll(): void {
    if (this._r !== null) runtime('Request.test').device.poll();
  }

  /** The status after completion, else null. */
  get status(): Status | null {
    const r = this._r;
    if (r === null || !r.done) return null;
    if (this._status === null) {
      const st = new Status();
      const src = r.sourceEndpoint;
      const source = src < 0 ? src : this._comm === null ? src : this._comm._rankOfEndpoint(src);
      st._set(source, r.tag, r.count, r.error === null ? SUCCESS : r.error.errorClass, r.cancelled);
      this._status = st;
    }
    return this._status;
  }

  /**
   * Cancels a pending receive, or a send whose message no receive has matched yet (MPI 3.1 §3.8.4):
   * wait() still completes, and status.cancelled tells whether the cancel took effect. A send to
   * another process is cancelled by an exchange with its receiver, so its status is known only after
   * wait() (or test()). A standard send of an eager message is complete at once: cancel has no effect.
   */
  cancel(): void {
    const r = this._r;
    if (r === null || r.done) return;
    runtime('Request.cancel').device.cancel(r);
  }

  /** Releases the request; a pending operation still completes in the background. */
  free(): void {
    this._freed = true;
    if (this._r !== null && !this._r.done) this._r.freed = true;
    this._dropHeld();
  }

  /** @internal Drops the references a persistent request holds from init (_hold); a planned one that is active drops them when its run reports. */
  _dropHeld(): void {
    const held = this._held;
    if (held !== null) {
      this._held = null;
      const lt = runtime('Request.free').device.lifetime;
      lt.countRequest(-1);
      for (const h of held) if (h !== 0) lt.release(h);
    }
  }

  /** (Re)activates a persistent request. */
  start(): void {
    // The call's name (`${_call}.start`) is made once: a loop of starts makes no string.
    if (this._starter === null) throw mpiError(ERR_ARG, this.#startCall(), 'start() is only for persistent requests (SendInit, RecvInit, ...Init)');
    if (this._freed) throw mpiError(ERR_ARG, this.#startCall(), 'the request has been freed');
    // Active until its completion is reported (wait, test, waitall, ...), as MPI 4.0 section 3.9 says: a run
    // that finished at once (a collective whose messages were there) is still active until then.
    if (this._r !== null && !this._reported) throw mpiError(ERR_ARG, this.#startCall(), 'the request is still active: wait for it before start()');
    if (runtimeOrNull() === null) runtime(this.#startCall());
    const r = this._nextOperation();
    this._r = r;
    this._reported = false;
    this._status = null;
    this.#attach(r);
    try {
      this._starter(r);
    } catch (e) {
      // The start failed (ERR_NO_MEM) and the device dropped the operation: the request stays inactive.
      this._r = null;
      throw e;
    }
  }

  #startCall(): string {
    return (this._startCall ??= `${this._call}.start`);
  }

  /** @internal The operation record of the next start: a new one (persistent point-to-point, partitioned); PlannedRequest reuses its own. */
  _nextOperation(): DevRequest {
    return new DevRequest(REQ_KIND.RECV, this.#startCall());
  }

  /** Waits for every request; resolves their values in order. Inactive requests count as complete (value undefined). */
  static waitall(reqs: Request<any>[]): Promise<any[]> {
    const rt = runtime('Request.waitall');
    // The fields are read here, not through _isDone: this runs once per batch of messages, and each
    // getter is a call on the path of every message (docs/adr/0020-lean-common-path.md step 3).
    let pending = 0;
    for (let i = 0; i < reqs.length; i++) {
      const d = reqs[i]!._r;
      if (d !== null && !d.done) pending++;
    }
    if (pending === 0) {
      try {
        return Promise.resolve(settleAll(reqs));
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise((resolve) => {
      rt.blocked.enter('Request.waitall', reqs[0]?._comm?.name ?? '', null, null, reqs[0]?._comm?._ctx ?? -1);
      // One waiter for the whole array: a count and one promise.
      const onOne = (): void => {
        if (--pending === 0) {
          rt.blocked.leave();
          try {
            resolve(settleAll(reqs));
          } catch (e) {
            // Made where the last request completed: rejected at the awaiting call, its stack names the user's (util/user-stack.ts).
            resolve(rejectAtCallSite(e));
          }
        }
      };
      for (let i = 0; i < reqs.length; i++) {
        const req = reqs[i]!;
        const d = req._r;
        if (d !== null && !d.done) req._listen(onOne);
      }
    });
  }

  /** Waits for one active request; resolves [index, value], or [UNDEFINED, undefined] if none is active. */
  static waitany(reqs: Request<any>[]): Promise<[number, any]> {
    const rt = runtime('Request.waitany');
    const i = firstDone(reqs);
    if (i !== NONE) return settleOne(reqs, i);
    if (!reqs.some((r) => !r._isInactive)) return Promise.resolve([UNDEFINED, undefined]);
    return new Promise((resolve) => {
      onFirstDone(rt, 'Request.waitany', reqs, (k) => {
        try {
          resolve([k, reqs[k]!._result()]);
        } catch (e) {
          // The request's own error, made where it completed: rejected at the awaiting call (util/user-stack.ts).
          resolve(rejectAtCallSite(e));
        }
      });
    });
  }

  /** Waits until at least one active request completes; resolves the indices of all completed ones ([] if none is active). */
  static waitsome(reqs: Request<any>[]): Promise<number[]> {
    const rt = runtime('Request.waitsome');
    try {
      const done = collectDone(reqs);
      if (done.length > 0 || !reqs.some((r) => !r._isInactive)) return Promise.resolve(done);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve) => {
      onFirstDone(rt, 'Request.waitsome', reqs, () => {
        try {
          resolve(collectDone(reqs));
        } catch (e) {
          resolve(rejectAtCallSite(e));
        }
      });
    });
  }

  /** True when every request is complete (inactive ones count as complete); they then become inactive. */
  static testall(reqs: Request<any>[]): boolean {
    runtime('Request.testall').device.poll();
    for (const r of reqs) if (!r._isInactive && !r._isDone) return false;
    let failed = false;
    for (const r of reqs) {
      if (r._isInactive) continue;
      r._reported = true;
      if (r._r!.error !== null) failed = true;
    }
    if (failed) throw inStatus('Request.testall', reqs);
    return true;
  }

  /** Index of a completed active request (which becomes inactive), or UNDEFINED. */
  static testany(reqs: Request<any>[]): number {
    runtime('Request.testany').device.poll();
    const i = firstDone(reqs);
    if (i === NONE) return UNDEFINED;
    try {
      reqs[i]!._result();
    } catch (e) {
      throwAtCallSite(e);
    }
    return i;
  }
}

/**
 * Calls `then` with the index of the first of the active, pending `reqs` to complete, once (the
 * other listeners are removed); the thread counts as blocked in `call` until then.
 */
function onFirstDone(rt: ReturnType<typeof runtime>, call: string, reqs: Request<any>[], then: (index: number) => void): void {
  rt.blocked.enter(call, '', null, null);
  const listeners: Waiter[] = [];
  for (let k = 0; k < reqs.length; k++) {
    const req = reqs[k]!;
    if (req._isInactive || req._isDone) continue;
    const fn: Waiter = () => {
      rt.blocked.leave();
      for (let j = 0; j < reqs.length; j++) if (listeners[j] !== undefined && j !== k) reqs[j]!._unlisten(listeners[j]!);
      then(k);
    };
    listeners[k] = fn;
    req._listen(fn);
  }
}

/**
 * Throws a request's error from the synchronous call reporting it (test, testany): its stack then
 * shows the user's line of that call, not only where the request completed (util/user-stack.ts).
 */
function throwAtCallSite(e: unknown): never {
  callSite(e, throwAtCallSite);
  throw e;
}

/**
 * Completes generalized request `r` on `device` (the thread's that started it, which the caller
 * holds) when `promise` settles: its value, or its error as an MPIError naming `call`.
 */
function completeWith(device: Device, r: DevRequest, promise: Promise<unknown>, call: string): void {
  promise.then(
    (v) => {
      r.value = v;
      device.completeNow(r);
    },
    (e: unknown) => {
      r.error = e instanceof MPIError ? e : mpiError(ERR_OTHER, call, String(e), e);
      device.completeNow(r);
    },
  );
}

/**
 * A persistent collective (…Init, MPI 4.0 section 6.13): what init makes serves every start (issue 36).
 * A persistent request is inactive between its completions and MPI_Request_free of an inactive one
 * ends it (section 3.9), so a start needs nothing new: it resets and reuses the one operation record
 * made here; the references to the communicator, datatype and op are the ones _hold takes from init
 * to free (a run takes none of its own, and when the request is freed while active they go when that
 * run reports: the run still uses them); and the plan reports to the one PlanRun made here. A start
 * so allocates nothing on this layer and makes no lifetime call; its completion takes and drops no
 * hold of the event loop (Device.completeNow: the run's receives hold it while they wait).
 */
class PlannedRequest extends Request<void> {
  readonly #run: PlanRun;

  constructor(comm: RequestComm, call: string, buf: unknown, plan: CollPlan, op: number) {
    super(null, comm, call);
    this._hold(comm._handle, buf, op);
    this._startCall = `${call}.start`;
    // The device is this thread's, taken here: a request lives on the thread that made it.
    const run = new PlanRun(runtime(call).device, this, plan, new DevRequest(REQ_KIND.GENERALIZED, this._startCall));
    this.#run = run;
    // Made once: a start calls it with the operation _nextOperation gave, which is run.record.
    this._starter = () => run.start();
  }

  override _nextOperation(): DevRequest {
    const r = this.#run.record;
    r.done = false;
    r.error = null;
    return r;
  }

  override _dropHeld(): void {
    if (!this.#run.running) super._dropHeld();
  }
}

const NONE = -1;

function firstDone(reqs: Request<any>[]): number {
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i]!;
    if (!r._isInactive && r._isDone) return i;
  }
  return NONE;
}

function collectDone(reqs: Request<any>[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i]!;
    if (!r._isInactive && r._isDone) {
      r._reported = true;
      out.push(i);
    }
  }
  const failed = out.some((i) => reqs[i]!._r!.error !== null);
  if (failed) throw inStatus('Request.waitsome', reqs);
  return out;
}

function settleOne(reqs: Request<any>[], i: number): Promise<[number, any]> {
  try {
    return Promise.resolve([i, reqs[i]!._result()]);
  } catch (e) {
    // The request's own error, made where it completed: rejected at the awaiting call (util/user-stack.ts).
    return rejectAtCallSite(e);
  }
}

/** The values of completed `reqs` (which become inactive); throws ERR_IN_STATUS if any failed. */
function settleAll(reqs: Request<any>[]): any[] {
  const values = new Array<unknown>(reqs.length);
  let failed = false;
  for (let i = 0; i < reqs.length; i++) {
    const r = reqs[i]!;
    const d = r._r;
    // _isInactive, read as fields (see waitall)
    if (r._reported || r._freed || d === null) continue;
    r._reported = true;
    if (d.error !== null) failed = true;
    else if (r._valueOf !== null) values[i] = r._valueOf(d);
  }
  if (failed) throw inStatus('Request.waitall', reqs);
  return values;
}

function inStatus(call: string, reqs: Request<any>[]): MPIError {
  const failures: string[] = [];
  for (let i = 0; i < reqs.length; i++) {
    const d = reqs[i]!._r;
    if (d !== null && d.error !== null) failures.push(`request ${i}: ${d.error.message}`);
  }
  return mpiError(ERR_IN_STATUS, call, `${failures.length} of ${reqs.length} requests failed (see each request's status.error): ${failures.join('; ')}`);
}

