/**
 * MPI.init / MPI.finalize (MPI.abort is abort.ts, re-exported here) and the process-level queries: the
 * argument and state checks, then the runtime bootstrap does the work
 * (runtime/bootstrap.ts: settings, wire-up, device, predefined objects; and
 * back down at finalize). This file hands the bootstrap the API objects it
 * makes and binds (API_PARTS).
 */
import os from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { ERR_ARG, ERR_OTHER, mpiError } from '../util/index.ts';
import { abort } from './abort.ts';
import { THREAD_LEVELS, type ThreadLevel } from './constants.ts';
import {
  finishProcess, isInitialized, runtime, startProcess, startWorkerThread, workerBoot, type ApiParts,
} from '../runtime/index.ts';
import { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE, setupPredefinedComms, attachPredefinedComms, bindPredefinedComms } from './predefined-comms.ts';
import { reviveWorkerData } from './revive.ts';
import { joinParent } from './dynamic.ts';
import { destroyCommRecord } from './comm.ts';
import { deleteAllAttrs } from './attributes.ts';
import { setupPredefinedTypes } from './datatype.ts';
import { setupPredefinedOps } from './op.ts';
import { liveObjects, messageTotals } from './introspection.ts';
import { lifecycleCall } from './profile-hooks.ts';
import { processPeerBytes } from '../device/index.ts';

/** api/trace-threads.ts (and the recorder, trace-recorder.ts), loaded only under mpiexec --trace. */
let traceRecorder: typeof import('./trace-threads.ts') | null = null;

/** The API objects the bootstrap makes and binds around a thread's runtime. */
const API_PARTS: ApiParts = {
  createPredefined: (objects, processes, endpointsPerProcess, firstEndpoint, worldFirst) => ({
    predefined: setupPredefinedComms(objects, processes, endpointsPerProcess, firstEndpoint, worldFirst),
    predefinedObjects: [...setupPredefinedTypes(objects), ...setupPredefinedOps(objects)],
  }),
  attachPredefined: (boot, processes, endpointsPerProcess, firstEndpoint, worldFirst) => {
    attachPredefinedComms(boot.predefined, processes, endpointsPerProcess, firstEndpoint, boot.endpoint, worldFirst);
    const types = setupPredefinedTypes(null, boot.predefinedObjects);
    setupPredefinedOps(null, boot.predefinedObjects.slice(types.length));
  },
  destroyComm: destroyCommRecord,
  bindPredefined: bindPredefinedComms,
  reviveWorkerData,
  worldBarrier: () => COMM_WORLD.barrier(),
  liveObjects,
  messageTotals,
  counters: (rt) => {
    const t = rt.device.transport;
    const channels = t?.channelStats();
    // Every thread's and engine's connections, not only this thread's (device/peer-bytes.ts).
    return { ...messageTotals(rt), collectives: COMM_WORLD._collSeq >>> 0, ...(channels === undefined ? {} : { channels }), bytesToProcess: processPeerBytes(rt.device.shared) };
  },
  abort: (code, where) => abort(code, { name: where } as typeof COMM_WORLD),
  startTrace: async (maxEvents, takeOrder) => {
    traceRecorder = await import('./trace-threads.ts');
    traceRecorder.startTrace(maxEvents, takeOrder);
  },
  takeTraces: async () => (traceRecorder === null ? null : await traceRecorder.takeTraces()),
};

/**
 * Initializes MPI. Under mpiexec it joins the job; run directly it is a job of
 * size 1; in a thread started with MPI.Worker it joins its parent's process.
 * @param opts.threadLevel default 'single'
 * @returns the thread level provided
 * @throws MPIError(ERR_OTHER) if called twice; MPIError(ERR_ARG) for a bad option or setting.
 * @example await MPI.init({ threadLevel: 'multiple' });
 */
export function init(opts: { threadLevel?: ThreadLevel } = {}): Promise<ThreadLevel> {
  // MPI.profile's hooks see init and finalize (module functions, not methods: profile-hooks.ts).
  return lifecycleCall('MPI.init', [opts], () => initProcessOrThread(opts));
}

async function initProcessOrThread(opts: { threadLevel?: ThreadLevel }): Promise<ThreadLevel> {
  if (isInitialized()) throw mpiError(ERR_OTHER, 'init', 'MPI.init has already been called in this thread');
  const level = opts.threadLevel ?? 'single';
  if (!THREAD_LEVELS.includes(level)) {
    throw mpiError(ERR_ARG, 'init', `threadLevel ${String(level)} is invalid: expected one of ${THREAD_LEVELS.join(', ')}`);
  }
  const boot = isMainThread ? null : workerBoot();
  if (boot === null) {
    await startProcess(level, API_PARTS);
    // A spawned process: its intercommunicator to the parents, collective over its COMM_WORLD (MPI.getParent).
    await joinParent();
    return level;
  }
  if (boot.threadLevel !== 'serialized' && boot.threadLevel !== 'multiple') {
    throw mpiError(ERR_OTHER, 'init', `the process was initialized with threadLevel '${boot.threadLevel}': call MPI.init({ threadLevel: 'multiple' }) (or 'serialized') in the main thread to use MPI from worker threads`);
  }
  return startWorkerThread(boot, API_PARTS);
}

/**
 * Finalizes MPI: collective over COMM_WORLD; every later MPI call throws MPIError(ERR_OTHER).
 * Called once per process, by its main thread, after its worker threads made their last MPI call.
 */
export function finalize(): Promise<void> {
  return lifecycleCall('MPI.finalize', [], finalizeProcess);
}

async function finalizeProcess(): Promise<void> {
  const rt = runtime('finalize');
  if (!isMainThread) throw mpiError(ERR_OTHER, 'finalize', 'worker threads never call MPI.finalize(): the main thread does, after the workers are done');
  // MPI 4.0 11.2.2: finalize first frees COMM_SELF's attributes (their delete callbacks run, last set first), then COMM_WORLD's.
  deleteAllAttrs(COMM_SELF, COMM_SELF._handle);
  deleteAllAttrs(COMM_WORLD, COMM_WORLD._handle);
  await finishProcess(rt, API_PARTS);
}

export function queryThread(): ThreadLevel {
  return runtime('queryThread').threadLevel;
}

const t0 = performance.timeOrigin;
/** Seconds since an arbitrary origin, high resolution. */
export function wtime(): number {
  return (t0 + performance.now()) / 1000;
}
/** Resolution of wtime() in seconds. */
export function wtick(): number {
  return 1e-9;
}
export function getProcessorName(): string {
  return os.hostname();
}

export { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE };
export { abort };
/** Whether MPI.init / MPI.finalize have been called in this thread (the runtime layer keeps the state). */
export { isInitialized, isFinalized } from '../runtime/index.ts';
