/**
 * Loopback transport: N simulated processes wired to each other inside one
 * thread (MPICH stubnm / Open MPI btl/self). Core's device unit tests run
 * simulated ranks over it, and it passes the same conformance suite as TCP.
 *
 * Contract (interface.ts) as implemented here
 * - Delivery is asynchronous: frames a transport sends are queued and
 *   delivered in one setImmediate batch per sender (like one socket read), in
 *   send order, so per-(s, d) order holds (in fact per-sender order).
 * - send() copies the header; with sentToken < 0 it copies the payload, with
 *   sentToken >= 0 it keeps a reference and calls onSent(sentToken) right
 *   after that frame was delivered.
 * - Payloads of at least TARGET_MIN_BYTES are offered to payloadTarget and
 *   copied into the returned array, which onDeliver then receives.
 * - The lean path's typed calls as TCP has them: queueEager (a plain EAGER
 *   frame from numbers; false, having done nothing, when this instance or the
 *   peer's is not open) and handlers.onEager, offered each plain EAGER frame
 *   below TARGET_MIN_BYTES before onDeliver.
 * - Channels: a transport owns options.channels (default all); a frame uses
 *   channel channelOf(src, dst, J, C) and is routed to the instance of dstProcess that
 *   owns that channel (several instances per process model threads mode). An
 *   instance with threadConnections (a user thread's direct route) only sends.
 * - close(): delivers what is queued and keeps receiving until nothing queued
 *   for it by others is pending (as a TCP instance reads until its peers end
 *   their side), then the instance is closed; a closed instance receives nothing. A sender to a closed or destroyed peer drops the
 *   frame and reports onPeerLost(peer, TSMPI_ERR_PEER_CLOSED) once.
 *   destroy(): drops the queue; every other live, started, non-closing
 *   instance is told onPeerLost(process) once (as TCP peers would notice).
 * - Handlers run on the thread that created the network; nothing here is
 *   shared between threads.
 */
import {
  FRAME_KIND, channelOf, newFrameHeader, type FrameHeader, type Transport, type TransportError, type TransportFactory,
  type TransportHandlers, type TransportLog, type TransportOptions,
} from './interface.ts';

/** Payloads of at least this many bytes are offered to payloadTarget (matches the TCP default). */
export const LOOPBACK_TARGET_MIN_BYTES = 64 * 1024;
/** send() returns false once this many payload bytes wait for delivery (matches the TCP default). */
export const LOOPBACK_HIGH_WATER_MARK_BYTES = 4 * 1024 * 1024;

export interface LoopbackNetworkOptions {
  /** Channels per process pair (default 1). */
  readonly channelCount?: number;
  /** Endpoints per process (default 1): picks each frame's channel (interface.ts channelOf). */
  readonly endpointsPerProcess?: number;
  /** Handlers of each process (index = process), or a function giving them. */
  readonly handlers: readonly TransportHandlers[] | ((process: number) => TransportHandlers);
  /** Logger (default: silent). */
  readonly log?: TransportLog;
}

interface QueuedFrame {
  dst: number;
  channel: number;
  header: FrameHeader;
  payload: Uint8Array;
  token: number;
}

const EMPTY = new Uint8Array(0);
const STATE_OPEN = 0;
const STATE_CLOSING = 1;
const STATE_CLOSED = 2;

const silentLog: TransportLog = { debug() {}, info() {}, warn() {}, error() {} };

/** The in-process "network": routes frames to the instance owning (process, channel). */
class LoopbackHub {
  readonly processCount: number;
  readonly channelCount: number;
  readonly routes: (LoopbackTransport | undefined)[];
  readonly members: LoopbackTransport[] = [];

  constructor(processCount: number, channelCount: number) {
    this.processCount = processCount;
    this.channelCount = channelCount;
    this.routes = new Array<LoopbackTransport | undefined>(processCount * channelCount);
  }
}

class LoopbackTransport implements Transport {
  readonly #hub: LoopbackHub;
  readonly #process: number;
  readonly #handlers: TransportHandlers;
  readonly #owned: boolean[];
  readonly #endpointsPerProcess: number;
  readonly #sent: number[];
  readonly #received: number[];
  readonly #rxHeader = newFrameHeader();
  /** queueEager's header (flags, seq, aux, aux2 stay zero) */
  readonly #eagerHeader = newFrameHeader();
  #queue: QueuedFrame[] = [];
  /** The other queue array: the batch being delivered while new sends fill #queue. */
  #draining: QueuedFrame[] = [];
  /** Frame records reused across sends. */
  readonly #freeFrames: QueuedFrame[] = [];
  #queuedBytes = 0;
  /** Frames other instances have queued for this one and not yet delivered. */
  #inboundPending = 0;
  #isScheduled = false;
  #state = STATE_OPEN;
  #isStarted = false;
  readonly #reported: boolean[];
  #closeWaiters: (() => void)[] = [];

