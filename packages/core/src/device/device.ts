/**
 * The device: one thread's point-to-point engine, a facade over the parts that do the work. One
 * Device per thread (main, MPI.Worker, channel engine). It chooses its parts once, at
 * construction, from the options and the process's layout:
 *
 *   completion.ts     slots and completion of this thread's requests, its hold of the event loop
 *   protocol.ts       eager / synchronous / rendezvous over the slots and the shared matching
 *                     queues (match-queues.ts, the paper's per-source queues)
 *   lane-matcher.ts   the receive lanes (lean=on, one MPI thread): matched before the shared queues
 *   reader-routes.ts  endpoint readers and the routes to them (a process with a route table)
 *   thread-bridge.ts  the rings between the threads of a process (injection, completion)
 *
 * What stays here is the wiring (listen, start, close, fatal), the calls the API makes (send,
 * postRecv, probe, cancel, poll) and the one place that chooses a frame's path (#out, #outFirst):
 * a channel this thread hosts (its transport), a direct route (connections of its own to the
 * peers' hosts, docs/adr/0015), the channel's injection ring (engines progress), or a remote
 * reader's route. Messages between endpoints of one process never touch a transport
 * (Protocol.local). A channel is *hosted* by one thread, which runs its transport: in inline
 * progress the main thread hosts every channel; in threads progress one engine worker per
 * channel does, and answers to a thread's sends (CTS, SYNC_ACK) come back through the host.
 * Nothing here logs or throws per message; the protocols are unit-tested over the loopback
 * transport (protocols.test.ts).
 *
 * Size: past 600 lines while the redesign of issue 34 is under way (the send paths and the wiring are next to leave).
 */
import { FRAME_FLAG, FRAME_KIND, channelOf, newFrameHeader, type FrameHeader, type Transport, type TransportError } from '../transport/index.ts';
import { setLockHolder, type PayloadPool } from '../shm/index.ts';
import { ANY, ERR_PROC_FAILED, ERR_NO_MEM, MPIError, mpiError } from '../util/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { FLAG, KIND, NIL, SLOT, SLOT_WORDS, SlotPool } from './request-table.ts';
import { STAT, type SharedState } from './shared-state.ts';
import type { ObjectTable } from './object-table.ts';
import { createLifetime, type Lifetime } from './lifetime.ts';
import { ThreadBridge } from './thread-bridge.ts';
import { ReaderRoutes, type RouteHost } from './reader-routes.ts';
import { Completion, slotsExhausted } from './completion.ts';
import { Protocol } from './protocol.ts';
import { LaneMatcher } from './lane-matcher.ts';
import type { DeviceOptions, DirectRoute, ProbeInfo } from './device-options.ts';
import { peerFrameFault, type FrameCheckContext } from './peer-frame-check.ts';

export type { DeviceOptions, DirectRoute, ProbeInfo } from './device-options.ts';


export class Device {
  readonly opts: DeviceOptions;
  readonly shared: SharedState;
  readonly pool: SlotPool;
  readonly objects: ObjectTable;
  /** this thread's side of object lifetime (the --refcount strategy) */
  readonly lifetime: Lifetime;
  readonly firstEndpoint: number;
  readonly endpointCount: number;
  transport: Transport | null = null;
  /** per channel: this thread's own sending transport for it (direct routes), if any */
  readonly #direct: (Transport | undefined)[];
  readonly #directAll: Transport[] = [];
  readonly #w: Int32Array;
  /** What peerFrameFault reads of this device (peer-frame-check.ts): every frame from another process is checked first. */
  readonly #frameCheck: FrameCheckContext;
  /** Per process: 1 once this device took it for lost (#onPeerLost); nothing it still sends is acted on. */
  readonly #lostPeers: Uint8Array;
  readonly #big: PayloadPool | null;
  readonly #mt: boolean;
  readonly #me: number;
  readonly #stat: Float64Array;
  readonly #hosts: boolean[];
  readonly #hdr: FrameHeader = newFrameHeader();
  /** rings to and from the other threads of the process (thread-bridge.ts) */
  readonly #bridge: ThreadBridge;
  /** slots and completion of this thread's requests, and its hold of the event loop (completion.ts) */
  readonly #completion: Completion;
  /** the eager, synchronous and rendezvous protocols (protocol.ts) */
  readonly #protocol: Protocol;
  /** the receive lanes' matcher (lane-matcher.ts, lean=on); null: every receive takes the shared queues */
  readonly #lanes: LaneMatcher | null;
  /** endpoint readers and the routes to them (reader-routes.ts): only in a process with a route table */
  readonly #routes: ReaderRoutes | null;
  /** this thread follows remote readers' routes: its data frames to remote endpoints go through #routes */
  readonly #followsRoutes: boolean;
  #failure: Error | null = null;
  #closing = false;
  /**
   * Largest message sent eagerly on a channel this thread neither hosts nor has a direct route for:
   * the eager limit, or less when the injection ring could not take it (ThreadBridge.maxInjectBytes); larger ones go by rendezvous.
   */
  readonly #eagerInjectLimit: number;

