/**
 * What an MPI.Worker thread receives to join its parent's MPI process: the
 * shared state, the settings, the job, the parent's endpoint, and the user's
 * workerData with MPI objects made transferable (revive.ts). It travels in
 * the Node Worker's workerData under one key.
 */
import { workerData } from 'node:worker_threads';
import type { JobEnv, Progress, Settings } from '../config/index.ts';
import type { DirectRoute, SharedBuffers } from '../device/index.ts';
import type { ThreadLevel } from './thread-level.ts';
import type { WorkerPeersBoot } from './worker-peers.ts';

export const BOOT_KEY = '__tsmpi_worker_boot__';

export interface WorkerBoot {
  /** the thread id its parent took for it (SharedState.allocateThreadId), given back when it ends */
  readonly threadId: number;
  readonly shared: SharedBuffers;
  readonly settings: Settings;
  readonly job: JobEnv | null;
  readonly threadLevel: ThreadLevel;
  readonly progress: Progress;
  /** the channels this thread sends on over connections of its own (device.ts DirectRoute); empty: none */
  readonly direct: readonly DirectRoute[];
  /** the addresses of processes that joined the job later, and how to hear of more (worker-peers.ts); null: the process has one MPI thread */
  readonly peers: WorkerPeersBoot | null;
  readonly endpoint: number;
  readonly contextIds: readonly SharedArrayBuffer[];
  readonly predefined: readonly number[];
  /** the predefined datatypes' then ops' handles */
  readonly predefinedObjects: readonly number[];
  readonly userData: unknown;
  /** the intercommunicator to the parents in a spawned process (MPI.getParent), dehydrated; null otherwise */
  readonly parent: unknown;
}

/** This thread's boot record, or null (not started by MPI.Worker). */
export function workerBoot(): WorkerBoot | null {
  const wd = workerData as Record<string, unknown> | null | undefined;
  return wd !== null && typeof wd === 'object' && BOOT_KEY in wd ? (wd[BOOT_KEY] as WorkerBoot) : null;
}
