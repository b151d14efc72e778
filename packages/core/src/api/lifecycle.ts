/**
 * MPI.init / MPI.finalize / MPI.abort and the process-level queries.
 *
 * init (main thread): settings -> wire-up client (unless singleton) -> shared
 * state -> device; the channels' transports run on this thread (inline
 * progress) or in one engine worker per channel (threads progress, the
 * default for threadLevel 'multiple'); publish the listening addresses, fence,
 * connect lazily -> predefined communicators.
 * init (in an MPI.Worker): attach to the process's shared state (worker-boot.ts).
 * finalize: a barrier over COMM_WORLD, then the transports close gracefully
 * and the launcher is told; every later call throws ERR_OTHER.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread } from 'node:worker_threads';
import { resolveSettings, takeJobEnv, type Settings, type JobEnv } from '../config/index.ts';
import { Device, Engines, SharedState, endpointReceivePlan, resolveEndpointReceive, type EndpointReceivePlan, type DirectRoute, type EngineBoot } from '../device/index.ts';
import { ContextIdState } from '../comm/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { connectPmi, type PmiClient } from '../pmi/index.ts';
import { secureTransportFactory, type ReaderSocketName, type TransportFactory } from '../transport/index.ts';
import { ERR_ARG, ERR_OTHER, mpiError, schedYield } from '../util/index.ts';
import { THREAD_LEVELS, type ThreadLevel } from './constants.ts';
import {
  BlockedCalls, BLOCKED_SLOT_WORDS, INIT_CALL, pollPolicy, WaitPoll, type WaitPollOptions, isInitialized, runtime, setRuntime, ThreadRuntime, workerBoot, type WorkerBoot,
} from '../runtime/index.ts';
import { MAX_THREADS } from '../device/index.ts';
import { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE, setupPredefinedComms, attachPredefinedComms, bindLeanPredefined } from './predefined-comms.ts';
import { reviveWorkerData } from './revive.ts';
import { destroyCommRecord } from './comm.ts';
import { setupPredefinedTypes } from './datatype.ts';
import { setupPredefinedOps } from './op.ts';
import { liveObjects, messageTotals } from './introspection.ts';

/**
 * Direct sends (device.ts) open C connections per user thread to every other process at the
 * thread's init; beyond this many peers the threads hand their sends to the channels' hosts
 * instead, so a thread's connections (and its init) stay bounded.
 */
const DIRECT_MAX_PEERS = 64;

/** How long a failed engine waits for the launcher to acknowledge which peer loss caused the failure. */
const PEER_LOST_REPORT_MS = 500;

/**
 * Initializes MPI. Under mpiexec it joins the job; run directly it is a job of
 * size 1; in a thread started with MPI.Worker it joins its parent's process.
 * @param opts.threadLevel default 'single'
 * @returns the thread level provided
 * @throws MPIError(ERR_OTHER) if called twice; MPIError(ERR_ARG) for a bad option or setting.
 * @example await MPI.init({ threadLevel: 'multiple' });
 */
