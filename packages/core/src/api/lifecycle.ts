/**
 * MPI.init / MPI.finalize / MPI.abort and the process-level queries.
 *
 * init: settings -> wire-up client (unless singleton) -> device and transport
 * -> publish this process's address, fence, start -> predefined communicators.
 * finalize: a barrier over COMM_WORLD, then the transport closes gracefully
 * and the launcher is told; every later call throws ERR_OTHER.
 */
import os from 'node:os';
import { resolveSettings, readJobEnv, type Settings } from '../config/index.ts';
import { Device } from '../device/index.ts';
import { ContextIdState } from '../comm/index.ts';
import { createLogger } from '../log/index.ts';
import { connectPmi, type PmiClient } from '../pmi/index.ts';
import type { TransportFactory } from '../transport/index.ts';
import { ERR_ARG, ERR_OTHER, mpiError } from '../util/index.ts';
import { THREAD_LEVELS, type ThreadLevel } from './constants.ts';
import { blockedIn } from './blocked.ts';
import { isInitialized, runtime, setRuntime, type RuntimeState } from './runtime.ts';
import { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE, setupPredefinedComms } from './predefined-comms.ts';

let threadLevel: ThreadLevel = 'single';

/**
 * Initializes MPI. Under mpiexec it joins the job; run directly it is a job of size 1.
 * @param opts.threadLevel default 'single'
 * @returns the thread level provided
 * @throws MPIError(ERR_OTHER) if called twice; MPIError(ERR_ARG) for a bad option or setting.
 * @example await MPI.init({ threadLevel: 'multiple' });
 */
export async function init(opts: { threadLevel?: ThreadLevel } = {}): Promise<ThreadLevel> {
  if (isInitialized()) throw mpiError(ERR_OTHER, 'init', 'MPI.init has already been called in this process');
  const level = opts.threadLevel ?? 'single';
  if (!THREAD_LEVELS.includes(level)) {
    throw mpiError(ERR_ARG, 'init', `threadLevel ${String(level)} is invalid: expected one of ${THREAD_LEVELS.join(', ')}`);
  }
  let settings: Settings;
  try {
    settings = resolveSettings();
  } catch (e) {
    throw mpiError(ERR_ARG, 'init', (e as Error).message);
  }
  const job = readJobEnv();
  const rank = job?.rank ?? 0;
  const size = job?.size ?? 1;
  const log = createLogger(settings.logLevel, rank);
  let pmi: PmiClient | null = null;
  if (job !== null) {
    pmi = await connectPmi(job);
    pmi.setRollCallHandler(blockedIn);
    pmi.setLostHandler((err) => {
      log.error({ err: err.message }, 'lost the launcher: exiting');
      process.exit(1);
    });
  }
  let factory: TransportFactory | null = null;
  if (size > 1) {
    const mod = (await import(settings.transport)) as { createTransport?: TransportFactory };
    if (typeof mod.createTransport !== 'function') {
      throw mpiError(ERR_ARG, 'init', `transport module ${settings.transport} does not export createTransport`);
    }
    factory = mod.createTransport;
  }
  const device = new Device({
    process: rank,
    processCount: size,
    endpointsPerProcess: settings.endpoints,
    eagerLimit: settings.eagerLimit,
    matching: settings.matching,
    requestSlots: settings.requestSlots,
    channels: settings.channels,
    jobKey: job?.jobKey ?? '',
    listenHost: job?.listenHost ?? '127.0.0.1',
    transportFactory: factory,
    log: log.child({ mod: 'device' }),
  });
  const address = await device.listen();
  if (pmi !== null) {
    if (address !== null) pmi.put(`tcp:${rank}`, address);
    await pmi.fence();
    if (size > 1) {
      const addresses = await Promise.all(Array.from({ length: size }, (_, p) => pmi!.get(`tcp:${p}`)));
      device.start(addresses);
    }
  }
  const progress = settings.progress === 'auto' ? (level === 'multiple' ? 'threads' : 'inline') : settings.progress;
  const state: RuntimeState = {
    device,
    settings,
    job,
    pmi,
    log,
    threadLevel: level,
    progress,
    // The predefined communicators' ids (0..3) and the internal ones (4..7) are reserved in every mask.
    contextIds: Array.from({ length: settings.endpoints }, () => ContextIdState.create()),
    endpoint: device.firstEndpoint,
    checkActive: () => undefined,
  };
  setRuntime(state);
  setupPredefinedComms(device.objects, size, settings.endpoints, device.firstEndpoint);
  threadLevel = level;
  pmi?.reportInitialized();
  log.debug({ size, channels: settings.channels, matching: settings.matching, progress }, 'initialized');
  return level;
}

/**
 * Finalizes MPI: collective over COMM_WORLD; every later MPI call throws MPIError(ERR_OTHER).
 * Called once per process, by its main thread.
 */
export async function finalize(): Promise<void> {
  const rt = runtime('finalize');
  await COMM_WORLD.barrier();
  const st = rt.device.stats;
  await rt.device.close();
  setRuntime(null);
  if (rt.pmi !== null) {
    await rt.pmi.reportFinalized({
      messagesSent: st.messagesSent,
      messagesReceived: st.messagesReceived,
      bytesSent: st.bytesSent,
      bytesReceived: st.bytesReceived,
    });
    await rt.pmi.close();
  }
}

/**
 * Ends every process of the job; mpiexec exits with `errorcode`.
 * @example MPI.abort(3);
 */
export function abort(errorcode = 1, comm = COMM_WORLD): never {
  const code = Number.isInteger(errorcode) ? errorcode & 0xff : 1;
  const pmi = isInitialized() ? safePmi() : null;
  const where = comm?.name ?? 'COMM_WORLD';
  if (pmi !== null) void pmi.abort(code, `MPI.abort(${errorcode}) on ${where}`);
  process.stderr.write(`MPI.abort(${errorcode}) called on ${where}\n`);
  process.exit(code === 0 ? 1 : code);
}

function safePmi(): PmiClient | null {
  try {
    return runtime('abort').pmi;
  } catch {
    return null;
  }
}

export function queryThread(): ThreadLevel {
  runtime('queryThread');
  return threadLevel;
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
