/**
 * A device's wiring (device.ts is its facade): the transports and what they call back. Listens on
 * the hosted channels (listen), gives the transport its peers and opens this thread's direct routes
 * (start, which also chooses the device's one send path: send-path.ts), serves the injection rings
 * of the hosted channels, dispatches every frame a transport delivers (onDeliver: checked first,
 * peer-frame-check.ts, then by kind to the matcher, the protocols or the reader routes), and ends
 * it all: close, destroy, a lost peer, a failure (fatal), which fails every pending request.
 *
 * Invariants: every frame from another process is checked before any of its fields is used; once
 * a peer is taken for lost nothing it still sends is acted on; the first failure is the device's
 * failure for good (the process is marked failed in shared memory before anything else).
 */
import { FRAME_KIND, type ForeignPeer, type FrameHeader, type Transport, type TransportError } from '../transport/index.ts';
import { ERR_PROC_FAILED, MPIError, flushBeforeFirstUseLoads, mpiError } from '../util/index.ts';
import type { SharedState } from './shared-state.ts';
import type { DevRequest } from './dev-request.ts';
import type { Completion } from './completion.ts';
import type { Protocol } from './protocol.ts';
import type { ThreadBridge } from './thread-bridge.ts';
import type { RmaTarget } from './rma-target.ts';
import type { Matcher } from './matcher.ts';
import { PeerBytesWriter } from './peer-bytes.ts';
import type { DeviceOptions, DirectRoute } from './device-options.ts';
import { ReaderRoutes } from './reader-routes.ts';
import { CoupledPeers } from './coupled-peers.ts';

export type { CoupledPeers } from './coupled-peers.ts';
import { StartHold, selectSendPath, type SendPath } from './send-path.ts';
import { peerFrameFault, type FrameCheckContext } from './peer-frame-check.ts';

/** The device's hooks the wiring calls (Device's public fields). */
export interface DeviceHooks {
  onFatal: ((err: MPIError, lostProcess: number | null) => void) | null;
  onFrame: (() => void) | null;
  /** the device's window extension point: applies RMA frames (rma-target.ts) */
  readonly rma: RmaTarget;
}

/** What the wiring is built from: the device's parts, made before it (device.ts). */
export interface WiringParts {
  readonly opts: DeviceOptions;
  readonly shared: SharedState;
  readonly completion: Completion;
  readonly protocol: Protocol;
  readonly matcher: Matcher;
  readonly bridge: ThreadBridge;
  readonly firstEndpoint: number;
  readonly endpointCount: number;
  /** the largest eager message an injection ring takes */
  readonly injectLimit: number;
}