export async function init(opts: { threadLevel?: ThreadLevel } = {}): Promise<ThreadLevel> {
  if (isInitialized()) throw mpiError(ERR_OTHER, 'init', 'MPI.init has already been called in this thread');
  const level = opts.threadLevel ?? 'single';
  if (!THREAD_LEVELS.includes(level)) {
    throw mpiError(ERR_ARG, 'init', `threadLevel ${String(level)} is invalid: expected one of ${THREAD_LEVELS.join(', ')}`);
  }
  const boot = isMainThread ? null : workerBoot();
  if (boot !== null) return initWorkerThread(boot);
  let settings: Settings;
  try {
    settings = resolveSettings();
  } catch (e) {
    throw mpiError(ERR_ARG, 'init', (e as Error).message);
  }
  // The key leaves process.env here: children this rank starts do not inherit it.
  const job = takeJobEnv();
  const rank = job?.rank ?? 0;
  const size = job?.size ?? 1;
  const log = createLogger(settings.logLevel, rank);
  // This thread's waiting and roll-call state, before the roll-call handler that reads it.
  const waitPoll = new WaitPoll();
  const blocked = new BlockedCalls(waitPoll);
  let pmi: PmiClient | null = null;
  if (job !== null) {
    pmi = await connectPmi(job);
    pmi.setRollCallHandler(() => blocked.report());
    pmi.setLostHandler((err) => {
      log.error({ err: err.message }, 'lost the launcher: exiting');
      process.exit(1);
    });
  }
  const multithreaded = level === 'serialized' || level === 'multiple';
  const progress = settings.progress === 'auto' ? (level === 'multiple' ? 'threads' : 'inline') : settings.progress;
  const receiveAsked = resolveEndpointReceive(settings.endpointReceive, settings.endpoints);
  const receivePlan = endpointReceivePlan(receiveAsked, progress, size, job?.localSize ?? size);
  logEndpointReceive(settings, receiveAsked, progress, receivePlan, log);
  const shared = SharedState.create({
    processCount: size,
    endpointsPerProcess: settings.endpoints,
    channels: settings.channels,
    matching: settings.matching,
    requestSlots: settings.requestSlots,
    multithreaded: multithreaded || progress !== 'inline',
    blockedSlotBytes: BLOCKED_SLOT_WORDS * 4,
    // The route table exists only where a reader may serve (docs/adr/0019); the default allocates nothing.
    endpointReaders: receivePlan.path === 'thread',
  });
  const allChannels = Array.from({ length: settings.channels }, (_, c) => c);
  const useEngines = progress !== 'inline' && size > 1;
  const transportFactory = size > 1 ? await loadTransport(settings) : null;
  // docs/adr/0019: the main thread never reads an endpoint, but it sends to remote readers like any thread.
  const readerSocketName = shared.routes !== null && transportFactory !== null ? await loadReaderSocketName(settings) : null;
  const device = new Device(
    {
      ...deviceBase(settings, job, rank, size),
      log: log.child({ mod: 'device' }),
      transportFactory,
      threadId: 0,
      hosted: useEngines ? [] : allChannels,
      statsRow: 0,
      // Receive lanes only where this thread is the process's one MPI thread and hosts every channel (docs/adr/0020).
      lanes: settings.lean === 'on' && !multithreaded && progress === 'inline',
      ...(readerSocketName === null ? {} : { readerSocketName }),
    },
    shared,
  );
  if (pmi !== null) {
    const reporter = pmi;
    device.onFatal = (_err, lostProcess) => {
      if (lostProcess !== null) reporter.reportPeerLost(lostProcess).catch(() => undefined);
    };
  }
  let engines: Engines | null = null;
  let directRoutes: readonly DirectRoute[];
  if (useEngines) {
    const started = await startEngines(shared, settings, job!, pmi!, rank, size, progress === 'threads' && settings.wait === 'poll' ? settings.threadPollMs : 0);
    engines = started.engines;
    // Threads progress: every user thread, this one included, sends on connections of its own to the engines.
    directRoutes = progress === 'threads' && size - 1 <= DIRECT_MAX_PEERS ? started.perChannel.map((addresses, c) => ({ channels: [c], addresses })) : [];
    device.start(null, directRoutes);
    await device.openDirect();
  } else {
    const address = await device.listen();
    if (pmi !== null) {
      if (address !== null) pmi.put(`tcp:${rank}`, address);
      await pmi.fence();
    }
    const addresses = size > 1 ? await Promise.all(Array.from({ length: size }, (_, p) => pmi!.get(`tcp:${p}`))) : null;
    // Inline progress: this thread hosts every channel; worker threads send on their own connections to the peers' main threads.
    directRoutes = addresses === null || size - 1 > DIRECT_MAX_PEERS ? [] : [{ channels: allChannels, addresses }];
    device.start(addresses);
  }
  const policy = pollPolicy({ localSize: job?.localSize ?? 1, cores: os.availableParallelism(), spinTurns: settings.waitSpinTurns });
  waitPoll.configure({ ...waitPollOptions(settings, size, log, device, !useEngines), spinTurns: policy.spinTurns });
  // Bulk traffic sleeps only where a poller would take a core from another process of the job.
  if (policy.isOversubscribed) device.onRendezvous = (bytes) => waitPoll.noteRendezvous(bytes);
  if (shared.layout.multithreaded) {
    blocked.attachTable(shared.buffers.blocked, 0, MAX_THREADS);
    shared.watchAbort((code, thread) => abort(code, { name: `COMM_WORLD (from worker thread ${thread})` } as typeof COMM_WORLD));
  }
  const predefined = setupPredefinedComms(shared.objects, size, settings.endpoints, device.firstEndpoint);
  const predefinedObjects = [...setupPredefinedTypes(shared.objects), ...setupPredefinedOps(shared.objects)];
  shared.objects.onDestroy = destroyCommRecord;
  setRuntime(new ThreadRuntime({
    device, settings, job, pmi, log, threadLevel: level, progress, endpoint: device.firstEndpoint,
    contextIds: Array.from({ length: settings.endpoints }, () => ContextIdState.create()),
    predefined, predefinedObjects, directRoutes, engines, waitPoll, blocked,
  }));
  bindLeanPredefined(runtime('init'));
  pmi?.reportInitialized();
  log.debug({ size, channels: settings.channels, matching: settings.matching, progress }, 'initialized');
  return level;
}

