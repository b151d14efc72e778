/**
 * Multithreaded context-id allocation.
 *
 * Source: J. Dinan et al., "Efficient Multithreaded Context ID Allocation in
 * MPI" (papers/context-id-allocation.txt): Listing 1.1 (the allocation loop
 * with priority by <parent context id, tag> and the initial synchronization
 * that removes the hold-and-wait deadlock of section 3.1), Listing 1.2 (eager
 * allocation: that synchronization is itself an allreduce over a reserved eager
 * segment, section 5). MPICH's src/mpi/comm/contextid.c for the exhaustion test
 * (an "all own the mask" word in the allreduce) and the state-machine shape
 * (gcn_state): one set of stages, driven by `await` or by polling.
 *
 * State: the endpoint's shared ContextIdState (context-id-mask.ts: mask,
 * mask_in_use, eager_mask_in_use, lowest_ctx_id, lowest_tag, one mutex) and a
 * per-call ContextIdAllocation (phase, local_mask, i_own_the_mask,
 * i_own_eager_mask). Every stage runs with the mutex held and never awaits; the
 * collectives run with it released.
 *
 * Stages (`stepAllocation`; the driver runs the returned collective and feeds
 * its result back):
 * ```
 *            algo 'new', eager          algo 'new', no eager     algo 'original'
 *   START ---------------------> EAGER  ------------> SYNC       ------+
 *            snapshot eager seg   |     barrier        |               |
 *            (or zeros if taken)  |                    |               |
 *             allreduce(BAND)     v                    v               v
 *                     id in eager segment? -- no --> BASE: update priority; own the base
 *                        | yes                       segment if free and mine, else zeros;
 *                        v                           allreduce(BAND) [+ "all own" word]
 *                      DONE <----- a bit set ------- owner: take lowest bit, release mask
 *                                  all own, no bit -> FAILED (ERR_OTHER, mask intact)
 *                                  otherwise -------> BASE again (retry)
 * ```
 *
 * Why the synchronization matters (Figure 1, section 3.1): without it a thread
 * takes the base segment and blocks in an allreduce whose partners are busy in
 * another creation that needs that same segment at their own process:
 * ```
 *   P0.T1 holds P0 mask, waits for P1.T1 in dup(thread_comm_1)
 *   P1.T1 spins in dup(COMM_SELF): needs P1 mask
 *   P1.T0 holds P1 mask, waits for P0.T0 in dup(thread_comm_0)
 *   P0.T0 spins in dup(COMM_SELF): needs P0 mask            -> circular wait
 * ```
 * With it, no thread owns a base segment before every participant of its
 * creation has arrived, so all of them take part in every allreduce round. In
 * eager mode the eager allreduce is that synchronization; its holder blocks
 * only the eager segment, which nobody needs to make progress.
 *
 * Priority (Listing 1.1's <parent context id, tag>, plus a third key): the
 * paper needs every two allocations in flight at one process to have different
 * priorities, ordered the same way at every process they share. A context id is
 * unique only at the processes of its group, and an intercommunicator's merge
 * allocates over two groups with one group's id as its parent: at a process of
 * the other group that id can be the parent of another creation, with the same
 * sequence tag. Both then "have priority", each takes the mask at some of its
 * processes and waits for the others' there: a circular wait (seen in
 * intercomm.it, "created concurrently from threads"; MPICH's merge uses the same
 * parent and tag). So the key is <parent context id, leader, tag>, where leader
 * is the endpoint of the parent group's first member (for merge, the low
 * group's): the leader's process holds the parent's id itself, so no other live
 * communicator has the same <id, leader>, and the tag separates creations on one
 * parent (its collective sequence, or createGroup's tag).
 *
 * Invariants: every participant of one allocation sees the same allreduce
 * results, so all make the same decision each round (done, retry, fail) and
 * run the same number of collectives; an id is returned by every participant
 * or by none; a failed or abandoned allocation leaves the mask, the in-use
 * flags and the priority as if it had never run.
 */
import { assert, ERR_OTHER, type MPIError, mpiError } from '../util/index.ts';
import type { ContextIdState } from './context-id-mask.ts';
import { NO_PRIORITY } from './context-id-mask.ts';

/** The collectives the allocator needs, over the participants of one creation. */
export interface ContextIdCollectives {
  /**
   * Element-wise bitwise AND of `words` over every participant (the parent
   * comm, or the group of createGroup), on the parent's collective (or
   * group-collective) context and the creation's tag. Every participant passes
   * the same length and receives the same result; `words` may be reused by the
   * implementation as the result.
   */
  allreduceBand(words: Uint32Array): Promise<Uint32Array>;
  /** Returns once every participant has called it (same context and tag as allreduceBand). */
  barrier(): Promise<void>;
}