  constructor(hub: LoopbackHub, options: TransportOptions) {
    const C = hub.channelCount;
    if (options.channelCount !== C || options.processCount !== hub.processCount) {
      throw new RangeError('loopback: channelCount/processCount differ from the network');
    }
    this.#hub = hub;
    this.#process = options.process;
    this.#handlers = options.handlers;
    this.#endpointsPerProcess = options.endpointsPerProcess ?? 1;
    this.#owned = new Array<boolean>(C).fill(options.channels === undefined);
    if (options.channels !== undefined) for (const c of options.channels) this.#owned[c] = true;
    this.#sent = new Array<number>(C).fill(0);
    this.#received = new Array<number>(C).fill(0);
    this.#reported = new Array<boolean>(hub.processCount).fill(false);
    // A thread's own connections only send (TCP: it never listens): frames to its process reach the channel's host.
    for (let c = 0; c < C && options.threadConnections !== true; c++) {
      if (this.#owned[c] === true) hub.routes[options.process * C + c] = this;
    }
    hub.members.push(this);
  }

  get process(): number {
    return this.#process;
  }

  listen(): Promise<string> {
    return Promise.resolve(`loopback:${this.#process}`);
  }

  start(): void {
    this.#isStarted = true;
  }

  send(dstProcess: number, header: FrameHeader, payload: Uint8Array | null, sentToken: number): boolean {
    if (this.#state !== STATE_OPEN) return true;
    const hub = this.#hub;
    const C = hub.channelCount;
    const channel = channelOf(header.srcEndpoint, header.dstEndpoint, this.#endpointsPerProcess, C);
    if (this.#owned[channel] !== true) throw new RangeError(`loopback: channel ${channel} is not owned by this transport`);
    if (dstProcess < 0 || dstProcess >= hub.processCount) throw new RangeError(`loopback: process ${dstProcess} is out of range`);
    const dst = hub.routes[dstProcess * C + channel];
    if (dst === undefined || dst.#state === STATE_CLOSED) {
      setImmediate(reportLost, this, dstProcess);
      return true;
    }
    let body: Uint8Array = EMPTY;
    if (payload !== null && payload.length > 0) body = sentToken >= 0 ? payload : payload.slice();
    const frame = this.#freeFrames.pop() ?? { dst: 0, channel: 0, header: newFrameHeader(), payload: EMPTY, token: -1 };
    frame.dst = dstProcess;
    frame.channel = channel;
    Object.assign(frame.header, header);
    frame.header.payloadLength = body.length;
    frame.payload = body;
    frame.token = sentToken;
    this.#queue.push(frame);
    this.#queuedBytes += body.length;
    dst.#inboundPending++;
    this.#sent[channel]!++;
    if (!this.#isScheduled) {
      this.#isScheduled = true;
      setImmediate(deliverBatch, this);
    }
    return this.#queuedBytes <= LOOPBACK_HIGH_WATER_MARK_BYTES;
  }

  queueEager(dstProcess: number, channel: number, contextId: number, srcEndpoint: number, dstEndpoint: number, tag: number, payload: Uint8Array): boolean {
    const dst = this.#hub.routes[dstProcess * this.#hub.channelCount + channel];
    if (this.#state !== STATE_OPEN || this.#owned[channel] !== true || dst === undefined || dst.#state !== STATE_OPEN) return false;
    const h = this.#eagerHeader;
    h.kind = FRAME_KIND.EAGER;
    h.contextId = contextId;
    h.srcEndpoint = srcEndpoint;
    h.dstEndpoint = dstEndpoint;
    h.tag = tag;
    this.send(dstProcess, h, payload, -1);
    return true;
  }

  channelStats(): { sent: number; received: number }[] {
    return this.#sent.map((sent, c) => ({ sent, received: this.#received[c]! }));
  }

  close(): Promise<void> {
    if (this.#state === STATE_CLOSED) return Promise.resolve();
    this.#state = STATE_CLOSING;
    return new Promise<void>((resolve) => {
      this.#closeWaiters.push(resolve);
      if (!this.#isScheduled) {
        this.#isScheduled = true;
        setImmediate(deliverBatch, this);
      }
    });
  }

  destroy(): void {
    if (this.#state === STATE_CLOSED) return;
    const wasClosing = this.#state === STATE_CLOSING;
    this.#state = STATE_CLOSED;
    const routes = this.#hub.routes;
    const C = this.#hub.channelCount;
    for (const f of this.#queue) {
      const dst = routes[f.dst * C + f.channel]!;
      dst.#inboundPending--;
      if (dst.#state === STATE_CLOSING) setImmediate(finishIfIdle, dst);
    }
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    this.#finishClose();
    if (wasClosing) return;
    for (const peer of this.#hub.members) {
      if (peer !== this && peer.#state === STATE_OPEN && peer.#isStarted) setImmediate(reportLost, peer, this.#process);
    }
  }

  /** @internal one setImmediate batch: delivers everything queued, in order. */
  _deliverBatch(): void {
    this.#isScheduled = false;
    const queue = this.#queue;
    this.#queue = this.#draining;
    this.#draining = queue;
    const routes = this.#hub.routes;
    const C = this.#hub.channelCount;
    for (let i = 0; i < queue.length; i++) {
      const f = queue[i]!;
      this.#queuedBytes -= f.payload.length;
      const dst = routes[f.dst * C + f.channel]!;
      dst.#inboundPending--;
      if (dst.#state !== STATE_CLOSED) dst.#receive(this.#process, f);
      if (dst.#state === STATE_CLOSING) dst.#maybeFinishClose();
      if (f.token >= 0 && this.#state !== STATE_CLOSED) this.#handlers.onSent(f.token);
      f.payload = EMPTY;
      this.#freeFrames.push(f);
    }
    queue.length = 0;
    if (this.#state === STATE_CLOSING) this.#maybeFinishClose();
  }

  /** @internal */
  _finishIfIdle(): void {
    if (this.#state === STATE_CLOSING) this.#maybeFinishClose();
  }

  /** A closing instance is closed once its queue is delivered and nothing queued for it is pending. */
  #maybeFinishClose(): void {
    if (this.#queue.length === 0 && !this.#isScheduled && this.#inboundPending === 0) {
      this.#state = STATE_CLOSED;
      this.#finishClose();
    }
  }

  /** @internal */
  _reportLost(peer: number): void {
    if (this.#state !== STATE_OPEN || this.#reported[peer] === true) return;
    this.#reported[peer] = true;
    const err: TransportError = { code: 'TSMPI_ERR_PEER_CLOSED', message: `loopback: process ${peer} is gone` };
    this.#handlers.onPeerLost(peer, err);
  }

  #receive(src: number, f: QueuedFrame): void {
    const h = this.#rxHeader;
    Object.assign(h, f.header);
    let payload = f.payload;
    const target = this.#handlers.payloadTarget;
    if (payload.length >= LOOPBACK_TARGET_MIN_BYTES && target !== undefined) {
      const into = target.call(this.#handlers, src, h);
      if (into !== null && into.length === payload.length) {
        into.set(payload);
        payload = into;
      }
    }
    this.#received[f.channel]!++;
    const onEager = this.#handlers.onEager;
    if (onEager !== undefined && h.kind === FRAME_KIND.EAGER && h.flags === 0 && payload.length < LOOPBACK_TARGET_MIN_BYTES &&
      onEager(src, h.contextId, h.srcEndpoint, h.dstEndpoint, h.tag, payload, 0, payload.length)) return;
    this.#handlers.onDeliver(src, h, payload);
  }

  #finishClose(): void {
    const waiters = this.#closeWaiters;
    this.#closeWaiters = [];
    for (const w of waiters) w();
  }
}

function deliverBatch(t: LoopbackTransport): void {
  t._deliverBatch();
}

function finishIfIdle(t: LoopbackTransport): void {
  t._finishIfIdle();
}

function reportLost(t: LoopbackTransport, peer: number): void {
  t._reportLost(peer);
}

/**
 * A TransportFactory whose instances are wired to each other in this thread:
 * each call (one per process, or one per (process, channel subset)) joins
 * the same in-process network.
 * @param processCount processes in the simulated job
 * @param channelCount channels per pair (default 1); every options.channelCount must match
 */
export function createLoopbackFactory(processCount: number, channelCount = 1): TransportFactory {
  const hub = new LoopbackHub(processCount, channelCount);
  return (options) => new LoopbackTransport(hub, options);
}

/**
 * Creates `processCount` loopback transports wired to each other, already
 * started (listen() and start() may still be called and do nothing harmful).
 * @param processCount processes in the simulated job
 * @param opts channel count (default 1), handlers per process, logger (default silent)
 * @example
 * const [t0, t1] = createLoopbackNetwork(2, { handlers: (p) => handlersOf[p] });
 */
export function createLoopbackNetwork(processCount: number, opts: LoopbackNetworkOptions): Transport[] {
  const channelCount = opts.channelCount ?? 1;
  const factory = createLoopbackFactory(processCount, channelCount);
  const handlersOf = opts.handlers;
  const transports: Transport[] = [];
  for (let p = 0; p < processCount; p++) {
    const handlers = typeof handlersOf === 'function' ? handlersOf(p) : handlersOf[p]!;
    const t = factory({
      process: p, processCount, channelCount, ...(opts.endpointsPerProcess === undefined ? {} : { endpointsPerProcess: opts.endpointsPerProcess }), jobKey: 'loopback', listenHost: 'loopback', log: opts.log ?? silentLog, handlers,
    });
    t.start([]);
    transports.push(t);
  }
  return transports;
}