/**
 * How blocking calls on this thread wait (wait-poll.ts), with --wait poll and
 * more than one process: a thread that reads the sockets (inline progress's
 * main thread) polls for waitPollMs; a thread whose messages another thread
 * reads (an MPI.Worker, the main thread in threads progress) polls for
 * threadPollMs, draining its completion ring every turn. Only a thread that
 * can yield its core polls.
 */
function waitPollOptions(settings: Settings, size: number, log: Logger, device: Device, readsSockets: boolean): WaitPollOptions {
  const budgetMs = readsSockets ? settings.waitPollMs : settings.threadPollMs;
  if (settings.wait !== 'poll' || size === 1 || budgetMs === 0) return { budgetMs: 0, yieldCore: null };
  const yieldCore = schedYield();
  if (yieldCore === null) log.warn('--wait poll needs sched_yield, which this Node does not offer (node:wasi): blocking calls sleep instead');
  return { budgetMs, yieldCore, onTurn: () => device.poll() };
}

/**
 * endpointReceive (docs/adr/0019, 0021): one info line when a job asks for `thread`, or `auto`
 * chose it (--endpoints 2 or more), saying which path its endpoints' receives take and why.
 * Never an error: the engine path serves every job.
 */
function logEndpointReceive(settings: Settings, asked: 'engine' | 'thread', progress: 'inline' | 'threads' | 'engines', plan: EndpointReceivePlan, log: Logger): void {
  if (asked === 'engine') return;
  if (plan.path === 'engine') {
    log.info({ endpointReceive: settings.endpointReceive, progress, path: 'engine', why: plan.why }, 'endpointReceive thread: receives stay on the engine path');
    return;
  }
  // What is built (docs/adr/0019): eager and rendezvous-request frames of the other processes' threads follow a reader's route.
  const why = 'a worker thread reads the endpoint it attaches to (MPI.threadAttach) while no other thread does; the main thread never reads';
  log.info({ endpointReceive: settings.endpointReceive, progress, path: 'thread', why }, 'endpointReceive thread: worker threads read their endpoints');
}

function deviceBase(settings: Settings, job: JobEnv | null, rank: number, size: number) {
  return {
    process: rank,
    processCount: size,
    endpointsPerProcess: settings.endpoints,
    eagerLimit: settings.eagerLimit,
    channels: settings.channels,
    jobKey: job?.jobKey ?? '',
    listenHost: job?.listenHost ?? '127.0.0.1',
    ...(job?.portRange == null ? {} : { listenPorts: job.portRange }),
    refcount: settings.refcount,
  };
}

async function loadTransport(settings: Settings): Promise<TransportFactory> {
  const mod = (await import(settings.transport)) as { createTransport?: TransportFactory };
  if (typeof mod.createTransport !== 'function') {
    throw mpiError(ERR_ARG, 'init', `transport module ${settings.transport} does not export createTransport`);
  }
  // mpiexec --secure: every transport of this thread runs TLS on its network connections (engines: engine-worker.ts).
  return settings.secure === 'on' ? secureTransportFactory(mod.createTransport) : mod.createTransport;
}

/** The transport module's reader names (interface.ts ReaderSocketName), or null when it has none. */
async function loadReaderSocketName(settings: Settings): Promise<ReaderSocketName | null> {
  const mod = (await import(settings.transport)) as { readerSocketName?: ReaderSocketName };
  return typeof mod.readerSocketName === 'function' ? mod.readerSocketName : null;
}

