/**
 * Context-id allocation and release: the drivers of the stages in
 * context-id-stages.ts (which holds the algorithm, its source and invariants).
 *
 * - `allocateContextId` drives the stages with `await` (Comm.dup, split,
 *   create, createGroup). It runs each stage with runLockedAsync, so the
 *   calling thread's event loop keeps running while another thread holds the
 *   mutex, and this thread holds it only while the stage runs: never across an
 *   await, where a freeContextId of the same thread (a user's Comm.free)
 *   would wait for it forever.
 * - `ContextIdPoller` drives the same stages from `test()` (Comm.idup's
 *   Request): it never waits, it takes the mutex with tryLock and looks at
 *   whether the pending collective has settled.
 * - `freeContextId` sets the id's bit at once, without waiting for the mask
 *   or the mutex (one atomic OR: ContextIdState.release says why).
 *
 * Yielding: an allocation that contributes zeros (another creation of its
 * process owns the mask) cannot succeed this round, and the creation it waits
 * for progresses only on the event loop (its messages, or another thread's
 * wake-up). So before such a round the driver yields one macrotask turn:
 * several creations in flight on one thread, one of them over a single
 * process (whose collectives complete in microtasks), would otherwise retry
 * in a microtask loop that starves the network forever.
 *
 * Callers: the comm/ creation functions, one call per participating thread.
 * Every participant of a creation must call with the same parent context id,
 * tag and options, and a ContextIdCollectives over exactly the participants.
 * Errors: MPIError(ERR_OTHER) when no id is free at every participant (mask
 * intact); a rejected collective rejects the allocation with that error after
 * releasing what the allocation held.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Settings } from '../config/index.ts';
import type { ContextIdState } from './context-id-mask.ts';
import {
  abandonAllocation,
  ALLOCATION_PHASE,
  ContextIdAllocation,
  type AllocationStep,
  type ContextIdCollectives,
  type ContextIdOptions,
  stepAllocation,
} from './context-id-stages.ts';

/**
 * Allocates a context id collectively over the participants behind `coll`
 * (Listing 1.1 with the initial synchronization; Listing 1.2 when eager).
 * @param state the calling thread's endpoint state
 * @param parentContextId the parent communicator's context id (suffix 0)
 * @param tag the priority tag: createGroup's user tag, or collectivePriorityTag(sequence) for comm-collective creations (context-id-collectives.ts)
 * @param coll allreduceBand and barrier over the participants
 * @param options algo ('new'), eager (1), call named in errors ('allocateContextId')
 * @returns the new context id (suffix 0), the same at every participant
 * @throws MPIError(ERR_OTHER) when no context id is free at every participant; the mask is left intact
 */
export async function allocateContextId(
  state: ContextIdState,
  parentContextId: number,
  tag: number,
  coll: ContextIdCollectives,
  options: ContextIdOptions = {},
): Promise<number> {
  const alloc = new ContextIdAllocation(parentContextId, tag, options);
  let result: Uint32Array | null = null;
  for (;;) {
    const input = result;
    const step = await state.mutex.runLockedAsync(() => stepAllocation(state, alloc, input));
    if (step.kind === 'done') return step.contextId;
    if (step.kind === 'failed') throw step.error;
    try {
      if (step.kind === 'allreduce' && alloc.phase === ALLOCATION_PHASE.BASE && !alloc.ownsMask) await nextTurn();
      if (step.kind === 'barrier') {
        await coll.barrier();
        result = null;
      } else {
        result = await coll.allreduceBand(step.words);
      }
    } catch (err) {
      await state.mutex.runLockedAsync(() => abandonAllocation(state, alloc));
      throw err;
    }
  }
}

/**
 * Marks a context id free at this endpoint, at once: it takes neither the mask
 * nor the mutex, so it never waits for an allocation in progress (paper,
 * section 3) and may run at any point of any thread (ContextIdState.release).
 * @param contextId any context id of the communicator (the suffix is ignored)
 * @throws MPIError(ERR_INTERN) when the id is reserved or not allocated
 */
export function freeContextId(state: ContextIdState, contextId: number): void {
  state.release(contextId);
}

