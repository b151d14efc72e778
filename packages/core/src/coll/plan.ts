/**
 * A persistent collective's plan (MPI 4.0 section 6.13, "…_init" then MPI_Start): what the API's
 * …Init makes once, on its point-to-point view and tag, and what each start() runs again.
 *
 * A plan reports its completion to a RunTarget (the persistent request, api/request.ts) rather than
 * resolving a promise, so that a plan whose steps are driven by the receives' completions
 * (short-allreduce.ts) costs a start no promise, no async frame and no closure, and a start whose
 * messages were already there completes before start() returns. Every other persistent collective
 * runs its promise-returning body through promisePlan: one path for all of them.
 *
 * Contract: start() is called only when the previous run has reported (a persistent request cannot
 * start again while active); the plan calls done.finished exactly once per start, possibly before
 * start() returns, with null or the run's error.
 */
import type { MPIError } from '../util/index.ts';
import type { CollPt2pt } from './pt2pt.ts';

/** Who hears that a run of a plan has finished. */
export interface RunTarget {
  finished(error: unknown): void;
}

/** A collective planned once (buffers, op, schedule, tag) and run once per start. */
export interface CollPlan {
  start(done: RunTarget): void;
}

/** Makes a plan on the request's point-to-point view and tag (both fixed at init). */
export type CollPlanner = (pt: CollPt2pt, tag: number) => CollPlan;

/** A plan whose run is a promise-returning body (every collective without a step machine of its own). */
class PromisePlan implements CollPlan {
  readonly #run: () => Promise<unknown>;
  #done: RunTarget | null = null;
  // Bound once, here: a start then costs the body's promise and its then(), no closure.
  readonly #onValue = (): void => this.#report(null);
  readonly #onError = (e: unknown): void => this.#report(e);

  constructor(run: () => Promise<unknown>) {
    this.#run = run;
  }

  start(done: RunTarget): void {
    this.#done = done;
    this.#run().then(this.#onValue, this.#onError);
  }

  #report(error: unknown): void {
    const done = this.#done!;
    this.#done = null;
    done.finished(error);
  }
}

/** The plan of a collective whose every start runs `run` (a promise-returning body). */
export function promisePlan(run: () => Promise<unknown>): CollPlan {
  return new PromisePlan(run);
}

/** Runs `plan` once as a promise (tests, and any caller that awaits a single start). */
export function runPlan(plan: CollPlan): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    plan.start({ finished: (e: unknown) => (e === null ? resolve() : reject(e as MPIError)) });
  });
}
