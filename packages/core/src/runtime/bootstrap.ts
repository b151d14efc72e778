/**
 * The runtime bootstrap: how a process (and each MPI.Worker thread) brings up
 * its MPI runtime at MPI.init and takes it down at MPI.finalize, after
 * api/lifecycle.ts has checked the arguments.
 *
 * startProcess (main thread): settings -> wire-up client (unless singleton;
 * mpiexec's service or a PMI launcher's, join-job.ts)
 * -> shared state -> device; the channels' transports run on this thread
 * (inline progress) or in one engine worker per channel (threads progress,
 * the default for threadLevel 'multiple'); publish the listening addresses,
 * fence, connect lazily -> predefined objects -> this thread's ThreadRuntime.
 * startWorkerThread (an MPI.Worker): attach to the process's shared state
 * (worker-boot.ts).
 * finishProcess: endpoint readers hand back, a barrier over COMM_WORLD, the
 * last collection, then the transports close gracefully and the launcher is
 * told; every later call throws ERR_OTHER.
 *
 * The predefined communicators, datatypes and ops are API objects (api/ sits
 * above this layer), so api/lifecycle.ts hands in what makes and binds them
 * (ApiParts).
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { processOf, resolveSettings, universeOf, type Settings, type JobEnv, type Progress } from '../config/index.ts';
import { Device, Engines, SharedState, endpointReceivePlan, resolveEndpointReceive, MAX_THREADS, directoryName, type EndpointReceivePlan, type DirectRoute, type EngineBoot, type KnownProcesses, type ObjectTable } from '../device/index.ts';
import { ContextIdState } from '../comm/index.ts';
import { createLogger, type Logger } from '../log/index.ts';
import { stopQuietlyOnPeerLoss } from './stop-on-peer-loss.ts';
import { failIfReaderDied } from './reader-death.ts';
import { joinJob } from './join-job.ts';
import type { FinalizeReport, LocalCounters, PmiClient, TraceThread } from '../pmi/index.ts';
import { secureTransportFactory, type ReaderSocketName, type TransportFactory } from '../transport/index.ts';
import { ERR_ARG, ERR_OTHER, mpiError, schedYield } from '../util/index.ts';
import type { ThreadLevel } from './thread-level.ts';
import { BlockedCalls, BLOCKED_SLOT_WORDS, INIT_CALL } from './blocked.ts';
import { peerAddress } from './peer-address.ts';
import { pollPolicy } from './poll-policy.ts';
import { WaitPoll, type WaitPollOptions } from './wait-poll.ts';
import { setRuntime, ThreadRuntime } from './thread-runtime.ts';
import type { WorkerBoot } from './worker-boot.ts';
import { applyPeerBook, setWorkerPeers, workerPeers, WorkerPeers } from './worker-peers.ts';
import { DynamicRelay, dynamicRelay, setDynamicRelay } from './dynamic-relay.ts';

/** What the API layer makes, binds and answers around a thread's runtime (api/lifecycle.ts supplies it). */
export interface ApiParts {
  /** Makes the predefined communicators, then datatypes and ops, in the process's object table; their handles. */
  createPredefined(objects: ObjectTable, processes: number, endpointsPerProcess: number, firstEndpoint: number, worldFirst: number): { predefined: number[]; predefinedObjects: number[] };
  /** Binds an MPI.Worker thread's predefined objects to the handles its boot record carries. */
  attachPredefined(boot: WorkerBoot, processes: number, endpointsPerProcess: number, firstEndpoint: number, worldFirst: number): void;
  /** Frees a communicator's record when the object table destroys its handle. */
  destroyComm(handle: number): void;
  /** Binds the predefined communicators to this thread's device (Pt2ptComm._bind; null: unbinds). */
  bindPredefined(rt: ThreadRuntime | null): void;
  /** Revives the MPI objects an MPI.Worker's workerData carries. */
  reviveWorkerData(): void;
  /** A barrier over COMM_WORLD. */
  worldBarrier(): Promise<void>;
  /** The live objects, for finalize's debug line. */
  liveObjects(rt: ThreadRuntime): unknown;
  /** Messages and bytes of this process since init, for the launcher's report. */
  messageTotals(rt: ThreadRuntime): FinalizeReport;
  /** mpiexec --dashboard: the totals and COMM_WORLD's collectives, read only when a sample asks. */
  counters(rt: ThreadRuntime): LocalCounters;
  /** MPI.abort on behalf of a worker thread that asked for it through shared memory. */
  abort(code: number, where: string): never;
  /** mpiexec --trace: starts recording this thread's calls (api/trace-threads.ts, loaded only then); `takeOrder`: SharedState.takeTraceOrder. */
  startTrace(maxEvents: number, takeOrder: (n: number) => number): Promise<void>;
  /** mpiexec --trace, main thread at finalize: stops recording; this thread's trace and its worker threads', or null. */
  takeTraces(): Promise<TraceThread[] | null>;
}

