/**
 * PlanRun: where a persistent collective's plan (coll/plan.ts) reports each run, for the request
 * that owns it (request.ts PlannedRequest), and what a start and a wait of that request do. One per
 * request, made at init: a start checks no argument, allocates nothing and calls no function made per
 * start (issue 36: a started persistent request does strictly less than the plain call); a wait that
 * must wait makes its promise and nothing else (the executor and the listener are made here, once).
 *
 * Thread: the one that made the request (a request lives there). Errors: a run's error completes the
 * record as an MPIError (a non-MPI error becomes ERR_OTHER naming the call), as completeWith does a
 * rejected promise's; a plan that throws at start (the device refused at once: ERR_NO_MEM) completes
 * it the same way.
 */
import type { DevRequest } from '../device/index.ts';
import type { CollPlan, RunTarget } from '../coll/index.ts';
import { runtime, runtimeOrNull } from '../runtime/index.ts';
import { ERR_OTHER, MPIError, mpiError, rejectAtCallSite } from '../util/index.ts';
import type { Request } from './request.ts';

/**
 * Where a persistent request's plan reports a run (coll/plan.ts RunTarget): completes the request's
 * operation record with the run's error, as completeWith does for a promise. One per request, made
 * at init, so a start allocates no callbacks.
 */
export class PlanRun implements RunTarget {
  readonly request: Request<void>;
  readonly plan: CollPlan;
  /** the operation record every start of the request reuses; its owner is the request from init */
  readonly record: DevRequest;
  /** a run has started and not yet reported */
  running = false;
  /** the resolve of the one wait() that waits through #waited (null: none does) */
  #resolve: ((value: void | PromiseLike<void>) => void) | null = null;
  // Bound once, here: a start that waits costs its promise and no closure.
  readonly #executor = (resolve: (value: void | PromiseLike<void>) => void): void => {
    this.#resolve = resolve;
  };
  readonly #waited = (): void => {
    const resolve = this.#resolve!;
    this.#resolve = null;
    runtimeOrNull()?.blocked.leave();
    try {
      resolve(this.request._result());
    } catch (e) {
      // Made where the run completed: rejected at the awaiting call, its stack names the user's (util/user-stack.ts).
      resolve(rejectAtCallSite(e));
    }
  };

  constructor(request: Request<void>, plan: CollPlan, record: DevRequest) {
    this.request = request;
    this.plan = plan;
    this.record = record;
    record.owner = request;
  }

  /**
   * A start of an inactive, unfreed request (PlannedRequest.start, or Request.start, checked that): what
   * Request.start does after its checks, written out on the record made at init, then the plan's run.
   */
  restart(): void {
    const r = this.record;
    const req = this.request;
    r.done = false;
    r.error = null;
    req._r = r;
    req._reported = false;
    req._status = null;
    this.running = true;
    try {
      this.plan.start(this);
    } catch (e) {
      // A start the device refused at once (ERR_NO_MEM): the operation completes with the error, as a rejected promise's would.
      if (this.running) this.finished(e);
    }
  }

  /**
   * Request.wait of a started run not yet complete, with nobody else waiting on it: enters the blocked
   * record (and its poll loop) and returns a promise the completion settles. Null for anything else (no
   * start yet, complete, a second waiter), which Request.wait serves.
   */
  wait(): Promise<void> | null {
    const req = this.request;
    const r = req._r;
    if (r === null || r.done || this.#resolve !== null || req._waiter !== null || req._waiters !== null) return null;
    const comm = req._comm!;
    runtime('Request.wait').blocked.enter(req._call, comm.name, null, null, comm._ctx);
    const p = new Promise<void>(this.#executor);
    req._waiter = this.#waited;
    return p;
  }

  finished(error: unknown): void {
    const r = this.record;
    const req = this.request;
    this.running = false;
    if (error !== null) r.error = error instanceof MPIError ? error : mpiError(ERR_OTHER, req._call, String(error), error);
    // The record is the request's own, made at init: no request slot, no references and no finish of the
    // device's (a run takes none), which is all Device.completeNow would see to; completing it is marking
    // it done and telling the request (its waiters: wait, waitall, a relay to another thread).
    r.done = true;
    req._onDone();
    // Freed while this run was active: the references it used go now.
    if (req._freed) req._dropHeld();
  }
}
