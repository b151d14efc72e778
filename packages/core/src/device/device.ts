/**
 * The device: one thread's point-to-point engine, a facade over the parts that do the work. One
 * Device per thread (main, MPI.Worker, channel engine). It builds its parts at construction and
 * chooses, once each, the ones that differ between layouts:
 *
 *   completion.ts     slots and completion of this thread's requests, its hold of the event loop
 *   protocol.ts       eager / synchronous / rendezvous over the slots and the shared queues
 *   matcher.ts        the one matcher (selectMatcher): the shared per-source queues
 *                     (match-queues.ts, the paper's) or the receive lanes (lane-matcher.ts)
 *   send-path.ts      the one send path (selectSendPath, at start): hosted, direct, injected,
 *                     or any of these behind a remote reader's route (reader-routes.ts)
 *   device-wiring.ts  listen, start, close, the transports' upcalls, failure
 *   thread-bridge.ts  the rings between the threads of a process (injection, completion)
 *
 * What stays here is what the API calls: send, receive, probe, cancel, poll, close; a byte view's
 * send and receive (sendBytes, recvBytes) take the lean route of docs/adr/0020 where it applies.
 * Messages between endpoints of one process never touch a transport (Protocol.local). Nothing here
 * logs or throws per message; unit tests: device-matrix.test.ts, protocols.test.ts (loopback).
 */
