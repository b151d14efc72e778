/**
 * What one thread owns between its MPI.init and MPI.finalize (a ThreadRuntime),
 * and the checks every call makes first (ERR_OTHER before init or after finalize).
 *
 * One slot per thread. Every worker_thread loads its own instance of every
 * module, so the module-level slot below is this thread's alone: the main
 * thread's ThreadRuntime and each MPI.Worker's never meet. What threads share
 * lives in the SharedArrayBuffers that the device, the context-id states and
 * the roll-call table view. The point of the class is that what a thread owns
 * is one named object: init builds it, an MPI call reaches it through the slot
 * once (runtime(call)) and passes it, or the part it needs, on from there;
 * finalize empties the slot.
 */
import { ERR_OTHER, mpiError } from '../util/index.ts';
import type { Device, DirectRoute, Engines } from '../device/index.ts';
import type { ContextIdState } from '../comm/index.ts';
import type { Settings, JobEnv, Progress } from '../config/index.ts';
import type { PmiClient } from '../pmi/index.ts';
import type { Logger } from '../log/index.ts';
import type { ThreadLevel } from './thread-level.ts';
import type { WaitPoll } from './wait-poll.ts';
import type { BlockedCalls } from './blocked.ts';

/** Everything a ThreadRuntime is made of; init gathers it. */
export interface ThreadRuntimeParts {
  readonly device: Device;
  readonly settings: Settings;
  readonly job: JobEnv | null;
  /** the wire-up client: the main thread's; null in worker threads and without mpiexec */
  readonly pmi: PmiClient | null;
  readonly log: Logger;
  readonly threadLevel: ThreadLevel;
  readonly progress: Progress;
  /** this thread's endpoint (rank in COMM_ENDPOINTS); MPI.threadAttach moves it */
  endpoint: number;
  /** context-id state (mask, in shared memory) of each endpoint of this process, index = endpoint - first endpoint */
  readonly contextIds: readonly ContextIdState[];
  /** object-table handles of COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE */
  readonly predefined: readonly number[];
  /** the predefined datatypes' then ops' handles (MPI.Worker's boot record hands them on) */
  readonly predefinedObjects: readonly number[];
  /** how the user threads of this process send directly (device.ts DirectRoute), for MPI.Worker's boot record */
  readonly directRoutes: readonly DirectRoute[];
  /** the channel engines this thread started (the main thread in threads progress), closed at finalize */
  readonly engines: Engines | null;
  /** how this thread's blocking calls wait (wait-poll.ts) */
  readonly waitPoll: WaitPoll;
  /** what this thread is blocked in, for the roll-call (blocked.ts); tells waitPoll of every blocking call */
  readonly blocked: BlockedCalls;
}

/** This thread's MPI state, from its init to finalize: its parts (the interface merges into the class). */
// The fields are listed once, in ThreadRuntimeParts; the constructor takes them as they are.
export interface ThreadRuntime extends ThreadRuntimeParts {}
export class ThreadRuntime {
  constructor(parts: ThreadRuntimeParts) {
    Object.assign(this, parts);
  }
}

/** This thread's slot (see the header): its ThreadRuntime between init and finalize. */
let current: ThreadRuntime | null = null;
let finalized = false;

export function isInitialized(): boolean {
  return current !== null || finalized;
}

export function isFinalized(): boolean {
  return finalized;
}

/** Fills this thread's slot at init; null at finalize. */
export function setRuntime(rt: ThreadRuntime | null): void {
  if (rt === null && current !== null) finalized = true;
  current = rt;
}

/** This thread's live state; throws MPIError(ERR_OTHER) naming `call` before init or after finalize. */
export function runtime(call = 'MPI'): ThreadRuntime {
  if (current === null) throw notActive(call);
  return current;
}

export function notActive(call: string): Error {
  return finalized
    ? mpiError(ERR_OTHER, call, 'MPI has been finalized: no MPI call is allowed after MPI.finalize()')
    : mpiError(ERR_OTHER, call, 'MPI is not initialized: call await MPI.init() first');
}

/** This thread's live state, or null before init and after finalize (for objects that may be made before init). */
export function runtimeOrNull(): ThreadRuntime | null {
  return current;
}

export function checkActive(call: string): void {
  if (current === null) throw notActive(call);
}