/**
 * The allocation options a job's settings select (ctxidAlgo, ctxidEager).
 * @param call the MPI call to name in errors, e.g. 'Comm.dup'
 */
export function contextIdOptions(settings: Pick<Settings, 'ctxidAlgo' | 'ctxidEager'>, call: string): ContextIdOptions {
  return { algo: settings.ctxidAlgo, eager: settings.ctxidEager, call };
}

/** Allocated context ids at this endpoint, not counting the reserved ones (MPI.stats().contextIdsInUse). */
export function contextIdsInUse(state: ContextIdState): number {
  return state.countInUse();
}

/**
 * A nonblocking allocation: the same stages as allocateContextId, advanced by
 * `test()` (for Comm.idup). The collectives may be any promise-returning
 * implementation; test() only looks at whether the pending one has settled.
 */
export class ContextIdPoller {
  readonly #state: ContextIdState;
  readonly #coll: ContextIdCollectives;
  readonly #alloc: ContextIdAllocation;
  #isWaiting = false;
  #isSettled = false;
  #result: Uint32Array | null = null;
  #collError: unknown = undefined;
  #hasCollError = false;
  #failure: unknown = undefined;
  #hasFailed = false;

  /** Starts nothing yet: the first test() runs the first stage. Arguments as allocateContextId. */
  constructor(state: ContextIdState, parentContextId: number, tag: number, coll: ContextIdCollectives, options: ContextIdOptions = {}) {
    this.#state = state;
    this.#coll = coll;
    this.#alloc = new ContextIdAllocation(parentContextId, tag, options);
  }

  /** The allocation's state (phase, rounds, collectives run). */
  get allocation(): ContextIdAllocation {
    return this.#alloc;
  }

  /** The allocated id once test() returned true; -1 before. */
  get contextId(): number {
    return this.#alloc.phase === ALLOCATION_PHASE.DONE ? this.#alloc.contextId : -1;
  }

  /**
   * Advances the allocation as far as it can without waiting.
   * @returns true once the context id is allocated
   * @throws MPIError(ERR_OTHER) when ids are exhausted, or the collective's error; again on every later call
   */
  test(): boolean {
    const alloc = this.#alloc;
    for (;;) {
      if (alloc.phase === ALLOCATION_PHASE.DONE) return true;
      if (this.#hasFailed) throw this.#failure;
      let result: Uint32Array | null = null;
      if (this.#isWaiting) {
        if (!this.#isSettled) return false;
        if (this.#hasCollError) return this.#fail(this.#collError, true);
        this.#isWaiting = false;
        result = this.#result;
        this.#result = null;
      }
      if (!this.#state.mutex.tryLock()) {
        // Keep the result for the next test(): the stage has not consumed it.
        this.#isWaiting = true;
        this.#isSettled = true;
        this.#result = result;
        return false;
      }
      let step: AllocationStep;
      try {
        step = stepAllocation(this.#state, alloc, result);
      } finally {
        this.#state.mutex.unlock();
      }
      if (step.kind === 'done') return true;
      if (step.kind === 'failed') return this.#fail(step.error, false);
      this.#start(step);
    }
  }

  #start(step: { kind: 'barrier' } | { kind: 'allreduce'; words: Uint32Array }): void {
    this.#isWaiting = true;
    this.#isSettled = false;
    const pending = step.kind === 'barrier' ? this.#coll.barrier().then(() => null) : this.#coll.allreduceBand(step.words);
    pending.then(
      (value) => {
        this.#result = value;
        this.#isSettled = true;
      },
      (err: unknown) => {
        this.#collError = err;
        this.#hasCollError = true;
        this.#isSettled = true;
      },
    );
  }

  #fail(error: unknown, mustAbandon: boolean): never {
    if (mustAbandon) {
      // Rare path (a collective failed). Spin, never sleep: holders run one synchronous stage in
      // another thread, and a sleep in Atomics.wait could take the wake-up meant for this thread's
      // own pending runLockedAsync (ContextIdState.release).
      while (!this.#state.mutex.tryLock());
      abandonAllocation(this.#state, this.#alloc);
      this.#state.mutex.unlock();
    }
    this.#hasFailed = true;
    this.#failure = error;
    throw error;
  }
}
