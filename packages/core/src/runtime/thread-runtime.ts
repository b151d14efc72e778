/**
 * The process's MPI state between init and finalize, and the checks every
 * call makes first (ERR_OTHER before init or after finalize).
 */
import { ERR_OTHER, mpiError } from '../util/index.ts';
import type { Device } from '../device/index.ts';
import type { ContextIdState } from '../comm/index.ts';
import type { Settings, JobEnv } from '../config/index.ts';
import type { PmiClient } from '../pmi/index.ts';
import type { Logger } from '../log/index.ts';
import type { ThreadLevel } from './thread-level.ts';

export interface RuntimeState {
  readonly device: Device;
  readonly settings: Settings;
  readonly job: JobEnv | null;
  readonly pmi: PmiClient | null;
  readonly log: Logger;
  readonly threadLevel: ThreadLevel;
  readonly progress: 'inline' | 'threads' | 'engines';
  /** context-id state (mask, in shared memory) of each endpoint of this process, index = endpoint - first endpoint */
  readonly contextIds: readonly ContextIdState[];
  /** object-table handles of COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE */
  readonly predefined: readonly number[];
  /** this thread's endpoint (rank in COMM_ENDPOINTS) */
  endpoint: number;
  checkActive(call: string): void;
}

let state: RuntimeState | null = null;
let finalized = false;

export function isInitialized(): boolean {
  return state !== null || finalized;
}

export function isFinalized(): boolean {
  return finalized;
}

export function setRuntime(s: RuntimeState | null): void {
  if (s === null && state !== null) finalized = true;
  state = s;
}

/** The live state; throws MPIError(ERR_OTHER) naming `call` before init or after finalize. */
export function runtime(call = 'MPI'): RuntimeState {
  if (state === null) throw notActive(call);
  return state;
}

export function notActive(call: string): Error {
  return finalized
    ? mpiError(ERR_OTHER, call, 'MPI has been finalized: no MPI call is allowed after MPI.finalize()')
    : mpiError(ERR_OTHER, call, 'MPI is not initialized: call await MPI.init() first');
}

/** The live state, or null before init and after finalize (for objects that may be made before init). */
export function runtimeOrNull(): RuntimeState | null {
  return state;
}

export function checkActive(call: string): void {
  if (state === null) throw notActive(call);
}