/** Threads progress: one engine per channel, each publishing its own address; resolves to the engines and every process's address per channel. */
async function startEngines(shared: SharedState, settings: Settings, job: JobEnv, pmi: PmiClient, rank: number, size: number, pollMs: number): Promise<{ engines: Engines; perChannel: string[][] }> {
  const boots: EngineBoot[] = Array.from({ length: settings.channels }, (_, c) => ({
    shared: shared.buffers,
    channel: c,
    transportModule: settings.transport,
    secure: settings.secure === 'on',
    logLevel: settings.logLevel,
    pollMs,
    device: deviceBase(settings, job, rank, size),
  }));
  const engines = await Engines.start(boots, (message, lostProcess) => {
    process.stderr.write(`tsmpi: rank ${rank}: channel engine failed: ${message}\n`);
    // Exit only once the launcher knows which loss caused this (bounded: the launcher may be gone too).
    const told = lostProcess === null ? Promise.resolve() : pmi.reportPeerLost(lostProcess).catch(() => undefined);
    void Promise.race([told, sleep(PEER_LOST_REPORT_MS)]).then(() => process.exit(1));
  });
  engines.addresses.forEach((a, c) => pmi.put(`tcp:${rank}:${c}`, a));
  await pmi.fence();
  const perChannel: string[][] = [];
  for (let c = 0; c < settings.channels; c++) {
    perChannel.push(await Promise.all(Array.from({ length: size }, (_, p) => pmi.get(`tcp:${p}:${c}`))));
    engines.startChannel(c, perChannel[c]!);
  }
  return { engines, perChannel };
}

/** init in an MPI.Worker thread: attach to the process's shared state, on the parent's endpoint. */
async function initWorkerThread(boot: WorkerBoot): Promise<ThreadLevel> {
  if (boot.threadLevel !== 'serialized' && boot.threadLevel !== 'multiple') {
    throw mpiError(ERR_OTHER, 'init', `the process was initialized with threadLevel '${boot.threadLevel}': call MPI.init({ threadLevel: 'multiple' }) (or 'serialized') in the main thread to use MPI from worker threads`);
  }
  const settings = boot.settings;
  const shared = SharedState.attach(boot.shared);
  const threadId = boot.threadId;
  const rank = boot.job?.rank ?? 0;
  const size = boot.job?.size ?? 1;
  const log = createLogger(settings.logLevel, rank).child({ thread: threadId });
  const direct = boot.direct.length > 0 && size > 1;
  // The roll-call shows this thread in MPI.init until it returns (opening its connections may wait for busy peers).
  const waitPoll = new WaitPoll();
  const blocked = new BlockedCalls(waitPoll);
  blocked.attachTable(shared.buffers.blocked, threadId, MAX_THREADS);
  blocked.enter(INIT_CALL, '', null, null);
  // docs/adr/0019: a worker thread may read an endpoint where the process has a route table and the
  // thread has connections of its own (the reader's senders will follow them), if the transport names readers.
  const readerSocketName = direct && shared.routes !== null ? await loadReaderSocketName(settings) : null;
  const device = new Device(
    {
      ...deviceBase(settings, boot.job, rank, size), log: log.child({ mod: 'device' }), transportFactory: direct ? await loadTransport(settings) : null, threadId, hosted: [], statsRow: threadId,
      ...(readerSocketName === null ? {} : { readerSocketName, readsEndpoints: shared.layout.endpointReaders === true }),
    },
    shared,
  );
  device.start(null, boot.direct);
  await device.openDirect();
  // Leaving when the thread's event loop empties (the worker is about to end): its routes to remote
  // readers end with a FIN each, and the endpoint it reads is handed back (both keep the loop alive
  // until done; the next beforeExit finds nothing to do).
  if (readerSocketName !== null) process.on('beforeExit', () => void device.leaveAll('the thread is ending'));
  const policy = pollPolicy({ localSize: boot.job?.localSize ?? 1, cores: os.availableParallelism(), spinTurns: settings.waitSpinTurns });
  waitPoll.configure({ ...waitPollOptions(settings, size, log, device, false), spinTurns: policy.spinTurns });
  attachPredefinedComms(boot.predefined, size, settings.endpoints, device.firstEndpoint, boot.endpoint);
  const types = setupPredefinedTypes(null, boot.predefinedObjects);
  setupPredefinedOps(null, boot.predefinedObjects.slice(types.length));
  shared.objects.onDestroy = destroyCommRecord;
  setRuntime(new ThreadRuntime({
    device, settings, job: boot.job, pmi: null, log, threadLevel: boot.threadLevel, progress: boot.progress, endpoint: boot.endpoint,
    contextIds: boot.contextIds.map((b) => ContextIdState.attach(b)),
    predefined: boot.predefined, predefinedObjects: boot.predefinedObjects, directRoutes: boot.direct, engines: null, waitPoll, blocked,
  }));
  bindLeanPredefined(runtime('init'));
  reviveWorkerData();
  blocked.leave();
  return boot.threadLevel;
}

