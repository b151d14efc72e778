/**
 * The device: point-to-point protocols over the shared matching queues and a
 * transport (the CH4 core, in MPICH words). One Device per thread.
 *
 * Protocols (frame kinds in transport/interface.ts):
 *   eager      EAGER(data)                      length <= eagerLimit
 *   sync       EAGER_SYNC(data) -> SYNC_ACK     ssend: the send completes once matched
 *   rendezvous RNDV_RTS -> RNDV_CTS -> RNDV_DATA length > eagerLimit: nothing big is
 *                                               buffered before its receive is posted
 * Messages between endpoints of one process never touch the transport: they
 * take the local path (#arrive is called directly); #out() is the one place
 * that chooses between the same-process path and TCP.
 *
 * Threads. Every request slot has an OWNER (the thread whose JavaScript
 * request it backs). Any thread may match and complete any slot: the owner
 * completes its own directly; for another thread's slot the data goes to
 * shared memory (payload pool, or the big arena for large payloads), the
 * status into the slot, and the slot number into the owner's completion ring,
 * which the owner drains (on its event loop, or in test()). A channel is
 * *hosted* by one thread, which runs its transport: in inline progress the
 * main thread hosts every channel; in threads progress one engine worker per
 * channel does. The host accepts the channel's connections, so everything a
 * process receives on it goes through the host. A thread sends on a channel
 * it hosts directly; a thread that does not host it sends on connections of
 * its own to the peers' hosts (`direct` routes, threads and inline progress:
 * no hop to another thread per message, and MPI orders messages per sending
 * thread only, so one connection per thread keeps the order), or, without
 * direct routes (engines progress), through the channel's injection ring.
 * Answers to a thread's sends (CTS, SYNC_ACK) come back through the host.
 * docs/adr/0015. Nothing here logs or throws per message.
 *
 * Size: one protocol engine over the slots (STYLE rule 7 allows it past 600
 * lines): every path shares the slot words, the owner's request map and the
 * header scratch. The rings between threads are thread-bridge.ts, where an
 * unexpected message's bytes wait is unexpected-payloads.ts; the
 * protocols are unit-tested over the loopback transport (protocols.test.ts).
 */
import { FRAME_FLAG, FRAME_KIND, channelOf, newFrameHeader, type FrameHeader, type ReaderSocketName, type Transport, type TransportError, type TransportFactory } from '../transport/index.ts';
import { setLockHolder, type PayloadPool } from '../shm/index.ts';
import { ANY, ERR_PROC_FAILED, ERR_NO_MEM, MPIError, mpiError } from '../util/index.ts';
import type { Logger } from '../log/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { FLAG, KIND, NIL, SLOT, SLOT_WORDS, SlotPool } from './request-table.ts';
import { STAT, type SharedState } from './shared-state.ts';
import type { ObjectTable } from './object-table.ts';
import { createLifetime, type Lifetime, type RefcountStrategy } from './lifetime.ts';
import { ThreadBridge } from './thread-bridge.ts';
import { ReaderRoutes, type RouteHost } from './reader-routes.ts';
import { UnexpectedPayloads } from './unexpected-payloads.ts';
import { Completion, EMPTY, REQUEST_SLOTS_ENV, slotsExhausted } from './completion.ts';
import { LaneMatcher } from './lane-matcher.ts';


export interface DeviceOptions {
  readonly process: number;
  readonly processCount: number;
  readonly endpointsPerProcess: number;
  readonly eagerLimit: number;
  readonly channels: number;
  readonly jobKey: string;
  readonly listenHost: string;
  /** Ports the transport may listen on (mpiexec --port-range). */
  readonly listenPorts?: { readonly lo: number; readonly hi: number };
  readonly transportFactory: TransportFactory | null;
  readonly log: Logger;
  /** owner id of this thread's requests (0 = main thread) */
  readonly threadId: number;
  /** channels whose transport this thread runs */
  readonly hosted: readonly number[];
  /** row of this thread in the shared statistics */
  readonly statsRow: number;
  /** how requests reference the objects they use (lifetime.ts) */
  readonly refcount: RefcountStrategy;
  /**
   * Receive lanes (setting lean=on, docs/adr/0020-lean-common-path.md): only for the one MPI
   * thread of a process that hosts every channel, one endpoint, no other thread matching.
   */
  readonly lanes?: boolean;
  /**
   * The transport module's reader names (docs/adr/0019), given to the devices of the threads that
   * send (main and workers) in a process with a route table (endpointReceive `thread` where it
   * applies): such a device follows the routes of remote readers. Absent: it never does.
   */
  readonly readerSocketName?: ReaderSocketName;
  /** This thread may read an endpoint (readEndpoint): a worker thread's device with readerSocketName; never the main thread's. */
  readonly readsEndpoints?: boolean;
}