/** Pings to mpiexec at init under --trace; the shortest round trip gives the clock offset (pmi/clock-offset.ts). */
const CLOCK_PINGS = 8;
/** Under --trace: what to add to this process's clock for mpiexec's, measured at init. */
let traceOffsetMs: number | null = null;

/**
 * Direct sends (device.ts) open C connections per user thread to every other process at the
 * thread's init; beyond this many peers the threads hand their sends to the channels' hosts
 * instead, so a thread's connections (and its init) stay bounded.
 */
const DIRECT_MAX_PEERS = 64;

/**
 * Brings up the main thread's runtime (MPI.init under mpiexec, or as a job of
 * size 1 without it) at thread level `level`, checked by the caller.
 * @throws MPIError(ERR_ARG) for a bad setting or transport module.
 */
export async function startProcess(level: ThreadLevel, api: ApiParts): Promise<void> {
  let settings: Settings;
  try {
    settings = resolveSettings();
  } catch (e) {
    throw mpiError(ERR_ARG, 'init', (e as Error).message);
  }
  // The one branch point of the wire-up: tsmpi's mpiexec, a PMI launcher, or none (join-job.ts).
  const { job, pmi, transport } = await joinJob();
  if (transport !== null) settings = { ...settings, transport };
  const rank = job?.rank ?? 0;
  const size = job?.size ?? 1;
  // Dynamic processes (docs/adr/0040-dynamic-processes.md): the device is sized for the job's universe;
  // this process is number `proc` of it, and init wires it up to its own world only (knownAtInit).
  const proc = processOf(job);
  const universe = universeOf(job);
  const known = knownAtInit(job, size);
  const log = createLogger(settings.logLevel, rank, settings.logFormat);
  // This thread's waiting and roll-call state, before the roll-call handler that reads it.
  const waitPoll = new WaitPoll();
  const blocked = new BlockedCalls(waitPoll);
  if (pmi !== null) {
    pmi.setRollCallHandler(() => blocked.report());
    pmi.setLostHandler((err) => {
      log.error({ err: err.message }, 'lost the launcher: exiting');
      process.exit(1);
    });
  }
  const multithreaded = level === 'serialized' || level === 'multiple';
  // A spawned process follows its parents, whose channels it must dial (peer-address.ts); else threads at 'multiple'.
  const progress = settings.progress === 'auto' ? (job?.parentProgress ?? (level === 'multiple' ? 'threads' : 'inline')) : settings.progress;
  const receiveAsked = resolveEndpointReceive(settings.endpointReceive, settings.endpoints);
  const receivePlan = endpointReceivePlan(receiveAsked, progress, size, job?.localSize ?? size);
  logEndpointReceive(settings, receiveAsked, progress, receivePlan, log);
  const shared = SharedState.create({
    processCount: universe,
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
  const useEngines = progress !== 'inline' && universe > 1;
  const transportFactory = universe > 1 ? await loadTransport(settings) : null;
  // docs/adr/0019: the main thread never reads an endpoint, but it sends to remote readers like any thread.
  const readerSocketName = shared.routes !== null && transportFactory !== null ? await loadReaderSocketName(settings) : null;
  const device = new Device(
    {
      ...deviceBase(settings, job, proc, universe, known),
      log: log.child({ mod: 'device' }),
      transportFactory,
      threadId: 0,
      hosted: useEngines ? [] : allChannels,
      statsRow: 0,
      // Receive lanes only where this thread is the process's one MPI thread and hosts every channel (docs/adr/0020).
      lanes: !multithreaded && progress === 'inline',
      ...(readerSocketName === null ? {} : { readerSocketName }),
    },
    shared,
  );
  // Windows across the threads of this process (device/rma-directory.ts): open before any worker or engine can announce one.
  if (shared.layout.multithreaded) device.rma.openDirectory(device.opts.jobKey, proc, directoryName(device.opts));
  // Worker threads learn the processes that join later from this thread (worker-peers.ts); it learns them itself (api/dynamic.ts).
  if (shared.layout.multithreaded) setWorkerPeers(new WorkerPeers(device.opts.jobKey, proc, 0, null, () => {}));
  // ... and it carries out their spawns, connects and accepts (dynamic-relay.ts).
  if (shared.layout.multithreaded) setDynamicRelay(new DynamicRelay(device.opts.jobKey, proc, 0));
  if (pmi !== null) {
    const reporter = pmi;
    const peerLost = (lostProcess: number): void => {
      // A peer lost after a reader of this process died lost its socket to it: the failure is ours.
      failIfReaderDied(shared, device.firstEndpoint);
      stopQuietlyOnPeerLoss(() => reporter.reportPeerLost(lostProcess));
    };
    device.onFatal = (_err, lostProcess) => {
      if (lostProcess !== null) peerLost(lostProcess);
    };
    // A worker thread's device that lost a peer has no link to mpiexec: this thread tells it (once: stopQuietlyOnPeerLoss).
    if (shared.layout.multithreaded) shared.watchLost(peerLost);
    // Another job's process coupled at a port failed, as its mpiexec told this job's (docs/adr/0043): a rank that never talked to it hears it too.
    // The MPI.Worker threads hear it too (worker-peers.ts): a thread blocked in a receive from it ends with ERR_PROC_FAILED.
    pmi.setPeerFailedHandler?.((p, why) => {
      if (!device.coupled.has(p) || device.coupled.isReleased(p)) return;
      device.coupled.fail(p, why);
      void workerPeers()?.announce([], null, { failed: [[p, why]] });
    });
  }
  let engines: Engines | null = null;
  let directRoutes: readonly DirectRoute[];
  if (useEngines) {
    const started = await startEngines(shared, settings, job!, pmi!, proc, universe, known, progress === 'threads' && settings.wait === 'poll' ? settings.threadPollMs : 0);
    engines = started.engines;
    // Threads progress: every user thread, this one included, sends on connections of its own to the engines.
    directRoutes = progress === 'threads' && size - 1 <= DIRECT_MAX_PEERS ? started.perChannel.map((addresses, c) => ({ channels: [c], addresses })) : [];
    device.start(null, directRoutes);
    await device.openDirect(job?.worldFirst ?? 0);
  } else {
    const address = await device.listen();
    if (pmi !== null) {
      if (address !== null) pmi.put(`tcp:${proc}`, address);
      await pmi.fence();
    }
    // The other processes of the universe get their addresses when this one meets them (Device.addPeers).
    const addresses = universe > 1 ? await Promise.all(Array.from({ length: universe }, (_, p) => (isKnown(known, p) ? peerAddress(pmi!, p, null, 'init', ERR_OTHER) : ''))) : null;
    // Inline progress: this thread hosts every channel; worker threads send on their own connections to the peers' main threads.
    directRoutes = addresses === null || size - 1 > DIRECT_MAX_PEERS ? [] : [{ channels: allChannels, addresses }];
    device.start(addresses);
  }
  const policy = pollPolicy({ localSize: job?.localSize ?? 1, cores: os.availableParallelism(), spinTurns: settings.waitSpinTurns });
  waitPoll.configure({ ...waitPollOptions(settings, size, log, device, !useEngines, shared.layout.multithreaded), spinTurns: policy.spinTurns, sleepAfterTurns: policy.sleepAfterTurns, lateTurnMs: policy.lateTurnMs });
  // Bulk traffic sleeps only where a poller would take a core from another process of the job.
  if (policy.isOversubscribed) device.onRendezvous = (bytes) => waitPoll.noteRendezvous(bytes);
  // A passive target in a long wait keeps polling while origins' epochs reach it (wait-poll.ts renew).
  device.rma.onServe = () => waitPoll.renew();
  blocked.countTimeIn(shared.statsRow(0));
  if (shared.layout.multithreaded) {
    blocked.attachTable(shared.buffers.blocked, 0, MAX_THREADS);
    shared.watchAbort((code, thread) => api.abort(code, `COMM_WORLD (from worker thread ${thread})`));
  }
  const { predefined, predefinedObjects } = api.createPredefined(shared.objects, size, settings.endpoints, device.firstEndpoint, job?.worldFirst ?? 0);
  shared.objects.onDestroy = api.destroyComm;
  const rt = new ThreadRuntime({
    device, settings, job, pmi, log, threadLevel: level, progress, endpoint: device.firstEndpoint,
    contextIds: Array.from({ length: settings.endpoints }, () => ContextIdState.create()),
    predefined, predefinedObjects, directRoutes, engines, waitPoll, blocked,
  });
  setRuntime(rt);
  api.bindPredefined(rt);
  pmi?.setCountersHandler?.(() => api.counters(rt));
  if (settings.traceEvents > 0 && pmi !== null) {
    traceOffsetMs = await pmi.measureClockOffset(CLOCK_PINGS);
    await api.startTrace(settings.traceEvents, (n) => shared.takeTraceOrder(n));
  }
  pmi?.reportInitialized();
  log.debug({ size, channels: settings.channels, matching: settings.matching, progress }, 'initialized');
}

/**
 * How blocking calls on this thread wait (wait-poll.ts), with --wait poll and
 * more than one process: a thread that reads the sockets (inline progress's
 * main thread) polls for waitPollMs; a thread whose messages another thread
 * reads (an MPI.Worker, the main thread in threads progress) polls for
 * threadPollMs. Each turn drains the thread's completion ring, which every
 * thread of a multithreaded process has (other threads complete its requests);
 * the main thread of a single-threaded process has none, and its turns do
 * nothing more than turn. Only a thread that can yield its core polls.
 */
function waitPollOptions(settings: Settings, size: number, log: Logger, device: Device, readsSockets: boolean, hasCompletionRing: boolean): WaitPollOptions {
  const budgetMs = readsSockets ? settings.waitPollMs : settings.threadPollMs;
  if (settings.wait !== 'poll' || size === 1 || budgetMs === 0) return { budgetMs: 0, yieldCore: null };
  const yieldCore = schedYield();
  if (yieldCore === null) log.warn('--wait poll needs sched_yield, which this Node does not offer (node:wasi): blocking calls sleep instead');
  return hasCompletionRing ? { budgetMs, yieldCore, onTurn: () => device.poll() } : { budgetMs, yieldCore };
}

/**
 * endpointReceive (docs/adr/0019, 0021): one info line when a job asks for `thread`, or `auto`
 * chose it (--endpoints 2 or more), saying which path its endpoints' receives take and why.
 * Never an error: the engine path serves every job.
 */
function logEndpointReceive(settings: Settings, asked: 'engine' | 'thread', progress: Progress, plan: EndpointReceivePlan, log: Logger): void {
  if (asked === 'engine') return;
  if (plan.path === 'engine') {
    log.info({ endpointReceive: settings.endpointReceive, progress, path: 'engine', why: plan.why }, 'endpointReceive thread: receives stay on the engine path');
    return;
  }
  // What is built (docs/adr/0019): eager and rendezvous-request frames of the other processes' threads follow a reader's route.
  const why = 'a worker thread reads the endpoint it attaches to (MPI.threadAttach) while no other thread does; the main thread never reads';
  log.info({ endpointReceive: settings.endpointReceive, progress, path: 'thread', why }, 'endpointReceive thread: worker threads read their endpoints');
}

/**
 * The processes whose addresses init reads: this process's own world, first..end-1 (the world mpiexec
 * started is 0..size-1). Never another world's: a spawned world's parents, and worlds spawned since or
 * at the same time by other processes (whose addresses may not be put yet), are learned when met
 * (api/dynamic.ts reach, Device.addPeers).
 */
function knownAtInit(job: JobEnv | null, size: number): KnownProcesses {
  const first = job?.worldFirst ?? 0;
  return { first, end: first + size };
}

function isKnown(known: KnownProcesses, p: number): boolean {
  return p >= known.first && p < known.end;
}

/** @param proc this process's number in the job; @param universe the job's process numbers; @param known the processes init wires up (knownAtInit) */
function deviceBase(settings: Settings, job: JobEnv | null, proc: number, universe: number, known: KnownProcesses) {
  return {
    process: proc,
    processCount: universe,
    knownProcesses: known,
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
async function startEngines(shared: SharedState, settings: Settings, job: JobEnv, pmi: PmiClient, rank: number, size: number, known: KnownProcesses, pollMs: number): Promise<{ engines: Engines; perChannel: string[][] }> {
  const boots: EngineBoot[] = Array.from({ length: settings.channels }, (_, c) => ({
    shared: shared.buffers,
    channel: c,
    transportModule: settings.transport,
    secure: settings.secure === 'on',
    logLevel: settings.logLevel,
    logFormat: settings.logFormat,
    pollMs,
    device: deviceBase(settings, job, rank, size, known),
  }));
  const engines = await Engines.start(boots, (message, lostProcess) => {
    // A lost peer is the peer's failure, which mpiexec reports: this rank stops quietly (stop-on-peer-loss.ts),
    // once the launcher knows which loss caused it (bounded: the launcher may be gone too); unless a reader
    // of this process died first (the peer lost its socket to it: reader-death.ts). Anything else is this rank's.
    if (lostProcess === null) process.stderr.write(`tsmpi: rank ${rank}: channel engine failed: ${message}\n`);
    else failIfReaderDied(shared, rank * settings.endpoints);
    const told = lostProcess === null ? Promise.resolve() : stopQuietlyOnPeerLoss(() => pmi.reportPeerLost(lostProcess));
    void told.then(() => process.exit(1));
  });
  engines.addresses.forEach((a, c) => pmi.put(`tcp:${rank}:${c}`, a));
  await pmi.fence();
  const perChannel: string[][] = [];
  for (let c = 0; c < settings.channels; c++) {
    perChannel.push(await Promise.all(Array.from({ length: size }, (_, p) => (isKnown(known, p) ? peerAddress(pmi, p, c, 'init', ERR_OTHER) : ''))));
    engines.startChannel(c, perChannel[c]!);
  }
  return { engines, perChannel };
}

/** MPI.init in an MPI.Worker thread (of a process at level 'serialized' or 'multiple', checked by the caller): attach to the process's shared state, on the parent's endpoint. */
export async function startWorkerThread(boot: WorkerBoot, api: ApiParts): Promise<ThreadLevel> {
  const settings = boot.settings;
  const shared = SharedState.attach(boot.shared);
  const threadId = boot.threadId;
  const rank = boot.job?.rank ?? 0;
  const size = boot.job?.size ?? 1;
  const universe = universeOf(boot.job);
  const log = createLogger(settings.logLevel, rank, settings.logFormat).child({ thread: threadId });
  const direct = boot.direct.length > 0 && universe > 1;
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
      ...deviceBase(settings, boot.job, processOf(boot.job), universe, knownAtInit(boot.job, size)), log: log.child({ mod: 'device' }), transportFactory: direct ? await loadTransport(settings) : null, threadId, hosted: [], statsRow: threadId,
      ...(readerSocketName === null ? {} : { readerSocketName, readsEndpoints: shared.layout.endpointReaders === true }),
    },
    shared,
  );
  device.rma.openDirectory(device.opts.jobKey, device.opts.process, directoryName(device.opts));
  device.start(null, boot.direct);
  if (boot.peers !== null) {
    const peers = new WorkerPeers(device.opts.jobKey, device.opts.process, threadId, boot.peers, (b) => applyPeerBook(device, b));
    setWorkerPeers(peers);
    await peers.join();
    setDynamicRelay(new DynamicRelay(device.opts.jobKey, device.opts.process, threadId));
  }
  blocked.countTimeIn(shared.statsRow(threadId));
  await device.openDirect(boot.job?.worldFirst ?? 0);
  // Leaving when the thread's event loop empties (the worker is about to end): its routes to remote
  // readers end with a FIN each, and the endpoint it reads is handed back (both keep the loop alive
  // until done; the next beforeExit finds nothing to do).
  // Dying instead (process.exit, an uncaught error) while it reads: its death is marked before its
  // sockets close (reader-death.ts says why).
  if (readerSocketName !== null) {
    process.on('beforeExit', () => void device.readers.leaveAll('the thread is ending'));
    process.on('exit', (code) => shared.routes!.markReaderDied(threadId, code));
  }
  const policy = pollPolicy({ localSize: boot.job?.localSize ?? 1, cores: os.availableParallelism(), spinTurns: settings.waitSpinTurns });
  waitPoll.configure({ ...waitPollOptions(settings, size, log, device, false, true), spinTurns: policy.spinTurns, sleepAfterTurns: policy.sleepAfterTurns, lateTurnMs: policy.lateTurnMs });
  device.rma.onServe = () => waitPoll.renew();
  api.attachPredefined(boot, size, settings.endpoints, device.firstEndpoint, boot.job?.worldFirst ?? 0);
  shared.objects.onDestroy = api.destroyComm;
  const rt = new ThreadRuntime({
    device, settings, job: boot.job, pmi: null, log, threadLevel: boot.threadLevel, progress: boot.progress, endpoint: boot.endpoint,
    contextIds: boot.contextIds.map((b) => ContextIdState.attach(b)),
    predefined: boot.predefined, predefinedObjects: boot.predefinedObjects, directRoutes: boot.direct, engines: null, waitPoll, blocked,
  });
  setRuntime(rt);
  api.bindPredefined(rt);
  api.reviveWorkerData();
  // mpiexec --trace: the main thread records (it was started under mpiexec with traceEvents), so this thread does too.
  if (settings.traceEvents > 0 && boot.job !== null) await api.startTrace(settings.traceEvents, (n) => shared.takeTraceOrder(n));
  blocked.leave();
  return boot.threadLevel;
}

/**
 * Takes down the main thread's runtime (MPI.finalize, after the caller's checks): collective over COMM_WORLD.
 */
export async function finishProcess(rt: ThreadRuntime, api: ApiParts): Promise<void> {
  const trace = traceOffsetMs === null ? null : await api.takeTraces();
  await readersHandBack(rt.device);
  await api.worldBarrier();
  // The finalize-time collection (papers/refcount-gc.txt §V.B): whatever only the collector still holds goes.
  rt.device.lifetime.collect();
  if (rt.log.isLevelEnabled('debug')) rt.log.debug({ liveObjects: api.liveObjects(rt), gcCycles: rt.device.lifetime.gcCycles() }, 'finalize: objects after the last collection');
  rt.waitPoll.stop();
  // Every thread's and engine's counts, as MPI.stats() gives them (the main thread's row alone
  // misses what engines and worker threads received and sent).
  const totals = api.messageTotals(rt);
  rt.pmi?.setCountersHandler?.(null); // the runtime goes: a --dashboard sample from here on has no counters
  await rt.device.close();
  if (rt.engines !== null) await rt.engines.close();
  rt.device.rma.directory?.close();
  workerPeers()?.close();
  setWorkerPeers(null);
  dynamicRelay()?.close();
  setDynamicRelay(null);
  api.bindPredefined(null);
  setRuntime(null);
  if (rt.pmi !== null) {
    if (trace !== null) {
      const { encodeTraceDump } = await import('../pmi/index.ts');
      // One message per thread: each is bounded by traceEvents (config/settings.ts MAX_TRACE_EVENTS), their sum is not.
      for (const thread of trace) await rt.pmi.sendTrace(encodeTraceDump({ offsetMs: traceOffsetMs!, threads: [thread] }));
    }
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