import { FRAME_FLAG, FRAME_KIND, channelOf, newFrameHeader, type ForeignPeer, type FrameHeader, type Transport } from '../transport/index.ts';
import { setLockHolder } from '../shm/index.ts';
import type { MPIError } from '../util/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { KIND, NIL, SLOT, SLOT_WORDS, SlotPool } from './request-table.ts';
import type { SharedState } from './shared-state.ts';
import type { ObjectTable } from './object-table.ts';
import { createLifetime, type Lifetime } from './lifetime.ts';
import { ThreadBridge } from './thread-bridge.ts';
import { Completion } from './completion.ts';
import { Protocol } from './protocol.ts';
import { selectMatcher, type Matcher } from './matcher.ts';
import { DeviceWiring, type CoupledPeers } from './device-wiring.ts';
import { NO_READER, type EndpointReader } from './endpoint-reader.ts';
import { RmaTarget } from './rma-target.ts';
import type { DeviceOptions, DirectRoute, ProbeInfo } from './device-options.ts';

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
  readonly #w: Int32Array;
  readonly #hdr: FrameHeader = newFrameHeader();
  readonly #J: number;
  readonly #channels: number;
  /** slots and completion of this thread's requests, and its hold of the event loop (completion.ts) */
  readonly #completion: Completion;
  /** the eager, synchronous and rendezvous protocols (protocol.ts) */
  readonly #protocol: Protocol;
  /** the one matcher (matcher.ts) */
  readonly #matcher: Matcher;
  /** transports, upcalls, reader routes, failure (device-wiring.ts) */
  readonly #wiring: DeviceWiring;
  /** the one send path (send-path.ts), chosen at start; until then the wiring's start hold (what the device sends waits for start) */
  #path: DeviceWiring['path'];
  /** the windows this thread applies one-sided operations to (rma-target.ts), and its way to send them */
  readonly rma: RmaTarget = new RmaTarget({
    out: (proc, h, payload, call) => this.#path.out(proc, h, payload, call),
    eagerMax: (src, dst) => this.#path.eagerMax(channelOf(src, dst, this.#J, this.#channels)),
    processOf: (endpoint) => this.processOf(endpoint),
  });

  constructor(opts: DeviceOptions, shared: SharedState) {
    this.opts = opts;
    this.shared = shared;
    this.#w = shared.table.words;
    this.pool = new SlotPool(shared.table, opts.threadId >= 0 ? shared.slotCache(opts.threadId) : null);
    this.objects = shared.objects;
    this.lifetime = createLifetime(opts.refcount, shared.objects, shared.buffers.lifetime, opts.threadId);
    this.#J = opts.endpointsPerProcess;
    this.#channels = opts.channels;
    const mt = shared.layout.multithreaded;
    const stat = shared.statsRow(opts.statsRow);
    // The shared spin locks this thread takes name it (shm/spin-lock.ts); its row, if recycled, has not
    // ended, and names this thread's kernel id.
    setLockHolder(opts.statsRow);
    shared.markStarted(opts.statsRow);
    this.endpointCount = opts.processCount * opts.endpointsPerProcess;
    this.firstEndpoint = opts.process * opts.endpointsPerProcess;
    const bridge = new ThreadBridge(shared, opts.threadId < 0); // an engine rings owners once per batch
    this.#completion = new Completion(shared, this.pool, this.lifetime, bridge, opts.threadId, stat, mt && opts.threadId >= 0 ? shared.completion(opts.threadId) : null);
    this.#protocol = new Protocol({
      out: (proc, h, payload, call = 'progress') => this.#path.out(proc, h, payload, call),
      sendData: (proc, h, data, token) => this.#wiring.transport!.send(proc, h, data, token),
      rendezvous: (bytes) => this.onRendezvous?.(bytes),
      fatal: (err, lostProcess) => this.#wiring.fatal(err, lostProcess),
      protocolError: (proc, fault) => this.#wiring.protocolError(proc, fault),
    }, shared, this.#completion, this.pool, stat, opts.threadId, opts.process, this.firstEndpoint);
    this.#matcher = selectMatcher({
      lanes: opts.lanes === true, multithreaded: mt, endpointsPerProcess: opts.endpointsPerProcess, firstEndpoint: this.firstEndpoint, threadId: opts.threadId, stat: stat,
    }, shared, this.#protocol, this.#completion, this.pool);
    this.#wiring = new DeviceWiring({
      opts, shared, completion: this.#completion, protocol: this.#protocol, matcher: this.#matcher, bridge,
      firstEndpoint: this.firstEndpoint, endpointCount: this.endpointCount,
      injectLimit: mt ? Math.min(opts.eagerLimit, bridge.maxInjectBytes) : opts.eagerLimit,
    }, this);
    this.#path = this.#wiring.path;
  }

  get stats(): { messagesSent: number; messagesReceived: number; bytesSent: number; bytesReceived: number } {
    return this.#completion.stats();
  }

  /** The transport of the channels this thread hosts (listen), or null. */
  get transport(): Transport | null {
    return this.#wiring.transport;
  }

  /** Frames sent and received per channel (MPI.stats perChannel), as the transport counts them. */
  channelStats(): { sent: number; received: number }[] | null {
    return this.#wiring.transport?.channelStats() ?? null;
  }

  // --- wiring (device-wiring.ts) ---------------------------------------------------

  /** Creates the transport of the hosted channels and starts listening; resolves to the address to publish (null: none). */
  listen(): Promise<string | null> {
    return this.#wiring.listen();
  }

  /**
   * Gives the transport its peers, opens this thread's direct routes (each owns `channels`;
   * `addresses[p]` is process p's host of them), chooses the send path. Once, before any send.
   */
  start(addresses: readonly string[] | null, direct: readonly DirectRoute[] = []): void {
    this.#path = this.#wiring.start(addresses, direct);
  }

  /** Addresses of processes that joined after start (dynamic processes, `foreign`: a coupled job's; '' = unchanged) to this thread's transports; false when one cannot take them. */
  addPeers(addresses: readonly string[], perChannel: readonly (readonly string[])[] | null = null, foreign?: ReadonlyMap<number, ForeignPeer>): boolean {
    return this.#wiring.addPeers(addresses, perChannel, foreign);
  }

  /** Another job's processes coupled at a port (coupled-peers.ts): failed as their mpiexec says, released at disconnect. */
  get coupled(): CoupledPeers { return this.#wiring.coupled; }
  /** Opens direct connections to the processes of this thread's world, from `worldFirst` on (init awaits it; earlier worlds' open on first use: some may be gone). */
  openDirect(worldFirst = 0): Promise<void> {
    return this.#wiring.openDirect(worldFirst);
  }

  close(): Promise<void> {
    return this.#wiring.close();
  }
  destroy(): void {
    this.#wiring.destroy();
  }
  failure(): Error | null {
    return this.#wiring.failure;
  }

  /** This thread's endpoint reader and its routes (reader-routes.ts, docs/adr/0019), or NO_READER in a process without a route table. */
  get readers(): EndpointReader {
    return this.#wiring.routes ?? NO_READER;
  }

  processOf(endpoint: number): number {
    return (endpoint / this.#J) | 0;
  }

  isLocal(endpoint: number): boolean {
    return endpoint >= this.firstEndpoint && endpoint < this.firstEndpoint + this.#J;
  }

  // --- receiving (matcher.ts) ----------------------------------------------------------

  /**
   * Whether a communicator's byte-view Isends and Irecvs come to sendBytes and recvBytes (asked once
   * per thread at init, Pt2ptComm._bind): a predefined one (its contexts are never reused while a lane
   * could hold their messages), on a device that takes no references to predefined objects (nor does the lean route).
   */
  binds(predefined: boolean): boolean {
    return predefined && !this.lifetime.countsPredefined;
  }

  /**
   * Posts a receive on local endpoint `endpoint` for (ctx, srcEndpoint|ANY, tag|ANY).
   * r.buf (buffer form) or r.objectMode must be set. Completes r now or later.
   */
  postRecv(r: DevRequest, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void {
    this.#matcher.postRecv(r, endpoint, ctx, srcEndpoint, tag);
  }

  /**
   * A checked receive into byte view `buf` from a rank's endpoint, on a bound communicator (binds) or a
   * communicator's collective context: in its context's lane where the matcher takes it (the lean
   * route, docs/adr/0020), else as postRecv. `comm`: the handle a user request references; 0: none.
   */
  recvBytes(endpoint: number, ctx: number, srcEndpoint: number, tag: number, buf: Uint8Array, comm: number, call: string): DevRequest {
    const lr = this.#matcher.leanRecv(ctx, srcEndpoint, tag, buf, call);
    if (lr !== null) return lr;
    const r = new DevRequest(REQ_KIND.RECV, call);
    r.buf = buf;
    if (comm !== 0) this.lifetime.acquire(r, comm, 0, 0);
    this.#matcher.postRecv(r, endpoint, ctx, srcEndpoint, tag);
    return r;
  }

  /** recvBytes whose message lands in a fresh array (r.value): a collective's receive (LaneMatcher.leanRecvBytes, docs/adr/0022). */
  recvFresh(endpoint: number, ctx: number, srcEndpoint: number, tag: number, call: string): DevRequest {
    const lr = this.#matcher.leanRecvBytes(ctx, srcEndpoint, tag, call);
    if (lr !== null) return lr;
    const r = new DevRequest(REQ_KIND.RECV, call);
    r.objectMode = true; // a fresh Uint8Array of the message's length
    this.#matcher.postRecv(r, endpoint, ctx, srcEndpoint, tag);
    return r;
  }

  /** Non-destructive look at the first message a receive (ctx, src, tag) on `endpoint` would match. */
  probe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): ProbeInfo | null {
    const m = this.#matcher.probe(endpoint, ctx, srcEndpoint, tag);
    return m === NIL ? null : this.#messageInfo(m);
  }

  /** Matched probe: removes the message from matching and returns its slot. */
  mprobe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): { slot: number; info: ProbeInfo } | null {
    const m = this.#matcher.takeMatching(endpoint, ctx, srcEndpoint, tag);
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

  /** Resolves once a new unexpected message may have arrived at `endpoint` (blocking probes re-check); holds the loop meanwhile. */
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

  /**
   * Cancels pending request r. A receive that has not matched: true, r completed as cancelled. A
   * synchronous or rendezvous send: asks for its message back (Protocol.cancelSend) and returns
   * false; r completes later, as cancelled if no receive had matched it. An eager send completed at once.
   */
  cancel(r: DevRequest): boolean {
    if (r.done) return false;
    if (r.kind === REQ_KIND.SEND) {
      this.#protocol.cancelSend(r);
      return false;
    }
    return r.kind === REQ_KIND.RECV && this.#matcher.cancelRecv(r);
  }

  /** Completes a request created outside the protocols (generalized: collectives, PROC_NULL), which holds nothing of the event loop. */
  completeNow(r: DevRequest): void {
    this.#completion.complete(r, false);
  }

  /** Completes this thread's requests that other threads finished (drains the completion ring). */
  poll(): void {
    this.#completion.poll();
  }

  unexpectedQueued(): number {
    return this.#matcher.unexpectedQueued();
  }

  postedQueued(): number {
    return this.#matcher.postedQueued();
  }

  /** Diagnostics (tests): operations of this thread holding the event loop (a lane with posted receives counts once). */
  heldOperations(): number {
    return this.#completion.active;
  }

  /** Diagnostics (tests): context `ctx`'s lane state (receive-lanes.ts LANE_STATE), or -1 where there are no lanes. */
  laneState(ctx: number): number {
    return this.#matcher.laneState(ctx);
  }

  // --- sending (send-path.ts) ----------------------------------------------------------

  /**
   * A checked standard send of byte view `data`, on a bound communicator (binds) or a communicator's
   * collective context. The lean route (docs/adr/0020) where it applies: an eager message to another
   * process on a channel this thread hosts goes straight into the channel's batch, counted as sent,
   * with no request, slot, loop hold or header (an eager send completes at once anyway): null. Else
   * the general send's request, made here; `comm`: the handle a user request references; 0: none.
   */
  sendBytes(srcEndpoint: number, dstEndpoint: number, ctx: number, tag: number, data: Uint8Array, comm: number, call: string): DevRequest | null {
    if (this.#wiring.failure === null && this.#path.queueEager(srcEndpoint, dstEndpoint, ctx, tag, data)) {
      this.#completion.countSent(data.length, ctx);
      return null;
    }
    const r = new DevRequest(REQ_KIND.SEND, call);
    if (comm !== 0) this.lifetime.acquire(r, comm, 0, 0);
    this.send(r, srcEndpoint, dstEndpoint, ctx, tag, data, false, false);
    return r;
  }

  /**
   * Sends `data` from endpoint srcEndpoint to dstEndpoint (`objectForm`: msgpack; `sync`: completes
   * once matched); `data` must not change until r completes. A failed device (a peer lost) sends
   * nothing: r completes with the failure. MPI.stats counts a send once it completes without error
   * (Completion.countSent): at once when eager (once written if its connection is still opening: Protocol.eagerSlot),
   * once matched (sync) or its data has left (rendezvous).
   */
  send(r: DevRequest, srcEndpoint: number, dstEndpoint: number, ctx: number, tag: number, data: Uint8Array, objectForm: boolean, sync: boolean): void {
    const len = data.length;
    this.#completion.hold();
    if (this.#wiring.failure !== null || this.shared.failedClass() !== 0) {
      this.#wiring.failSend(r);
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
    const proc = (dstEndpoint / this.#J) | 0;
    const c = channelOf(srcEndpoint, dstEndpoint, this.#J, this.#channels);
    const path = this.#path;
    // Only a frame that goes through an injection ring is bounded by it; hosted channels and direct routes are not.
    if (len <= path.eagerMax(c)) {
      h.payloadLength = len;
      const waits = !sync && path.waitsToOpen(proc, c);
      const slot = this.#protocol.eagerSlot(r, h, sync, waits);
      this.#first(r, proc, h, len === 0 ? null : data, waits ? slot : -1);
      if (slot === NIL) {
        this.#completion.countSent(len, ctx);
        this.#completion.complete(r);
      }
      return;
    }
    const slot = this.#protocol.rendezvousSlot(r, data, path.hosts(c));
    this.#protocol.noteSend(slot, h);
    h.kind = FRAME_KIND.RNDV_RTS;
    h.aux = slot;
    h.aux2 = len;
    h.payloadLength = 0;
    this.#first(r, proc, h, null, -1);
  }

  /**
   * The first frame of send r, on the send path (SendPath.first). When it cannot go (its channel's
   * thread has stopped, or the process is failing: ThreadBridge.inject throws) r is undone, its
   * shared copy freed, and the error propagates to the caller's call; nothing is counted.
   */
  #first(r: DevRequest, proc: number, h: FrameHeader, payload: Uint8Array | null, sentToken: number): void {
    try {
      this.#path.first(proc, h, payload, r.call, sentToken);
    } catch (e) {
      this.#protocol.abandonSend(r);
      throw e;
    }
  }

  #messageInfo(m: number): ProbeInfo {
    const w = this.#w;
    const b = m * SLOT_WORDS;
    return { sourceEndpoint: w[b + SLOT.SRC]!, tag: w[b + SLOT.TAG]!, count: w[b + SLOT.LENGTH]! >>> 0 };
  }

  // --- hooks -----------------------------------------------------------------------------

  /** Called when this device fails (engines report it to the main thread); `lostProcess`: the peer the launcher blames. */
  onFatal: ((err: MPIError, lostProcess: number | null) => void) | null = null;
  /** Told of every frame this thread's transport delivers (engine-poll.ts: a busy channel keeps its engine polling). */
  onFrame: (() => void) | null = null;
  /** Told the length of every rendezvous message whose data this thread is about to send or receive (wait-poll.ts). */
  onRendezvous: ((bytes: number) => void) | null = null;
}