  constructor(opts: DeviceOptions, shared: SharedState) {
    this.opts = opts;
    this.shared = shared;
    this.#w = shared.table.words;
    this.#lostPeers = new Uint8Array(opts.processCount);
    this.#frameCheck = { process: opts.process, endpointsPerProcess: opts.endpointsPerProcess, words: shared.table.words, slots: shared.table.capacity };
    this.pool = new SlotPool(shared.table, opts.threadId >= 0 ? shared.slotCache(opts.threadId) : null);
    this.objects = shared.objects;
    this.lifetime = createLifetime(opts.refcount, shared.objects, shared.buffers.lifetime, opts.threadId);
    this.#big = shared.big;
    this.#mt = shared.layout.multithreaded;
    this.#me = opts.threadId;
    this.#stat = shared.statsRow(opts.statsRow);
    // The shared spin locks this thread takes name it (shm/spin-lock.ts); its row, if recycled, has not
    // ended, and names this thread's kernel id.
    setLockHolder(opts.statsRow);
    shared.markStarted(opts.statsRow);
    this.#hosts = Array.from({ length: opts.channels }, (_, c) => opts.hosted.includes(c));
    this.#direct = new Array(opts.channels);
    this.endpointCount = opts.processCount * opts.endpointsPerProcess;
    this.firstEndpoint = opts.process * opts.endpointsPerProcess;
    this.#bridge = new ThreadBridge(shared);
    this.#completion = new Completion(shared, this.pool, this.lifetime, this.#bridge, opts.threadId, this.#stat, this.#mt && opts.threadId >= 0 ? shared.completion(opts.threadId) : null);
    this.#protocol = new Protocol({
      out: (proc, h, payload, call) => this.#out(proc, h, payload, call),
      sendData: (proc, h, data, token) => this.transport!.send(proc, h, data, token),
      rendezvous: (bytes) => this.onRendezvous?.(bytes),
      fatal: (err, lostProcess) => this.#fatal(err, lostProcess),
      protocolError: (proc, fault) => this.#protocolError(proc, fault),
    }, shared, this.#completion, this.pool, this.#stat, opts.threadId, opts.process, this.firstEndpoint);
    this.#eagerInjectLimit = this.#mt ? Math.min(opts.eagerLimit, this.#bridge.maxInjectBytes) : opts.eagerLimit;
    this.#lanes = opts.lanes === true && !this.#mt && opts.endpointsPerProcess === 1
      ? new LaneMatcher({ postDemoted: (r, ctx, src, tag) => this.#postDemoted(r, ctx, src, tag), arriveDemoted: (p, h, data) => this.#protocol.arrive(p, h, data, 0, false) }, this.#completion, shared, this.#stat, this.firstEndpoint)
      : null;
    this.#routes = shared.routes === null ? null : new ReaderRoutes(this.#routeHost());
    this.#followsRoutes = this.#routes?.follows ?? false;
  }

  get stats(): { messagesSent: number; messagesReceived: number; bytesSent: number; bytesReceived: number } {
    const s = this.#stat;
    return { messagesSent: s[STAT.SENT]!, messagesReceived: s[STAT.RECEIVED]!, bytesSent: s[STAT.BYTES_SENT]!, bytesReceived: s[STAT.BYTES_RECEIVED]! };
  }

  /** Frames sent and received per channel (MPI.stats perChannel), as the transport counts them. */
  channelStats(): { sent: number; received: number }[] | null {
    return this.transport?.channelStats() ?? null;
  }

  /** Creates the transport of the hosted channels and starts listening; resolves to the address to publish (null: none). */
  async listen(): Promise<string | null> {
    const o = this.opts;
    if (o.processCount === 1 || o.transportFactory === null || o.hosted.length === 0) return null;
    this.transport = o.transportFactory({
      process: o.process,
      processCount: o.processCount,
      channelCount: o.channels,
      endpointsPerProcess: o.endpointsPerProcess,
      channels: o.hosted,
      jobKey: o.jobKey,
      listenHost: o.listenHost,
      ...(o.listenPorts === undefined ? {} : { listenPorts: o.listenPorts }),
      // Only eager frames come unasked (rendezvous data lands in the array #payloadTarget gives).
      maxUnsolicitedPayloadBytes: o.eagerLimit,
      log: o.log.child({ mod: 'transport' }),
      handlers: {
        onDeliver: (src, header, payload) => this.#onDeliver(src, header, payload),
        onSent: (token) => this.#protocol.sent(token),
        onPeerLost: (proc, err) => this.#onPeerLost(proc, err),
        payloadTarget: (src, header) => this.#protocol.payloadTarget(src, header),
        // Frames still in their bytes go to the lanes, except where route tags must be read first (reader-routes.ts).
        ...(this.#lanes === null || this.#routes !== null ? {} : { onFrameBytes: this.#lanes.frameBytes }),
      },
    });
    return this.transport.listen();
  }

  /**
   * Gives the transport its peers, opens this thread's direct routes (channels it does not host
   * and sends on over connections of its own, made on first use: each route's transport owns
   * `channels`, `addresses[p]` is process p's host of them) and, in a multithreaded process,
   * starts serving the hosted channels' injection rings. Called once, before any send.
   */
  start(addresses: readonly string[] | null, direct: readonly DirectRoute[] = []): void {
    if (addresses !== null) this.transport?.start(addresses);
    const o = this.opts;
    if (o.transportFactory !== null && o.processCount > 1) {
      for (const route of direct) {
        const t = this.#threadTransport({ mod: 'transport', direct: true }, (proc, err) => this.#onPeerLost(proc, err), route.channels);
        t.start(route.addresses);
        this.#directAll.push(t);
        for (const c of route.channels) if (!this.#hosts[c]) this.#direct[c] = t;
      }
    }
    if (this.#mt) for (const c of o.hosted) this.#bridge.serveInjection(c, this.#sendInjected);
  }

  /**
   * Opens this thread's direct connections to every other process now (init awaits it): a
   * handshake needs this thread's event loop, so a connection made lazily by a thread that
   * computes right after its first send would keep that send until the thread yields.
   */
  async openDirect(): Promise<void> {
    const o = this.opts;
    const waits: Promise<void>[] = [];
    for (const t of this.#directAll) {
      if (t.open === undefined) continue;
      for (let p = 0; p < o.processCount; p++) if (p !== o.process) waits.push(t.open(p));
    }
    if (waits.length === 0) return;
    this.#completion.hold();
    try {
      await Promise.all(waits);
    } finally {
      this.#completion.release();
    }
  }

  /**
   * A transport of this thread's own connections (threadConnections): a direct route's, owning
   * `channels`, or a connection to a remote endpoint's reader (docs/adr/0019). Not started.
   */
  #threadTransport(logFields: Record<string, unknown>, onPeerLost: (proc: number, err: TransportError) => void, channels?: readonly number[], channelCount = this.opts.channels): Transport {
    const o = this.opts;
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
      ...(this.#me > 0 ? { onHoldChange: (holding: boolean) => { Atomics.add(this.shared.heldConnections, this.#me, holding ? 1 : -1); } } : {}),
      handlers: {
        onDeliver: (src, header, payload) => this.#onDeliver(src, header, payload),
        onSent: (token) => this.#protocol.sent(token),
        onPeerLost,
      },
    });
  }

  /** What the reader routes ask of this device (reader-routes.ts RouteHost). */
  #routeHost(): RouteHost {
    return {
      opts: this.opts,
      shared: this.shared,
      firstEndpoint: this.firstEndpoint,
      endpointCount: this.endpointCount,
      completion: this.#completion,
      isLocal: (endpoint) => this.isLocal(endpoint),
      processOf: (endpoint) => this.processOf(endpoint),
      out: (proc, h, payload, call) => this.#out(proc, h, payload, call),
      threadTransport: (logFields, onPeerLost, channels, channelCount) => this.#threadTransport(logFields, onPeerLost, channels, channelCount),
      deliver: (src, h, payload) => this.#onDeliver(src, h, payload),
      sent: (token) => this.#protocol.sent(token),
      peerLost: (proc, err) => this.#onPeerLost(proc, err),
      payloadTarget: (src, h) => this.#protocol.payloadTarget(src, h),
      // A frame the route intakes let through (route-intake.ts): data frames only; marks never reach here.
      arrive: (srcProcess, h, payload) => this.#protocol.arrive(srcProcess, h, payload, 0),
      fatal: (err, lostProcess) => this.#fatal(err, lostProcess),
      failure: () => this.#failure,
      isClosing: () => this.#closing,
    };
  }

  // --- endpoint readers (reader-routes.ts, docs/adr/0019) -------------------------------

  /** The endpoint this thread reads (readEndpoint), or -1. */
  get readingEndpoint(): number {
    return this.#routes?.readingEndpoint ?? -1;
  }

  /** This thread becomes the reader of local endpoint `endpoint` if it may (ReaderRoutes.readEndpoint); true when it reads it now. */
  readEndpoint(endpoint: number): boolean {
    return this.#routes?.readEndpoint(endpoint) ?? false;
  }

  /** Hands the endpoint this thread reads back (ReaderRoutes.handBack); nothing to do when it reads none. */
  async handBack(why: string): Promise<void> {
    await this.#routes?.handBack(why);
  }

  /** The thread is about to end (or the process finalizes): every route left (FINs), then the endpoint it reads handed back. */
  async leaveAll(why: string): Promise<void> {
    await this.#routes?.leaveAll(why);
  }

  /** This thread's routes to remote readers, for MPI.stats: connections that carry frames, and data frames sent on them. */
  get readerRoutes(): { ready: number; framesSent: number } {
    return this.#routes?.readerRoutes ?? { ready: 0, framesSent: 0 };
  }

  processOf(endpoint: number): number {
    return (endpoint / this.opts.endpointsPerProcess) | 0;
  }

  /** Receive lanes (setting lean=on, docs/adr/0020-lean-common-path.md) exist on this device: Device.leanRecv may take receives. */
  get hasLanes(): boolean {
    return this.#lanes !== null;
  }

  isLocal(endpoint: number): boolean {
    return endpoint >= this.firstEndpoint && endpoint < this.firstEndpoint + this.opts.endpointsPerProcess;
  }

  // --- point-to-point ----------------------------------------------------

  /**
   * Posts a receive on local endpoint `endpoint` for (ctx, srcEndpoint|ANY, tag|ANY).
   * r.buf (buffer form) or r.objectMode must be set. Completes r now or later.
   */
  postRecv(r: DevRequest, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void {
    this.#lanes?.generalTouch(ctx, srcEndpoint);
    this.#protocol.postSlot(r, this.#completion.ownSlot(r, KIND.RECV), endpoint, ctx, srcEndpoint, tag);
  }

  /**
   * The lean receive (setting lean=on, docs/adr/0020-lean-common-path.md): a receive into the plain
   * byte view `buf` from an endpoint of another process, matched in its context's lane
   * (LaneMatcher.recv). Returns the request, or null, having done nothing, when it must take postRecv.
   */
  leanRecv(ctx: number, srcEndpoint: number, tag: number, buf: Uint8Array, call: string): DevRequest | null {
    const lanes = this.#lanes;
    return lanes === null ? null : lanes.recv(ctx, srcEndpoint, tag, buf, call);
  }

  /** leanRecv for a receive of the collectives (LaneMatcher.recvBytes, docs/adr/0022): the message lands in a fresh array (r.value). */
  leanRecvBytes(ctx: number, srcEndpoint: number, tag: number, call: string): DevRequest | null {
    const lanes = this.#lanes;
    return lanes === null ? null : lanes.recvBytes(ctx, srcEndpoint, tag, call);
  }

  /** Diagnostics (tests): operations of this thread holding the event loop (a lane with posted receives counts once). */
  heldOperations(): number {
    return this.#completion.active;
  }

  /** Diagnostics (tests): context `ctx`'s lane state (receive-lanes.ts LANE_STATE), or -1 where there are no lanes. */
  laneState(ctx: number): number {
    return this.#lanes === null ? -1 : this.#lanes.state(ctx);
  }

  /** A receive of a demoted lane (LaneMatcher): it holds the event loop and a slot of its own, as a general one does. */
  #postDemoted(r: DevRequest, ctx: number, src: number, tag: number): void {
    this.#completion.hold();
    const slot = this.pool.alloc(KIND.RECV);
    if (slot === NIL) {
      r.error = slotsExhausted(r.call, this.shared.table.capacity);
      this.#completion.complete(r);
      return;
    }
    this.#w[slot * SLOT_WORDS + SLOT.OWNER] = this.#me;
    r.slot = slot;
    this.#completion.reqs[slot] = r;
    this.#protocol.postSlot(r, slot, this.firstEndpoint, ctx, src, tag);
  }

  /**
   * The lean send (setting `lean`, docs/adr/0020-lean-common-path.md): an eager, non-synchronous
   * buffer-form send of `data` to an endpoint of another process, on a channel this thread hosts,
   * queued straight into the channel's batch and counted as sent, with no request slot, event-loop
   * hold or header object: what `send` does for such a message, without its bookkeeping, which
   * an eager send completes at once anyway. Returns false, having done nothing, for any other
   * send (or a failed process, or a transport without queueEager): the caller then takes `send`.
   */
  leanSend(srcEndpoint: number, dstEndpoint: number, ctx: number, tag: number, data: Uint8Array): boolean {
    const len = data.length;
    const first = this.firstEndpoint;
    // A thread that follows remote readers' routes (docs/adr/0019) tags each data frame: the general path does that.
    if (this.#failure !== null || this.#followsRoutes || (dstEndpoint >= first && dstEndpoint < first + this.opts.endpointsPerProcess)) return false;
    if (len > this.#eagerInjectLimit && len > this.opts.eagerLimit) return false;
    // channelOf's one-endpoint case inline (interface.ts): the common process has one endpoint.
    const J = this.opts.endpointsPerProcess;
    const c = J === 1 ? (srcEndpoint + dstEndpoint) % this.opts.channels : channelOf(srcEndpoint, dstEndpoint, J, this.opts.channels);
    // With lanes, #failure alone says a failure (leanRecv); elsewhere another thread or an engine may have marked one.
    if (!this.#hosts[c] || (this.#lanes === null && this.shared.failedClass() !== 0)) return false;
    const t = this.transport;
    if (t === null || t.queueEager === undefined) return false;
    if (!t.queueEager((dstEndpoint / J) | 0, c, ctx, srcEndpoint, dstEndpoint, tag, data)) return false;
    // #countSent inline (one call less per message).
    const st = this.#stat;
    st[STAT.SENT]!++;
    st[STAT.BYTES_SENT]! += len;
    return true;
  }

  /**
   * Sends `data` from endpoint srcEndpoint to dstEndpoint. `objectForm`: data is
   * msgpack. `sync`: completes only once matched. The caller must not modify
   * `data` until r completes. In a process whose device has failed (a peer lost:
   * the job is ending) nothing goes out: r completes with the failure.
   * MPI.stats counts a send once it completes without error (#countSent): at once
   * when eager, once matched (sync) or its data has left (rendezvous).
   */
  send(r: DevRequest, srcEndpoint: number, dstEndpoint: number, ctx: number, tag: number, data: Uint8Array, objectForm: boolean, sync: boolean): void {
    const len = data.length;
    this.#completion.hold();
    if (this.#failure !== null || this.shared.failedClass() !== 0) {
      this.#failSend(r);
      return;
    }
    const flags = (objectForm ? FRAME_FLAG.OBJECT : 0) | (sync ? FRAME_FLAG.SYNC : 0);
    if (this.isLocal(dstEndpoint)) {
      this.#protocol.local(r, srcEndpoint, dstEndpoint, ctx, tag, data, flags, sync);
      return;
    }
    const h = this.#hdr;
    h.flags = flags;
    h.contextId = ctx;
    h.srcEndpoint = srcEndpoint;
    h.dstEndpoint = dstEndpoint;
    h.tag = tag;
    h.seq = 0;
    h.aux2 = 0;
    const proc = this.processOf(dstEndpoint);
    const c = channelOf(srcEndpoint, dstEndpoint, this.opts.endpointsPerProcess, this.opts.channels);
    // Only a frame that goes through an injection ring is bounded by it; hosted channels and direct routes are not.
    if (len <= this.#eagerInjectLimit || (len <= this.opts.eagerLimit && (this.#hosts[c] || this.#direct[c] !== undefined))) {
      if (sync) {
        h.kind = FRAME_KIND.EAGER_SYNC;
        h.aux = this.#protocol.sendSlot(r, len);
      } else {
        h.kind = FRAME_KIND.EAGER;
        h.aux = 0;
      }
      h.payloadLength = len;
      this.#outFirst(r, proc, h, len === 0 ? null : data);
      if (!sync) {
        this.#completion.countSent(len);
        this.#completion.complete(r);
      }
      return;
    }
    const slot = this.#protocol.sendSlot(r, len);
    const b = slot * SLOT_WORDS;
    if (this.#hosts[c]) {
      r.buf = data; // this thread will answer the CTS itself: send straight from the user's buffer
    } else {
      // Another thread answers the CTS: it needs the data in shared memory.
      const off = this.#big!.alloc(len);
      if (off === NIL) {
        this.#completion.abandon(r, true);
        throw mpiError(ERR_NO_MEM, r.call, `no room for a ${len}-byte message in the shared large-payload arena`);
      }
      this.#big!.bytes.set(data, off);
      this.#w[b + SLOT.PAYLOAD] = off;
      this.#w[b + SLOT.FLAGS] |= FLAG.BIG;
    }
    h.kind = FRAME_KIND.RNDV_RTS;
    h.aux = slot;
    h.aux2 = len;
    h.payloadLength = 0;
    this.#outFirst(r, proc, h, null);
  }

  /**
   * The first frame of send r. When it cannot go (its channel's thread has stopped, or the
   * process is failing: ThreadBridge.inject throws) r is undone, its shared copy freed, and the
   * error propagates to the caller's call; nothing is counted.
   */
  #outFirst(r: DevRequest, proc: number, h: FrameHeader, payload: Uint8Array | null): void {
    try {
      if (this.#followsRoutes) this.#routes!.send(proc, h, payload, r.call);
      else this.#out(proc, h, payload, r.call);
    } catch (e) {
      if (r.slot !== NIL && (this.#w[r.slot * SLOT_WORDS + SLOT.FLAGS]! & FLAG.BIG) !== 0) this.#big!.free(this.#w[r.slot * SLOT_WORDS + SLOT.PAYLOAD]!);
      this.#completion.abandon(r, true);
      throw e;
    }
  }

  /** Send r, started after this process's device failed: it completes with the failure, nothing goes out. */
  #failSend(r: DevRequest): void {
    const failure = this.#failure;
    const failed = this.shared.failedClass(); // #fatal marks it before anything else
    const why = failure === null ? 'the process is failing (see the job output)' : `this process has failed (${failure.message})`;
    r.error = mpiError(failed !== 0 ? failed : ERR_PROC_FAILED, r.call, `not sent: ${why}`, failure ?? undefined);
    this.#completion.complete(r);
  }

  /** Non-destructive look at the first message a receive (ctx, src, tag) on `endpoint` would match. */
  probe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): ProbeInfo | null {
    this.#lanes?.generalTouch(ctx, srcEndpoint);
    const m = this.shared.queues[endpoint - this.firstEndpoint]!.probe(ctx, srcEndpoint, tag);
    return m === NIL ? null : this.#messageInfo(m);
  }

  /** Matched probe: removes the message from matching and returns its slot. */
  mprobe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): { slot: number; info: ProbeInfo } | null {
    this.#lanes?.generalTouch(ctx, srcEndpoint);
    const m = this.shared.queues[endpoint - this.firstEndpoint]!.takeMatching(ctx, srcEndpoint, tag);
    if (m === NIL) return null;
    this.#w[m * SLOT_WORDS + SLOT.KIND] = KIND.MATCHED_MESSAGE;
    return { slot: m, info: this.#messageInfo(m) };
  }

  /** Receives a message taken by mprobe into r (r.buf or r.objectMode set). */
  recvMatched(r: DevRequest, msgSlot: number): void {
    const slot = this.#completion.ownSlot(r, KIND.RECV);
    const w = this.#w;
    w[slot * SLOT_WORDS + SLOT.LENGTH] = r.buf === null ? -1 : r.buf.length;
    w[slot * SLOT_WORDS + SLOT.ENDPOINT] = w[msgSlot * SLOT_WORDS + SLOT.ENDPOINT]!;
    this.#protocol.receiveMessage(slot, msgSlot);
  }

  /**
   * Resolves once a new unexpected message may have arrived at `endpoint` (any
   * thread): blocking probes re-check after it. Holds the event loop meanwhile.
   */
  async arrivalAfter(endpoint: number, seen: number): Promise<void> {
    this.#completion.hold();
    try {
      await this.shared.queues[endpoint - this.firstEndpoint]!.waitArrival(seen);
    } finally {
      this.#completion.release();
    }
  }

  /** The arrival counter of `endpoint`, to pass to arrivalAfter(). */
  arrivals(endpoint: number): number {
    return this.shared.queues[endpoint - this.firstEndpoint]!.arrivals();
  }

  /** Cancels a pending receive that has not matched; true if it was cancelled. */
  cancel(r: DevRequest): boolean {
    if (r.done || r.kind !== REQ_KIND.RECV) return false;
    // A pending receive without a slot is a lean one: it waits in a lane.
    if (r.slot === NIL) return this.#lanes !== null && this.#lanes.cancel(r);
    const ep = this.#w[r.slot * SLOT_WORDS + SLOT.ENDPOINT]!;
    if (!this.shared.queues[ep - this.firstEndpoint]!.cancelRecv(r.slot)) return false;
    r.cancelled = true;
    r.sourceEndpoint = ANY;
    r.tag = ANY;
    this.#completion.complete(r);
    return true;
  }

  /** Completes a request created outside the protocols (generalized: collectives, PROC_NULL). */
  completeNow(r: DevRequest): void {
    this.#completion.hold();
    this.#completion.complete(r);
  }

  /** Completes this thread's requests that other threads finished (drains the completion ring). */
  poll(): void {
    this.#completion.poll();
  }

  failure(): Error | null {
    return this.#failure;
  }

  unexpectedQueued(): number {
    let n = 0;
    for (const q of this.shared.queues) n += q.unexpectedCount;
    if (this.#lanes !== null) n += this.#lanes.unexpectedCount();
    return n;
  }

  postedQueued(): number {
    let n = 0;
    for (const q of this.shared.queues) n += q.postedCount;
    if (this.#lanes !== null) n += this.#lanes.postedCount();
    return n;
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#completion.hold();
    // Frames other threads queued for our channels go out before the goodbye.
    this.#bridge.close();
    // This thread's FINs to remote readers, and its own reading's ROUTE_CLOSE, go out on its connections before they close.
    this.#routes?.leave(true);
    try {
      await Promise.all([...(this.#routes?.close() ?? []), this.transport?.close(), ...this.#directAll.map((t) => t.close())]);
    } finally {
      this.#completion.release();
      this.#completion.stop();
    }
  }

  destroy(): void {
    this.#closing = true;
    this.#bridge.stop();
    this.transport?.destroy();
    for (const t of this.#directAll) t.destroy();
    this.#routes?.destroy();
    this.#completion.stop();
  }

  // --- send paths ------------------------------------------------------------------

  /** A frame another thread queued for a channel this thread hosts: hand it to the transport (which copies it). */
  readonly #sendInjected = (proc: number, h: FrameHeader, payload: Uint8Array | null): void => {
    this.transport!.send(proc, h, payload, -1);
  };

  /**
   * Sends a frame to a remote process: on the channel's transport if this thread hosts it or has a
   * direct route, else through its injection ring. `call`: the API call an injection error names
   * (the user's send, or 'progress' for the protocols' answers).
   */
  #out(proc: number, h: FrameHeader, payload: Uint8Array | null, call = 'progress'): void {
    const c = channelOf(h.srcEndpoint, h.dstEndpoint, this.opts.endpointsPerProcess, this.opts.channels);
    if (this.#hosts[c]) {
      this.transport!.send(proc, h, payload, -1);
      return;
    }
    const d = this.#direct[c];
    if (d !== undefined) {
      d.send(proc, h, payload, -1);
      return;
    }
    this.#bridge.inject(c, proc, h, payload, call);
  }

  #messageInfo(m: number): ProbeInfo {
    const w = this.#w;
    const b = m * SLOT_WORDS;
    return { sourceEndpoint: w[b + SLOT.SRC]!, tag: w[b + SLOT.TAG]!, count: w[b + SLOT.LENGTH]! >>> 0 };
  }

  // --- transport upcalls (threads that host channels) ----------------------------

  #onDeliver(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    this.onFrame?.();
    if (this.#lostPeers[srcProcess] === 1) return;
    const fault = peerFrameFault(srcProcess, h, this.#frameCheck);
    if (fault !== null) {
      this.#protocolError(srcProcess, fault);
      return;
    }
    switch (h.kind) {
      case FRAME_KIND.EAGER:
      case FRAME_KIND.EAGER_SYNC:
      case FRAME_KIND.RNDV_RTS:
        // With a route table, a sender that switched paths tags its frames: the intakes keep them in order across the switch.
        // (Receive lanes and route tables never meet: lanes need one endpoint per process, routes several.)
        if (this.#routes !== null) {
          this.#routes.offer(srcProcess, h, payload);
          return;
        }
        if (this.#lanes !== null && this.#lanes.arrive(srcProcess, h, payload)) return;
        this.#protocol.arrive(srcProcess, h, payload, 0);
        return;
      case FRAME_KIND.SYNC_ACK:
        this.#completion.finishSlot(h.aux);
        return;
      case FRAME_KIND.RNDV_CTS:
        this.#protocol.cts(srcProcess, h);
        return;
      case FRAME_KIND.RNDV_DATA:
        this.#protocol.data(h, payload);
        return;
      case FRAME_KIND.CONTROL:
        if (this.#routes !== null) this.#routes.onControl(srcProcess, h);
        else this.opts.log.warn({ aux: h.aux, src: h.srcEndpoint, dst: h.dstEndpoint, epoch: h.aux2 }, 'control frame dropped: no route table here');
        return;
      default:
        this.opts.log.warn({ kind: h.kind, srcProcess }, 'frame of unknown kind dropped');
    }
  }

  /**
   * Process `proc` sent a frame this device cannot act on (peer-frame-check.ts): what else it sends
   * cannot be trusted, so it is lost, as the transport takes a peer whose frame it refuses.
   */
  #protocolError(proc: number, fault: string): void {
    this.#onPeerLost(proc, { code: 'TSMPI_ERR_PROTOCOL', message: `process ${proc} sent ${fault}` });
  }

  #onPeerLost(proc: number, err: TransportError): void {
    if (this.#closing) return;
    this.#lostPeers[proc] = 1;
    this.opts.log.error({ peer: proc, code: err.code }, 'peer process lost');
    this.#fatal(mpiError(ERR_PROC_FAILED, 'progress', `lost the connection to process ${proc} (${err.code}: ${err.message})`, err), proc);
  }

  /** Fails every pending request of this thread: the job cannot go on (the launcher ends it). */
  #fatal(err: MPIError, lostProcess: number | null): void {
    if (this.#failure === null) this.#failure = err;
    this.shared.markFailed(err.errorClass);
    for (let i = 0; i < this.#completion.reqs.length; i++) {
      const r = this.#completion.reqs[i];
      if (r !== undefined && !r.done) {
        r.error = err;
        this.#completion.complete(r);
      }
    }
    this.#lanes?.fail(err);
    this.onFatal?.(err, lostProcess);
  }

  /**
   * Called when this thread's device fails (engines report it to the main thread); `lostProcess`
   * names the peer whose loss caused it, which the launcher blames instead of this process.
   */
  onFatal: ((err: MPIError, lostProcess: number | null) => void) | null = null;

  /** Told of every frame this thread's transport delivers (engine-poll.ts: a busy channel keeps its engine polling). */
  onFrame: (() => void) | null = null;

  /** Told the length of every rendezvous message whose data this thread is about to send or receive (wait-poll.ts). */
  onRendezvous: ((bytes: number) => void) | null = null;
}