/**
 * Finalizes MPI: collective over COMM_WORLD; every later MPI call throws MPIError(ERR_OTHER).
 * Called once per process, by its main thread, after its worker threads made their last MPI call.
 */
export async function finalize(): Promise<void> {
  const rt = runtime('finalize');
  if (!isMainThread) throw mpiError(ERR_OTHER, 'finalize', 'worker threads never call MPI.finalize(): the main thread does, after the workers are done');
  await readersHandBack(rt.device);
  await COMM_WORLD.barrier();
  // The finalize-time collection (papers/refcount-gc.txt §V.B): whatever only the collector still holds goes.
  rt.device.lifetime.collect();
  if (rt.log.isLevelEnabled('debug')) rt.log.debug({ liveObjects: liveObjects(rt), gcCycles: rt.device.lifetime.gcCycles() }, 'finalize: objects after the last collection');
  rt.waitPoll.stop();
  // Every thread's and engine's counts, as MPI.stats() gives them (the main thread's row alone
  // misses what engines and worker threads received and sent).
  const totals = messageTotals(rt);
  await rt.device.close();
  if (rt.engines !== null) await rt.engines.close();
  bindLeanPredefined(null);
  setRuntime(null);
  if (rt.pmi !== null) {
    await rt.pmi.reportFinalized(totals);
    await rt.pmi.close();
  }
}

/**
 * docs/adr/0019: every endpoint reader of this process hands back before finalize's barrier, while
 * the other processes still answer its close and send their FINs (after the barrier they may be
 * gone). A reader whose thread is idle hands back at once; one that computes delays finalize.
 */
async function readersHandBack(device: Device): Promise<void> {
  const routes = device.shared.routes;
  if (routes === null) return;
  routes.beginFinalize();
  while (routes.readerCount() > 0) await sleep(5);
}

/**
 * Ends every process of the job; mpiexec exits with `errorcode`.
 * @example MPI.abort(3);
 */
export function abort(errorcode = 1, comm = COMM_WORLD): never {
  const code = Number.isInteger(errorcode) ? errorcode & 0xff : 1;
  const where = comm?.name ?? 'COMM_WORLD';
  if (!isMainThread) abortFromWorker(errorcode, where);
  const pmi = isInitialized() ? safePmi() : null;
  if (pmi !== null) void pmi.abort(code, `MPI.abort(${errorcode}) on ${where}`);
  process.stderr.write(`MPI.abort(${errorcode}) called on ${where}\n`);
  process.exit(code === 0 ? 1 : code);
}

/** How long a worker that called MPI.abort waits for the main thread before killing the process itself. */
const WORKER_ABORT_GRACE_MS = 5000;

/**
 * MPI.abort in an MPI.Worker: only the main thread can end the process with the error code (and
 * tell the launcher), so the worker hands the abort over through shared memory and stops. A main
 * thread that never returns to its event loop is overruled after WORKER_ABORT_GRACE_MS (SIGKILL).
 */
function abortFromWorker(errorcode: number, where: string): never {
  const rt = safeRuntime();
  if (rt === null || !rt.device.shared.layout.multithreaded) process.exit(Number.isInteger(errorcode) && (errorcode & 0xff) !== 0 ? errorcode & 0xff : 1);
  rt.device.shared.requestAbort(Number.isInteger(errorcode) ? errorcode : 1, rt.device.opts.threadId);
  process.stderr.write(`MPI.abort(${errorcode}) called on ${where} in worker thread ${rt.device.opts.threadId}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WORKER_ABORT_GRACE_MS);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: the process has been killed');
}

function safeRuntime(): ThreadRuntime | null {
  try {
    return runtime('abort');
  } catch {
    return null;
  }
}

function safePmi(): PmiClient | null {
  try {
    return runtime('abort').pmi;
  } catch {
    return null;
  }
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
/** Whether MPI.init / MPI.finalize have been called in this thread (the runtime layer keeps the state). */
export { isInitialized, isFinalized } from '../runtime/index.ts';