/** Options of one allocation. */
export interface ContextIdOptions {
  /** 'new' (default): initial synchronization, deadlock-free. 'original': none (MPICH2's algorithm; Figure 1 deadlocks; tests and benchmarks only). */
  readonly algo?: 'new' | 'original';
  /**
   * Eager allocation (Listing 1.2): 1 (default) or 0. Ignored by 'original', which has no
   * synchronization step to piggyback on. A job setting (ctxidEager): it must be the same for
   * every allocation at every endpoint, since eager and base allocations use different segments.
   */
  readonly eager?: number;
  /** The call named in errors, e.g. 'Comm.dup' (default 'allocateContextId'). */
  readonly call?: string;
  /**
   * The priority's second key: the endpoint of the parent group's first member (the low group's
   * for a merge), the same at every participant (see the file header). Default 0.
   */
  readonly leader?: number;
}

/** Phases of an allocation (gcn_state). */
export const ALLOCATION_PHASE = {
  START: 0,
  /** Waiting for the eager allreduce (Listing 1.2). */
  EAGER: 1,
  /** Waiting for the initial barrier (Listing 1.1, line 13). */
  SYNC: 2,
  /** Waiting for a base allreduce round (Listing 1.1, lines 14-42). */
  BASE: 3,
  DONE: 4,
  FAILED: 5,
} as const;
export type AllocationPhase = (typeof ALLOCATION_PHASE)[keyof typeof ALLOCATION_PHASE];

/** What a driver does next: run a collective and step again with its result, or stop. */
export type AllocationStep =
  | { readonly kind: 'allreduce'; readonly words: Uint32Array }
  | { readonly kind: 'barrier' }
  | { readonly kind: 'done'; readonly contextId: number }
  | { readonly kind: 'failed'; readonly error: MPIError };

/** The per-call state of one allocation (the thread-private variables of Listing 1.1). */
export class ContextIdAllocation {
  readonly parentContextId: number;
  /** The priority's second key (ContextIdOptions.leader). */
  readonly leader: number;
  readonly tag: number;
  readonly call: string;
  /** Listing 1.2 replaces the barrier. */
  readonly isEager: boolean;
  /** Any synchronization before the loop (false only for 'original'). */
  readonly isSynchronized: boolean;
  phase: AllocationPhase = ALLOCATION_PHASE.START;
  /** i_own_the_mask: this call owns the base segment (mask_in_use set by it). */
  ownsMask = false;
  /** i_own_eager_mask. */
  ownsEagerMask = false;
  /** The result, once DONE. */
  contextId = -1;
  /** Base allreduce rounds run so far (retries = baseRounds - 1). */
  baseRounds = 0;
  /** Collectives run so far (barriers + allreduces): a logical cost, for tests and stats. */
  collectives = 0;

  /**
   * @param parentContextId the parent communicator's context id (priority, first key)
   * @param tag the creation's tag (priority, second key): createGroup's user tag; collectivePriorityTag(sequence) for comm-collective creations (context-id-collectives.ts)
   * @param options algo, eager, the call to name in errors and the priority's leader
   */
  constructor(parentContextId: number, tag: number, options: ContextIdOptions = {}) {
    this.parentContextId = parentContextId;
    this.leader = options.leader ?? 0;
    this.tag = tag;
    this.call = options.call ?? 'allocateContextId';
    this.isSynchronized = (options.algo ?? 'new') === 'new';
    this.isEager = this.isSynchronized && (options.eager ?? 1) !== 0;
  }
}

/**
 * Advances an allocation by one stage. Call with `state.mutex` held; never
 * blocks. `result` is the result of the collective the previous step asked
 * for (null for the first step and after a barrier).
 */
export function stepAllocation(state: ContextIdState, alloc: ContextIdAllocation, result: Uint32Array | null): AllocationStep {
  switch (alloc.phase) {
    case ALLOCATION_PHASE.START:
      if (alloc.isEager) return enterEager(state, alloc);
      if (alloc.isSynchronized) {
        alloc.phase = ALLOCATION_PHASE.SYNC;
        alloc.collectives++;
        return BARRIER;
      }
      return enterBase(state, alloc);
    case ALLOCATION_PHASE.EAGER:
      return leaveEager(state, alloc, result!);
    case ALLOCATION_PHASE.SYNC:
      return enterBase(state, alloc);
    case ALLOCATION_PHASE.BASE:
      return leaveBase(state, alloc, result!);
    default:
      assert(alloc.phase === ALLOCATION_PHASE.DONE, 'no step after an allocation failed');
      return { kind: 'done', contextId: alloc.contextId };
  }
}

/**
 * Undoes what an allocation holds when its collective failed (a peer died, the
 * job aborts): releases the segments it owns and its priority. Call with the
 * mutex held. The allocation is FAILED afterwards.
 */
export function abandonAllocation(state: ContextIdState, alloc: ContextIdAllocation): void {
  if (alloc.ownsEagerMask) state.eagerMaskInUse = false;
  if (alloc.ownsMask) state.maskInUse = false;
  alloc.ownsEagerMask = false;
  alloc.ownsMask = false;
  releasePriority(state, alloc);
  alloc.phase = ALLOCATION_PHASE.FAILED;
}

const BARRIER: AllocationStep = { kind: 'barrier' };