/** Channels a thread sends on directly, and every process's listening address for them. */
export interface DirectRoute {
  readonly channels: readonly number[];
  readonly addresses: readonly string[];
}

/** What probe() reports about a pending message. */
export interface ProbeInfo {
  sourceEndpoint: number;
  tag: number;
  count: number;
}


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
  readonly #big: PayloadPool | null;
  readonly #mt: boolean;
  readonly #me: number;
  readonly #stat: Float64Array;
  readonly #hosts: boolean[];
  /** where unexpected eager messages' bytes wait for their receive */
  readonly #unexpected: UnexpectedPayloads;
  /** big-arena blocks receiving rendezvous data for other threads' receives, by receive slot */
  readonly #dataTargets = new Map<number, number>();
  /** private arrays receiving rendezvous data for this thread's object-form receives, by receive slot: kept, not copied again */
  readonly #privateTargets = new Map<number, Uint8Array>();
  readonly #hdr: FrameHeader = newFrameHeader();
  /** rings to and from the other threads of the process (thread-bridge.ts) */
  readonly #bridge: ThreadBridge;
  /** slots and completion of this thread's requests, and its hold of the event loop (completion.ts) */
  readonly #completion: Completion;
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
    this.pool = new SlotPool(shared.table, opts.threadId >= 0 ? shared.slotCache(opts.threadId) : null);
    this.objects = shared.objects;
    this.lifetime = createLifetime(opts.refcount, shared.objects, shared.buffers.lifetime, opts.threadId);
    this.#big = shared.big;
    this.#unexpected = new UnexpectedPayloads(shared);
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
    this.#eagerInjectLimit = this.#mt ? Math.min(opts.eagerLimit, this.#bridge.maxInjectBytes) : opts.eagerLimit;
    this.#lanes = opts.lanes === true && !this.#mt && opts.endpointsPerProcess === 1
      ? new LaneMatcher({ postDemoted: (r, ctx, src, tag) => this.#postDemoted(r, ctx, src, tag), arriveDemoted: (p, h, data) => this.#arrive(p, h, data, 0, false) }, this.#completion, shared, this.#stat, this.firstEndpoint)
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
        onSent: (token) => this.#onSent(token),
        onPeerLost: (proc, err) => this.#onPeerLost(proc, err),
        payloadTarget: (src, header) => this.#payloadTarget(src, header),
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
        onSent: (token) => this.#onSent(token),
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
      sent: (token) => this.#onSent(token),
      peerLost: (proc, err) => this.#onPeerLost(proc, err),
      payloadTarget: (src, h) => this.#payloadTarget(src, h),
      // A frame the route intakes let through (route-intake.ts): data frames only; marks never reach here.
      arrive: (srcProcess, h, payload) => this.#arrive(srcProcess, h, payload, 0),
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
    this.#postSlot(r, this.#completion.ownSlot(r, KIND.RECV), endpoint, ctx, srcEndpoint, tag);
  }

  /** Posts receive r, which owns `slot`, in the shared queues (and takes a waiting message). */
  #postSlot(r: DevRequest, slot: number, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void {
    const w = this.#w;
    const b = slot * SLOT_WORDS;
    w[b + SLOT.CTX] = ctx;
    w[b + SLOT.SRC] = srcEndpoint;
    w[b + SLOT.TAG] = tag;
    w[b + SLOT.ENDPOINT] = endpoint;
    w[b + SLOT.LENGTH] = r.buf === null ? -1 : r.buf.length;
    const msg = this.shared.queues[endpoint - this.firstEndpoint]!.postRecv(slot);
    if (msg !== NIL) this.#receiveMessage(slot, msg);
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
    this.#postSlot(r, slot, this.firstEndpoint, ctx, src, tag);
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
      this.#sendLocal(r, srcEndpoint, dstEndpoint, ctx, tag, data, flags, sync);
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
        h.aux = this.#sendSlot(r, len);
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
    const slot = this.#sendSlot(r, len);
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

  /** A send slot for r (its LENGTH word: the bytes #countSent counts when it completes). */
  #sendSlot(r: DevRequest, len: number): number {
    const slot = this.#completion.ownSlot(r, KIND.SEND, false);
    this.#w[slot * SLOT_WORDS + SLOT.LENGTH] = len;
    return slot;
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
    this.#receiveMessage(slot, msgSlot);
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

  // --- slots, completion, event loop ----------------------------------------------











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

  // --- protocols ---------------------------------------------------------------

  #sendLocal(r: DevRequest, src: number, dst: number, ctx: number, tag: number, data: Uint8Array, flags: number, sync: boolean): void {
    const h = this.#hdr;
    h.kind = sync ? FRAME_KIND.EAGER_SYNC : FRAME_KIND.EAGER;
    h.flags = flags;
    h.contextId = ctx;
    h.srcEndpoint = src;
    h.dstEndpoint = dst;
    h.tag = tag;
    h.aux = sync ? this.#sendSlot(r, data.length) : NIL;
    h.aux2 = 0;
    h.payloadLength = data.length;
    this.#arrive(this.opts.process, h, data, FLAG.LOCAL);
    if (!sync) {
      this.#completion.countSent(data.length);
      this.#completion.complete(r);
    }
  }

  /** An EAGER, EAGER_SYNC or RNDV_RTS frame for one of our endpoints. */
  #arrive(srcProcess: number, h: FrameHeader, payload: Uint8Array, extraFlags: number, count = true): void {
    const rndv = h.kind === FRAME_KIND.RNDV_RTS;
    const len = rndv ? h.aux2 : payload.length;
    if (count) {
      // Not when a lane's message moves to the shared queues: it was counted when it arrived.
      const st = this.#stat;
      st[STAT.RECEIVED]!++;
      st[STAT.BYTES_RECEIVED]! += len;
    }
    const msg = this.pool.alloc(KIND.MESSAGE);
    if (msg === NIL) {
      this.#fatal(mpiError(ERR_NO_MEM, 'progress', `all ${this.shared.table.capacity} request slots are in use by unexpected messages; raise ${REQUEST_SLOTS_ENV}`), null);
      return;
    }
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    w[b + SLOT.CTX] = h.contextId;
    w[b + SLOT.SRC] = h.srcEndpoint;
    w[b + SLOT.TAG] = h.tag;
    w[b + SLOT.LENGTH] = len;
    w[b + SLOT.ENDPOINT] = h.dstEndpoint;
    w[b + SLOT.OWNER] = NIL;
    w[b + SLOT.FLAGS] =
      extraFlags |
      ((h.flags & FRAME_FLAG.OBJECT) !== 0 ? FLAG.OBJECT : 0) |
      (h.kind === FRAME_KIND.EAGER_SYNC ? FLAG.SYNC : 0) |
      (rndv ? FLAG.RNDV : 0);
    w[b + SLOT.PEER_SLOT] = h.kind === FRAME_KIND.EAGER ? NIL : h.aux;
    w[b + SLOT.PEER_PROCESS] = srcProcess;
    const queues = this.shared.queues[h.dstEndpoint - this.firstEndpoint]!;
    // Keep the bytes in shared memory first: once queued, another thread may take the message.
    if (!rndv && len > 0) this.#keep(msg, payload);
    const recv = queues.arrive(msg);
    if (recv !== NIL) {
      this.#deliverMatched(recv, msg, payload);
      this.#unexpected.drop(msg);
      this.pool.free(msg);
      return;
    }
    queues.notifyArrival();
  }

  /** Stores an arriving payload for a later receive (unexpected-payloads.ts); no memory left fails the job. */
  #keep(msg: number, payload: Uint8Array): void {
    if (!this.#unexpected.keep(msg, payload)) {
      this.#fatal(mpiError(ERR_NO_MEM, 'progress', `no shared memory left for a ${payload.length}-byte unexpected message`), null);
    }
  }

  /** An unexpected message `msg` now matched by this thread's receive slot `recv`. */
  #receiveMessage(recv: number, msg: number): void {
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    const len = w[b + SLOT.LENGTH]! >>> 0;
    const flags = w[b + SLOT.FLAGS]!;
    const data = (flags & FLAG.RNDV) !== 0 || len === 0 ? EMPTY : this.#unexpected.bytesOf(msg, len, flags);
    this.#deliverMatched(recv, msg, data);
    this.#unexpected.drop(msg);
    this.pool.free(msg);
  }

  /** A matched message (slot `msg`) for receive slot `recv`; its data, if eager, is `payload`. */
  #deliverMatched(recv: number, msg: number, payload: Uint8Array): void {
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    const rb = recv * SLOT_WORDS;
    const flags = w[b + SLOT.FLAGS]!;
    const src = w[b + SLOT.SRC]!;
    const tag = w[b + SLOT.TAG]!;
    w[rb + SLOT.ST_SOURCE] = src;
    w[rb + SLOT.ST_TAG] = tag;
    if ((flags & FLAG.OBJECT) !== 0) w[rb + SLOT.FLAGS] |= FLAG.OBJECT;
    if ((flags & FLAG.RNDV) !== 0) {
      // Clear to send: the data will come straight to this receive, which now expects (FLAG.RNDV) up to the announced length.
      w[rb + SLOT.FLAGS] |= FLAG.RNDV;
      w[rb + SLOT.ST_COUNT] = w[b + SLOT.LENGTH]!;
      const h = this.#hdr;
      h.kind = FRAME_KIND.RNDV_CTS;
      h.flags = 0;
      h.contextId = w[b + SLOT.CTX]!;
      h.srcEndpoint = w[b + SLOT.ENDPOINT]!;
      h.dstEndpoint = src;
      h.tag = tag;
      h.aux = w[b + SLOT.PEER_SLOT]!;
      h.aux2 = recv;
      h.payloadLength = 0;
      this.#out(w[b + SLOT.PEER_PROCESS]!, h, null);
      this.onRendezvous?.(w[b + SLOT.LENGTH]! >>> 0);
      return;
    }
    if ((flags & FLAG.SYNC) !== 0) this.#ackSync(msg);
    this.#completion.fillSlot(recv, payload);
  }



  #ackSync(msg: number): void {
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    const senderSlot = w[b + SLOT.PEER_SLOT]!;
    if ((w[b + SLOT.FLAGS]! & FLAG.LOCAL) !== 0) {
      this.#completion.finishSlot(senderSlot);
      return;
    }
    const h = this.#hdr;
    h.kind = FRAME_KIND.SYNC_ACK;
    h.flags = 0;
    h.contextId = w[b + SLOT.CTX]!;
    h.srcEndpoint = w[b + SLOT.ENDPOINT]!;
    h.dstEndpoint = w[b + SLOT.SRC]!;
    h.tag = 0;
    h.aux = senderSlot;
    h.aux2 = 0;
    h.payloadLength = 0;
    this.#out(w[b + SLOT.PEER_PROCESS]!, h, null);
  }

  // --- transport upcalls (threads that host channels) ----------------------------

  #onDeliver(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    this.onFrame?.();
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
        this.#arrive(srcProcess, h, payload, 0);
        return;
      case FRAME_KIND.SYNC_ACK:
        this.#completion.finishSlot(h.aux);
        return;
      case FRAME_KIND.RNDV_CTS: {
        const s = h.aux;
        const b = s * SLOT_WORDS;
        const w = this.#w;
        const own = w[b + SLOT.OWNER] === this.#me ? this.#completion.reqs[s] : undefined;
        let data: Uint8Array;
        if (own !== undefined && (w[b + SLOT.FLAGS]! & FLAG.BIG) === 0) {
          data = own.buf!;
        } else {
          const off = w[b + SLOT.PAYLOAD]!;
          data = this.#big!.bytes.subarray(off, off + w[b + SLOT.LENGTH]!);
        }
        const out = this.#hdr;
        out.kind = FRAME_KIND.RNDV_DATA;
        out.flags = 0;
        out.contextId = h.contextId;
        out.srcEndpoint = h.dstEndpoint;
        out.dstEndpoint = h.srcEndpoint;
        out.tag = 0;
        out.aux = h.aux2;
        out.aux2 = 0;
        out.payloadLength = data.length;
        this.transport!.send(srcProcess, out, data, s);
        this.onRendezvous?.(data.length);
        return;
      }
      case FRAME_KIND.RNDV_DATA: {
        const recv = h.aux;
        const w = this.#w;
        const rb = recv * SLOT_WORDS;
        if (w[rb + SLOT.OWNER] === this.#me) {
          const r = this.#completion.reqs[recv];
          if (r === undefined) return;
          r.sourceEndpoint = w[rb + SLOT.ST_SOURCE]!;
          r.tag = w[rb + SLOT.ST_TAG]!;
          if (!r.objectMode && r.buf !== null && payload.buffer === r.buf.buffer && payload.byteOffset === r.buf.byteOffset) {
            r.count = payload.length;
            this.#completion.complete(r);
          } else if (r.objectMode && this.#privateTargets.get(recv) === payload && (w[rb + SLOT.FLAGS]! & FLAG.OBJECT) === 0) {
            // Bytes (a collective's recv) landed in an array of their own: hand it over without another copy.
            this.#privateTargets.delete(recv);
            r.count = payload.length;
            r.value = payload;
            this.#completion.complete(r);
          } else {
            this.#privateTargets.delete(recv);
            this.#completion.fill(r, payload, (w[rb + SLOT.FLAGS]! & FLAG.OBJECT) !== 0);
          }
          return;
        }
        const target = this.#dataTargets.get(recv);
        if (target !== undefined) {
          this.#dataTargets.delete(recv);
          // The transport may have delivered the bytes elsewhere (a frame whole in one chunk): then copy them in.
          const big = this.#big!.bytes;
          if (payload.buffer !== big.buffer || payload.byteOffset !== big.byteOffset + target) big.set(payload, target);
          w[rb + SLOT.PAYLOAD] = target;
          w[rb + SLOT.FLAGS] |= FLAG.BIG;
          w[rb + SLOT.ST_COUNT] = payload.length;
          this.#completion.finishSlot(recv);
        } else {
          this.#completion.fillSlot(recv, payload);
        }
        return;
      }
      case FRAME_KIND.CONTROL:
        if (this.#routes !== null) this.#routes.onControl(srcProcess, h);
        else this.opts.log.warn({ aux: h.aux, src: h.srcEndpoint, dst: h.dstEndpoint, epoch: h.aux2 }, 'control frame dropped: no route table here');
        return;
      default:
        this.opts.log.warn({ kind: h.kind, srcProcess }, 'frame of unknown kind dropped');
    }
  }

  /**
   * The array rendezvous data for receive slot h.aux is read into. Every frame this device asked
   * for gets one (the transport refuses a large payload it was not asked for, interface.ts): a
   * receive that sent a CTS (FLAG.RNDV) for no more than the RTS announced (ST_COUNT).
   */
  #payloadTarget(_src: number, h: FrameHeader): Uint8Array | null {
    if (h.kind !== FRAME_KIND.RNDV_DATA) return null;
    const recv = h.aux;
    const w = this.#w;
    const rb = recv * SLOT_WORDS;
    const plen = h.payloadLength;
    if (recv >= this.shared.table.capacity || (w[rb + SLOT.FLAGS]! & FLAG.RNDV) === 0 || plen > w[rb + SLOT.ST_COUNT]! >>> 0) return null;
    if (w[rb + SLOT.OWNER] === this.#me) {
      const r = this.#completion.reqs[recv];
      if (r === undefined) return null;
      if (r.objectMode) {
        const own = new Uint8Array(plen);
        this.#privateTargets.set(recv, own);
        return own;
      }
      // A receive buffer too short (#fill truncates): a scratch array.
      if (r.buf === null || r.buf.length < plen) return new Uint8Array(plen);
      return r.buf.subarray(0, plen);
    }
    const big = this.#big;
    const off = big === null ? NIL : big.alloc(plen);
    if (off === NIL) return new Uint8Array(plen); // #fillSlot then fails the receive with ERR_NO_MEM
    this.#dataTargets.set(recv, off);
    return big!.bytes.subarray(off, off + plen);
  }

  /** Rendezvous data of send slot `token` has left: free its shared copy, complete the send. */
  #onSent(token: number): void {
    const w = this.#w;
    const b = token * SLOT_WORDS;
    if ((w[b + SLOT.FLAGS]! & FLAG.BIG) !== 0) {
      this.#big!.free(w[b + SLOT.PAYLOAD]!);
      w[b + SLOT.PAYLOAD] = NIL;
    }
    this.#completion.finishSlot(token);
  }

  #onPeerLost(proc: number, err: TransportError): void {
    if (this.#closing) return;
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