export class DeviceWiring {
  readonly #p: WiringParts;
  readonly #opts: DeviceOptions;
  readonly #hooks: DeviceHooks;
  /** the transport of the hosted channels (listen), or null */
  transport: Transport | null = null;
  /** what the device sends before it starts, released at start onto the path chosen then (send-path.ts StartHold) */
  readonly #hold = new StartHold();
  /** the one send path (send-path.ts), chosen at start; the start hold until then */
  path: SendPath = this.#hold;
  /** endpoint readers and the routes to them (reader-routes.ts): only in a process with a route table */
  readonly routes: ReaderRoutes | null;
  readonly #hosted: boolean[];
  /** per channel: this thread's own sending transport for it (direct routes), if any */
  readonly #direct: (Transport | undefined)[];
  readonly #directAll: Transport[] = [];
  /** Removes this device's flush from those run before a module's load at first use (util/first-use-load.ts). */
  #stopFlushBeforeLoads: (() => void) | null = null;
  /** The channels of each of #directAll (a direct route under threads progress dials one channel's engines). */
  readonly #directChannels: (readonly number[])[] = [];
  /** where data frames (EAGER, EAGER_SYNC, RNDV_RTS) go: the reader routes' intakes, else the matcher */
  readonly #intake: { arriveFrame(srcProcess: number, h: FrameHeader, payload: Uint8Array): void };
  /** What peerFrameFault reads of this device: every frame from another process is checked first. */
  readonly #frameCheck: FrameCheckContext;
  /** Per process: 1 once this device took it for lost (#onPeerLost); nothing it still sends is acted on. */
  readonly #lostPeers: Uint8Array;
  /** Another job's processes coupled at a port (addPeers' `foreign`): a lost one is named as that job's, a disconnected one fails nothing. */
  readonly coupled = new CoupledPeers((proc, why) => this.#coupledFailed(proc, why));
  failure: Error | null = null;
  closing = false;
  /** this thread's row of mpiexec --dashboard's traffic matrix (peer-bytes.ts), from start on */
  #peerBytes: PeerBytesWriter | null = null;

  constructor(parts: WiringParts, hooks: DeviceHooks) {
    const o = parts.opts;
    this.#p = parts;
    this.#opts = o;
    this.#hooks = hooks;
    this.#hosted = Array.from({ length: o.channels }, (_, c) => o.hosted.includes(c));
    this.#direct = new Array(o.channels);
    this.#lostPeers = new Uint8Array(o.processCount);
    this.#frameCheck = { process: o.process, endpointsPerProcess: o.endpointsPerProcess, words: parts.shared.table.words, slots: parts.shared.table.capacity };
    this.routes = parts.shared.routes === null ? null : new ReaderRoutes(this.#routeHost());
    this.#intake = this.routes ?? parts.matcher;
  }

  /** Creates the transport of the hosted channels and starts listening; resolves to the address to publish (null: none). */
  async listen(): Promise<string | null> {
    const o = this.#opts;
    if (o.processCount === 1 || o.transportFactory === null || o.hosted.length === 0) return null;
    const protocol = this.#p.protocol;
    // Plain eager frames go to the matcher as numbers where it takes them so, except where route tags must be read first.
    const onEager = this.routes === null ? this.#p.matcher.onEager : undefined;
    this.transport = o.transportFactory({
      process: o.process,
      processCount: o.processCount,
      channelCount: o.channels,
      endpointsPerProcess: o.endpointsPerProcess,
      channels: o.hosted,
      jobKey: o.jobKey,
      listenHost: o.listenHost,
      ...(o.listenPorts === undefined ? {} : { listenPorts: o.listenPorts }),
      // Only eager frames come unasked (rendezvous data lands in the array payloadTarget gives).
      maxUnsolicitedPayloadBytes: o.eagerLimit,
      log: o.log.child({ mod: 'transport' }),
      handlers: {
        onDeliver: (src, header, payload) => this.#onDeliver(src, header, payload),
        onSent: (token) => protocol.sent(token),
        onPeerLost: (proc, err) => this.#onPeerLost(proc, err),
        payloadTarget: (src, header) => (header.kind === FRAME_KIND.RMA ? this.#hooks.rma.payloadTarget(header) : protocol.payloadTarget(src, header)),
        ...(onEager === undefined ? {} : { onEager }),
      },
    });
    return this.transport.listen();
  }

  /** Device.start: the transport's peers, the direct routes, the send path, the injection rings served, the frames held till now sent. */
  start(addresses: readonly string[] | null, direct: readonly DirectRoute[]): SendPath {
    if (addresses !== null) this.transport?.start(addresses);
    // A synchronous load at first use (msgpackr's) first writes the frames this thread's transports hold
    // for their turn's flush: a peer waiting for one does not wait for the load (notebook 4.68).
    this.#stopFlushBeforeLoads = flushBeforeFirstUseLoads(() => {
      this.transport?.flushPending?.();
      for (const t of this.#directAll) t.flushPending?.();
    });
    const o = this.#opts;
    if (o.transportFactory !== null && o.processCount > 1) {
      for (const route of direct) {
        const t = this.threadTransport({ mod: 'transport', direct: true }, (proc, err) => this.#onPeerLost(proc, err), route.channels);
        t.start(route.addresses);
        this.#directAll.push(t);
        this.#directChannels.push(route.channels);
        for (const c of route.channels) if (!this.#hosted[c]) this.#direct[c] = t;
      }
    }
    const p = this.#p;
    this.path = selectSendPath({
      channels: o.channels, endpointsPerProcess: o.endpointsPerProcess, process: o.process, eagerLimit: o.eagerLimit, injectLimit: p.injectLimit,
      hosted: this.#hosted, transport: this.transport, direct: this.#direct, bridge: p.bridge,
      leanSeesSharedFailure: !p.matcher.hasLanes, failedClass: () => p.shared.failedClass(),
      routes: this.routes !== null && this.routes.follows ? this.routes : null,
    });
    if (p.shared.layout.multithreaded) for (const c of o.hosted) p.bridge.serveInjection(c, this.#sendInjected);
    // mpiexec --dashboard's traffic matrix counts every thread's connections, not only the main thread's (peer-bytes.ts).
    if (o.transportFactory !== null && o.processCount > 1) {
      this.#peerBytes = new PeerBytesWriter(p.shared, o.statsRow, () => (this.transport === null ? this.#directAll : [this.transport, ...this.#directAll]));
    }
    // Answers to frames that came before start (a peer that started first) leave now, before anything else.
    this.#hold.release(this.path);
    return this.path;
  }

  /**
   * Device.addPeers: processes that joined the job later (dynamic processes), to this thread's
   * transports: `addresses` are their main threads', `perChannel[c]` their engine c's (threads
   * progress: a direct route of one channel dials that channel's engines). @returns false when one cannot learn them
   */
  addPeers(addresses: readonly string[], perChannel: readonly (readonly string[])[] | null = null, foreign?: ReadonlyMap<number, ForeignPeer>): boolean {
    const all = [...(this.transport === null ? [] : [this.transport]), ...this.#directAll];
    if (all.some((t) => t.addPeers === undefined)) return false;
    if (foreign !== undefined) this.coupled.add(foreign);
    this.transport?.addPeers!(addresses, foreign);
    this.#directAll.forEach((t, i) => {
      const channels = this.#directChannels[i]!;
      t.addPeers!(perChannel !== null && channels.length === 1 ? perChannel[channels[0]!]! : addresses, foreign);
    });
    return true;
  }

  /** Device.openDirect: this thread's direct connections to every other process, opened now. */
  async openDirect(worldFirst: number): Promise<void> {
    const o = this.#opts;
    const waits: Promise<void>[] = [];
    for (const t of this.#directAll) {
      if (t.open === undefined) continue;
      // Only this world's processes: earlier worlds (a spawned world's parents, worlds that may have ended) and a
      // universe's later numbers (dynamic processes) open on first use.
      for (let p = worldFirst; p < o.processCount; p++) if (p !== o.process && (o.knownProcesses === undefined || p < o.knownProcesses.end)) waits.push(t.open(p));
    }
    if (waits.length === 0) return;
    const completion = this.#p.completion;
    completion.hold();
    try {
      await Promise.all(waits);
    } finally {
      completion.release();
    }
  }

  /**
   * A transport of this thread's own connections (threadConnections): a direct route's, owning
   * `channels`, or a connection to a remote endpoint's reader (docs/adr/0019). Not started.
   */
  threadTransport(logFields: Record<string, unknown>, onPeerLost: (proc: number, err: TransportError) => void, channels?: readonly number[], channelCount = this.#opts.channels): Transport {
    const o = this.#opts;
    const me = o.threadId;
    const held = this.#p.shared.heldConnections;
    return o.transportFactory!({
      process: o.process,
      processCount: o.processCount,
      channelCount,
      endpointsPerProcess: o.endpointsPerProcess,
      ...(channels === undefined ? {} : { channels }),
      jobKey: o.jobKey,
      listenHost: o.listenHost,
      log: o.log.child(logFields),
      threadConnections: true,
      // A worker that dies while this count is above 0 has lost frames (worker.ts).
      ...(me > 0 ? { onHoldChange: (holding: boolean) => { Atomics.add(held, me, holding ? 1 : -1); } } : {}),
      handlers: {
        onDeliver: (src, header, payload) => this.#onDeliver(src, header, payload),
        onSent: (token) => this.#p.protocol.sent(token),
        onPeerLost,
      },
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    const completion = this.#p.completion;
    completion.hold();
    // Frames other threads queued for our channels go out before the goodbye.
    this.#p.bridge.close();
    // This thread's FINs to remote readers, and its own reading's ROUTE_CLOSE, go out on its connections before they close.
    this.routes?.leave(true);
    try {
      await Promise.all([...(this.routes?.close() ?? []), this.transport?.close(), ...this.#directAll.map((t) => t.close())]);
    } finally {
      this.#stopFlushBeforeLoads?.();
      this.#peerBytes?.close();
      completion.release();
      completion.stop();
    }
  }

  destroy(): void {
    this.closing = true;
    this.#stopFlushBeforeLoads?.();
    this.#p.bridge.stop();
    this.transport?.destroy();
    for (const t of this.#directAll) t.destroy();
    this.routes?.destroy();
    this.#p.completion.stop();
  }

  /** A frame another thread queued for a channel this thread hosts: hand it to the transport (which copies it). */
  readonly #sendInjected = (proc: number, h: FrameHeader, payload: Uint8Array | null): void => {
    this.transport!.send(proc, h, payload, -1);
  };

  /** What the reader routes ask of this device (reader-routes.ts RouteHost). */
  #routeHost(): ConstructorParameters<typeof ReaderRoutes>[0] {
    const p = this.#p;
    const o = this.#opts;
    const J = o.endpointsPerProcess;
    return {
      opts: o,
      shared: p.shared,
      firstEndpoint: p.firstEndpoint,
      endpointCount: p.endpointCount,
      completion: p.completion,
      isLocal: (endpoint) => endpoint >= p.firstEndpoint && endpoint < p.firstEndpoint + J,
      processOf: (endpoint) => (endpoint / J) | 0,
      out: (proc, h, payload, call = 'progress') => this.path.out(proc, h, payload, call),
      threadTransport: (logFields, onPeerLost, channels, channelCount) => this.threadTransport(logFields, onPeerLost, channels, channelCount),
      deliver: (src, h, payload) => this.#onDeliver(src, h, payload),
      sent: (token) => p.protocol.sent(token),
      peerLost: (proc, err) => this.#onPeerLost(proc, err),
      payloadTarget: (src, h) => p.protocol.payloadTarget(src, h),
      // A frame the route intakes let through (route-intake.ts): data frames only; marks never reach here.
      arrive: (srcProcess, h, payload) => p.matcher.arriveFrame(srcProcess, h, payload),
      fatal: (err, lostProcess) => this.fatal(err, lostProcess),
      failure: () => this.failure,
      isClosing: () => this.closing,
    };
  }

  // --- transport upcalls ---------------------------------------------------------------

  #onDeliver(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    this.#hooks.onFrame?.();
    if (this.#lostPeers[srcProcess] === 1) return;
    const fault = peerFrameFault(srcProcess, h, this.#frameCheck);
    if (fault !== null) {
      this.protocolError(srcProcess, fault);
      return;
    }
    const protocol = this.#p.protocol;
    switch (h.kind) {
      case FRAME_KIND.EAGER:
      case FRAME_KIND.EAGER_SYNC:
      case FRAME_KIND.RNDV_RTS:
        // With a route table a sender that switched paths tags its frames: the intakes keep them in order across the switch.
        this.#intake.arriveFrame(srcProcess, h, payload);
        return;
      case FRAME_KIND.SYNC_ACK:
        this.#p.completion.finishSlot(h.aux);
        return;
      case FRAME_KIND.RNDV_CTS:
        protocol.cts(srcProcess, h);
        return;
      case FRAME_KIND.RNDV_DATA:
        protocol.data(h, payload);
        return;
      case FRAME_KIND.CANCEL_SEND:
        protocol.cancelArrived(srcProcess, h);
        return;
      case FRAME_KIND.CANCEL_ACK:
        protocol.cancelAcked(h);
        return;
      case FRAME_KIND.RMA:
        // One-sided operations are applied by whichever thread reads the channel (docs/adr/0036-one-sided.md).
        this.#hooks.rma.arrive(srcProcess, h, payload);
        return;
      case FRAME_KIND.CONTROL:
        if (this.routes !== null) this.routes.onControl(srcProcess, h);
        else this.#opts.log.warn({ aux: h.aux, src: h.srcEndpoint, dst: h.dstEndpoint, epoch: h.aux2 }, 'control frame dropped: no route table here');
        return;
      default:
        this.#opts.log.warn({ kind: h.kind, srcProcess }, 'frame of unknown kind dropped');
    }
  }

  /**
   * Process `proc` sent a frame this device cannot act on (peer-frame-check.ts): what else it sends
   * cannot be trusted, so it is lost, as the transport takes a peer whose frame it refuses.
   */
  protocolError(proc: number, fault: string): void {
    this.#onPeerLost(proc, { code: 'TSMPI_ERR_PROTOCOL', message: `process ${proc} sent ${fault}` });
  }

  #onPeerLost(proc: number, err: TransportError): void {
    if (this.closing) return;
    this.#lostPeers[proc] = 1;
    // Another job's process this one disconnected from (MPI 4.0 11.10.4): its end is its own job's business.
    if (this.coupled.isReleased(proc)) {
      this.#opts.log.debug({ peer: proc, code: err.code }, 'disconnected coupled process ended');
      return;
    }
    // A peer that ended is the peer's failure, which mpiexec reports once: info here, so the ranks that stop because of it stay quiet.
    // Peers lost after this device failed are most likely stopping because of the same failure: debug, so the first loss is the one told.
    const level = this.failure !== null ? 'debug' : err.code === 'TSMPI_ERR_PEER_CLOSED' ? 'info' : 'error';
    this.#opts.log[level]({ peer: proc, code: err.code }, 'peer process lost');
    this.fatal(mpiError(ERR_PROC_FAILED, 'progress', `lost the connection to ${this.coupled.describe(proc)} (${err.code}: ${err.message})`, err), proc);
  }

  /** Another job's mpiexec said `proc` failed (CoupledPeers.fail): as a lost peer, with mpiexec's words. */
  #coupledFailed(proc: number, why: string): boolean {
    if (this.closing || this.#lostPeers[proc] === 1) return false;
    this.#lostPeers[proc] = 1;
    this.#opts.log.info({ peer: proc }, 'coupled process failed (its mpiexec says)');
    this.fatal(mpiError(ERR_PROC_FAILED, 'progress', why), proc);
    return true;
  }

  /** Send r, started after this process's device failed: it completes with the failure, nothing goes out. */
  failSend(r: DevRequest): void {
    if (this.failure === null) this.#adoptLoss();
    const failure = this.failure;
    const failed = this.#p.shared.failedClass(); // fatal marks it before anything else
    const why = failure === null ? 'the process is failing (see the job output)' : `this process has failed (${failure.message})`;
    r.error = mpiError(failed !== 0 ? failed : ERR_PROC_FAILED, r.call, `not sent: ${why}`, failure ?? undefined);
    this.#p.completion.complete(r);
  }

  /**
   * Another thread's device lost a process and failed this process (SharedState.markLost): this
   * device fails for that loss too, so that its hooks hear which process it was. The main thread's
   * hook tells mpiexec (bootstrap.ts), which then blames the lost process, not this rank, whose
   * own call failed only because of it (a worker thread with connections of its own may see the
   * loss first: its device has no way to mpiexec).
   */
  #adoptLoss(): void {
    const lost = this.#p.shared.lostProcess();
    if (lost !== null) this.fatal(mpiError(ERR_PROC_FAILED, 'progress', `another thread of this process lost the connection to ${this.coupled.describe(lost)}`), lost);
  }

  /** Fails every pending request of this thread: the job cannot go on (the launcher ends it). */
  fatal(err: MPIError, lostProcess: number | null): void {
    if (this.failure === null) this.failure = err;
    if (lostProcess !== null) this.#p.shared.markLost(lostProcess);
    this.#p.shared.markFailed(err.errorClass);
    const completion = this.#p.completion;
    for (let i = 0; i < completion.reqs.length; i++) {
      const r = completion.reqs[i];
      if (r !== undefined && !r.done) {
        r.error = err;
        completion.complete(r);
      }
    }
    this.#p.matcher.fail(err);
    this.#hooks.onFatal?.(err, lostProcess);
  }
}