/** Listing 1.2, lines 8-16: own the eager segment if free, else contribute zeros. */
function enterEager(state: ContextIdState, alloc: ContextIdAllocation): AllocationStep {
  const words = new Uint32Array(state.eagerWords);
  if (!state.eagerMaskInUse) {
    state.eagerMaskInUse = true;
    alloc.ownsEagerMask = true;
    state.copyMask(0, state.eagerWords, words);
  }
  alloc.phase = ALLOCATION_PHASE.EAGER;
  alloc.collectives++;
  return { kind: 'allreduce', words };
}

/** Listing 1.2, lines 17-22: the owner takes the lowest common eager bit; otherwise on to the base loop. */
function leaveEager(state: ContextIdState, alloc: ContextIdAllocation, result: Uint32Array): AllocationStep {
  if (alloc.ownsEagerMask) {
    state.eagerMaskInUse = false;
    alloc.ownsEagerMask = false;
    const id = state.takeLowest(result, 0, state.eagerWords);
    if (id >= 0) return finish(alloc, id);
  }
  return enterBase(state, alloc);
}

/** Listing 1.1, lines 15-30: update the priority, own the base segment if free and ours, else zeros. */
function enterBase(state: ContextIdState, alloc: ContextIdAllocation): AllocationStep {
  if (isBefore(alloc, state.lowestContextId, state.lowestLeader, state.lowestTag)) {
    state.lowestContextId = alloc.parentContextId;
    state.lowestLeader = alloc.leader;
    state.lowestTag = alloc.tag;
  }
  const first = baseFirstWord(state, alloc);
  const count = state.maskWords - first;
  // The extra last word is MPICH's ALL_OWN_MASK_FLAG: 1 at an owner, so after
  // the AND it is 1 exactly when every participant owned its mask this round.
  const words = new Uint32Array(count + 1);
  if (!state.maskInUse && hasPriority(state, alloc)) {
    state.maskInUse = true;
    alloc.ownsMask = true;
    state.copyMask(first, state.maskWords, words);
    words[count] = 1;
  }
  alloc.phase = ALLOCATION_PHASE.BASE;
  alloc.baseRounds++;
  alloc.collectives++;
  return { kind: 'allreduce', words };
}

/** Listing 1.1, lines 31-42, plus MPICH's exhaustion check; then the next round if needed. */
function leaveBase(state: ContextIdState, alloc: ContextIdAllocation, result: Uint32Array): AllocationStep {
  if (!alloc.ownsMask) return enterBase(state, alloc); // we contributed zeros: nobody can have succeeded
  const first = baseFirstWord(state, alloc);
  const count = state.maskWords - first;
  const id = state.takeLowest(result, first, count);
  state.maskInUse = false;
  alloc.ownsMask = false;
  if (id >= 0) {
    releasePriority(state, alloc);
    return finish(alloc, id);
  }
  if (result[count] === 1) {
    // Every participant offered its whole base segment and no bit is common: out of ids.
    releasePriority(state, alloc);
    alloc.phase = ALLOCATION_PHASE.FAILED;
    return exhausted(state, alloc);
  }
  return enterBase(state, alloc);
}

function finish(alloc: ContextIdAllocation, contextId: number): AllocationStep {
  alloc.contextId = contextId;
  alloc.phase = ALLOCATION_PHASE.DONE;
  return { kind: 'done', contextId };
}

function exhausted(state: ContextIdState, alloc: ContextIdAllocation): AllocationStep {
  const inUse = state.countInUse();
  const freeHere = state.countFree();
  const error = mpiError(
    ERR_OTHER,
    alloc.call,
    `no free context id: ${inUse} communicators in use at this process, ${freeHere} ids free here but none free at every ` +
      `member of the new communicator; free some communicators`,
  );
  return { kind: 'failed', error };
}

/** Lines 36-38: give up the priority if it is ours. */
function releasePriority(state: ContextIdState, alloc: ContextIdAllocation): void {
  if (hasPriority(state, alloc)) {
    state.lowestContextId = NO_PRIORITY;
    state.lowestLeader = NO_PRIORITY;
    state.lowestTag = NO_PRIORITY;
  }
}

/** The allocation holds the process's priority (its three keys are the lowest). */
function hasPriority(state: ContextIdState, alloc: ContextIdAllocation): boolean {
  return state.lowestContextId === alloc.parentContextId && state.lowestLeader === alloc.leader && state.lowestTag === alloc.tag;
}

/** <parent, leader, tag> of `alloc` orders before the given keys (lexicographically). */
function isBefore(alloc: ContextIdAllocation, parent: number, leader: number, tag: number): boolean {
  if (alloc.parentContextId !== parent) return alloc.parentContextId < parent;
  if (alloc.leader !== leader) return alloc.leader < leader;
  return alloc.tag < tag;
}

/** The base loop skips the eager segment in eager mode (Listing 1.2's change to line 23). */
function baseFirstWord(state: ContextIdState, alloc: ContextIdAllocation): number {
  return alloc.isEager ? state.eagerWords : 0;
}
