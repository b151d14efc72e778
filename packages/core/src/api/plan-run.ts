/**
 * PlanRun: where a persistent collective's plan (coll/plan.ts) reports each run, for the request
 * that owns it (request.ts PlannedRequest). One per request, made at init: a start allocates no
 * callbacks and reuses the request's one operation record (issue 36).
 *
 * Thread: the one that made the request (a request lives there). Errors: a run's error completes the
 * record as an MPIError (a non-MPI error becomes ERR_OTHER naming the call), as completeWith does a
 * rejected promise's; a plan that throws at start (the device refused at once: ERR_NO_MEM) completes
 * it the same way.
 */
import type { Device, DevRequest } from '../device/index.ts';
import type { CollPlan, RunTarget } from '../coll/index.ts';
import { ERR_OTHER, MPIError, mpiError } from '../util/index.ts';
import type { Request } from './request.ts';

/**
 * Where a persistent request's plan reports a run (coll/plan.ts RunTarget): completes the request's
 * operation record with the run's error, as completeWith does for a promise. One per request, made
 * at init, so a start allocates no callbacks.
 */
export class PlanRun implements RunTarget {
  readonly device: Device;
  readonly request: Request<void>;
  readonly plan: CollPlan;
  /** the operation record every start of the request reuses */
  readonly record: DevRequest;
  /** a run has started and not yet reported */
  running = false;

  constructor(device: Device, request: Request<void>, plan: CollPlan, record: DevRequest) {
    this.device = device;
    this.request = request;
    this.plan = plan;
    this.record = record;
  }

  start(): void {
    this.running = true;
    try {
      this.plan.start(this);
    } catch (e) {
      // A start the device refused at once (ERR_NO_MEM): the operation completes with the error, as a rejected promise's would.
      if (this.running) this.finished(e);
    }
  }

  finished(error: unknown): void {
    const r = this.record;
    this.running = false;
    if (error !== null) r.error = error instanceof MPIError ? error : mpiError(ERR_OTHER, this.request._call, String(error), error);
    this.device.completeNow(r);
    // Freed while this run was active: the references it used go now.
    if (this.request._freed) this.request._dropHeld();
  }
}
