/**
 * The device: point-to-point protocols over the matching queues and a
 * transport (the CH4 core, in MPICH words).
 *
 * Protocols (frame kinds in transport/interface.ts):
 *   eager      EAGER(data)                      length <= eagerLimit
 *   sync       EAGER_SYNC(data) -> SYNC_ACK     ssend: the send completes once matched
 *   rendezvous RNDV_RTS -> RNDV_CTS -> RNDV_DATA length > eagerLimit: nothing big is
 *                                               buffered before its receive is posted
 * Messages between endpoints of one process never touch the transport: they
 * take the local path (#arrive is called directly), which is the one place
 * that chooses between the same-process path and TCP.
 *
 * Threads: this class runs on the thread that owns the transport (inline
 * progress). Completion calls DevRequest.onComplete on that thread. Nothing
 * here logs or throws per message.
 */
import { Packr } from 'msgpackr';
import { FRAME_FLAG, FRAME_KIND, newFrameHeader, type FrameHeader, type Transport, type TransportError, type TransportFactory } from '../transport/index.ts';
import { PayloadPool } from '../shm/index.ts';
import { ERR_PROC_FAILED, ERR_TRUNCATE, ERR_NO_MEM, mpiError } from '../util/index.ts';
import type { Logger } from '../log/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { MatchQueues, type MatchingMode } from './match-queues.ts';
import { FLAG, KIND, NIL, RequestTable, SLOT, SLOT_WORDS, SlotPool } from './request-table.ts';
import { ObjectTable } from './object-table.ts';

const ANY = -1;

export interface DeviceOptions {
  readonly process: number;
  readonly processCount: number;
  readonly endpointsPerProcess: number;
  readonly eagerLimit: number;
  readonly matching: MatchingMode;
  readonly requestSlots: number;
  readonly channels: number;
  readonly jobKey: string;
  readonly listenHost: string;
  readonly transportFactory: TransportFactory | null;
  readonly log: Logger;
}

export interface DeviceStats {
  messagesSent: number;
  messagesReceived: number;
  bytesSent: number;
  bytesReceived: number;
}

/** What probe() reports about a pending message. */
export interface ProbeInfo {
  sourceEndpoint: number;
  tag: number;
  count: number;
}

/** msgpack for object payloads: typed arrays keep their type; decoded binaries never alias the input. */
export const packr = new Packr({ useRecords: false, moreTypes: true, copyBuffers: true, structuredClone: false });

export class Device {
  readonly opts: DeviceOptions;
  readonly table: RequestTable;
  readonly pool: SlotPool;
  readonly payloads: PayloadPool;
  /** communicators, groups, datatypes and ops, by handle */
  readonly objects: ObjectTable;
  /** one set of queues per endpoint of this process */
  readonly queues: MatchQueues[];
  readonly stats: DeviceStats = { messagesSent: 0, messagesReceived: 0, bytesSent: 0, bytesReceived: 0 };
  readonly firstEndpoint: number;
  readonly endpointCount: number;
  transport: Transport | null = null;
  /** the JavaScript side of each slot that has one */
  readonly #reqs: (DevRequest | undefined)[];
  /** unexpected payloads that did not fit in the shared pool */
  readonly #overflow = new Map<number, Uint8Array>();
  readonly #hdr: FrameHeader = newFrameHeader();
  /** callbacks waiting for any new unexpected message (blocking probe) */
  readonly #arrivalWaiters = new Set<() => void>();
  #failure: Error | null = null;
  #closing = false;
  /** operations in flight; while > 0 (or while closing) #keepAlive holds the event loop */
  #active = 0;
  #keepAlive: NodeJS.Timeout | null = null;

  constructor(opts: DeviceOptions) {
    this.opts = opts;
    this.table = new RequestTable(RequestTable.allocateBuffers(opts.requestSlots), true);
    this.pool = new SlotPool(this.table);
    // 64 B .. 64 KiB classes; 64 MiB of address space, touched only as used.
    this.payloads = new PayloadPool(PayloadPool.allocateBuffers(64 << 20, 16), 16, true);
    this.#reqs = new Array(this.table.capacity);
    // 16,384 records (1 MiB) and 8 MiB of group/datatype data, touched only as used.
    this.objects = new ObjectTable(ObjectTable.allocateBuffers(1 << 14, 8 << 20), true);
    this.endpointCount = opts.processCount * opts.endpointsPerProcess;
    this.firstEndpoint = opts.process * opts.endpointsPerProcess;
    this.queues = [];
    for (let e = 0; e < opts.endpointsPerProcess; e++) {
      this.queues.push(new MatchQueues(this.table, MatchQueues.allocateBuffer(this.endpointCount), this.endpointCount, opts.matching, true));
    }
  }

  /** Creates the transport and starts listening; resolves to the address to publish (null: no peers). */
  async listen(): Promise<string | null> {
    const o = this.opts;
    if (o.processCount === 1 || o.transportFactory === null) return null;
    this.transport = o.transportFactory({
      process: o.process,
      processCount: o.processCount,
      channelCount: o.channels,
      jobKey: o.jobKey,
      listenHost: o.listenHost,
      log: o.log.child({ mod: 'transport' }),
      handlers: {
        onDeliver: (src, header, payload) => this.#onDeliver(src, header, payload),
        onSent: (token) => this.#onSent(token),
        onPeerLost: (proc, err) => this.#onPeerLost(proc, err),
        payloadTarget: (src, header) => this.#payloadTarget(src, header),
      },
    });
    return this.transport.listen();
  }

  start(addresses: readonly string[]): void {
    this.transport?.start(addresses);
  }

  processOf(endpoint: number): number {
    return (endpoint / this.opts.endpointsPerProcess) | 0;
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
    const slot = this.#allocSlot(KIND.RECV, 'recv');
    this.#hold();
    r.slot = slot;
    this.#reqs[slot] = r;
    const w = this.table.words;
    const b = slot * SLOT_WORDS;
    w[b + SLOT.CTX] = ctx;
    w[b + SLOT.SRC] = srcEndpoint;
    w[b + SLOT.TAG] = tag;
    w[b + SLOT.ENDPOINT] = endpoint;
    w[b + SLOT.LENGTH] = r.buf === null ? -1 : r.buf.length;
    const msg = this.queues[endpoint - this.firstEndpoint]!.postRecv(slot);
    if (msg !== NIL) this.#receiveMessage(r, msg);
  }

  /**
   * Sends `data` from endpoint srcEndpoint to dstEndpoint. `objectForm`: data is
   * msgpack. `sync`: completes only once matched. The caller must not modify
   * `data` until r completes.
   */
  send(r: DevRequest, srcEndpoint: number, dstEndpoint: number, ctx: number, tag: number, data: Uint8Array, objectForm: boolean, sync: boolean): void {
    const len = data.length;
    this.#hold();
    const st = this.stats;
    st.messagesSent++;
    st.bytesSent += len;
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
    if (len <= this.opts.eagerLimit) {
      if (sync) {
        const slot = this.#allocSlot(KIND.SEND, 'ssend');
        r.slot = slot;
        this.#reqs[slot] = r;
        h.kind = FRAME_KIND.EAGER_SYNC;
        h.aux = slot;
      } else {
        h.kind = FRAME_KIND.EAGER;
        h.aux = 0;
      }
      h.payloadLength = len;
      this.transport!.send(proc, h, len === 0 ? null : data, -1);
      if (!sync) this.#complete(r);
      return;
    }
    const slot = this.#allocSlot(KIND.SEND, 'send');
    r.slot = slot;
    r.buf = data;
    this.#reqs[slot] = r;
    h.kind = FRAME_KIND.RNDV_RTS;
    h.aux = slot;
    h.aux2 = len;
    h.payloadLength = 0;
    this.transport!.send(proc, h, null, -1);
  }

  /** Non-destructive look at the first message a receive (ctx, src, tag) on `endpoint` would match. */
  probe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): ProbeInfo | null {
    const m = this.queues[endpoint - this.firstEndpoint]!.probe(ctx, srcEndpoint, tag);
    return m === NIL ? null : this.#messageInfo(m);
  }

  /** Matched probe: removes the message from matching and returns its slot (or NIL). */
  mprobe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): { slot: number; info: ProbeInfo } | null {
    const q = this.queues[endpoint - this.firstEndpoint]!;
    const m = q.probe(ctx, srcEndpoint, tag);
    if (m === NIL) return null;
    q.takeUnexpected(m);
    const w = this.table.words;
    w[m * SLOT_WORDS + SLOT.KIND] = KIND.MATCHED_MESSAGE;
    return { slot: m, info: this.#messageInfo(m) };
  }

  /** Receives a message taken by mprobe into r (r.buf or r.objectMode set). */
  recvMatched(r: DevRequest, msgSlot: number): void {
    const slot = this.#allocSlot(KIND.RECV, 'mrecv');
    this.#hold();
    r.slot = slot;
    this.#reqs[slot] = r;
    this.table.words[slot * SLOT_WORDS + SLOT.LENGTH] = r.buf === null ? -1 : r.buf.length;
    this.#receiveMessage(r, msgSlot);
  }

  /** Calls `fn` on each new unexpected message until it returns true. */
  onArrival(fn: () => boolean): void {
    this.#hold();
    const waiter = (): void => {
      if (!fn()) return;
      this.#arrivalWaiters.delete(waiter);
      this.#release();
    };
    this.#arrivalWaiters.add(waiter);
  }

  /** Cancels a pending receive that has not matched; true if it was cancelled. */
  cancel(r: DevRequest): boolean {
    if (r.done || r.kind !== REQ_KIND.RECV || r.slot === NIL) return false;
    const ep = this.table.words[r.slot * SLOT_WORDS + SLOT.ENDPOINT]!;
    if (!this.queues[ep - this.firstEndpoint]!.cancelRecv(r.slot)) return false;
    r.cancelled = true;
    r.sourceEndpoint = ANY;
    r.tag = ANY;
    this.#complete(r);
    return true;
  }

  /** Completes a request created outside the protocols (generalized: collectives, PROC_NULL). */
  completeNow(r: DevRequest): void {
    this.#hold();
    this.#complete(r);
  }

  failure(): Error | null {
    return this.#failure;
  }

  unexpectedQueued(): number {
    let n = 0;
    for (const q of this.queues) n += q.unexpectedCount;
    return n;
  }

  postedQueued(): number {
    let n = 0;
    for (const q of this.queues) n += q.postedCount;
    return n;
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#hold();
    try {
      await this.transport?.close();
    } finally {
      this.#release();
      if (this.#keepAlive !== null) clearInterval(this.#keepAlive);
    }
  }

  destroy(): void {
    this.#closing = true;
    this.transport?.destroy();
    if (this.#keepAlive !== null) clearInterval(this.#keepAlive);
  }

  // --- internals -----------------------------------------------------------

  #allocSlot(kind: number, call: string): number {
    const slot = this.pool.alloc(kind);
    if (slot === NIL) {
      throw mpiError(ERR_NO_MEM, call, `all ${this.table.capacity} request slots are in use; complete or free requests, or raise TSMPI_REQUEST_SLOTS`);
    }
    return slot;
  }

  /**
   * The transport holds no event-loop reference; the device holds one while an
   * operation is in flight, so a program that returns without finalize exits.
   */
  #hold(): void {
    if (this.#active++ === 0) {
      if (this.#keepAlive === null) this.#keepAlive = setInterval(noop, 1 << 30);
      else this.#keepAlive.ref();
    }
  }

  #release(): void {
    if (--this.#active === 0) this.#keepAlive?.unref();
  }

  #complete(r: DevRequest): void {
    this.#release();
    r.done = true;
    if (r.slot !== NIL) {
      this.#reqs[r.slot] = undefined;
      this.pool.free(r.slot);
      r.slot = NIL;
    }
    if (r.finish !== null) r.finish(r);
    const cb = r.onComplete;
    if (cb !== null) {
      r.onComplete = null;
      cb(r);
    }
  }

  #fail(r: DevRequest, err: Error & { errorClass?: number }): void {
    r.error = err as never;
    this.#complete(r);
  }

  #messageInfo(m: number): ProbeInfo {
    const w = this.table.words;
    const b = m * SLOT_WORDS;
    return { sourceEndpoint: w[b + SLOT.SRC]!, tag: w[b + SLOT.TAG]!, count: w[b + SLOT.LENGTH]! };
  }

  #sendLocal(r: DevRequest, src: number, dst: number, ctx: number, tag: number, data: Uint8Array, flags: number, sync: boolean): void {
    let peerSlot = NIL;
    if (sync) {
      peerSlot = this.#allocSlot(KIND.SEND, 'ssend');
      r.slot = peerSlot;
      this.#reqs[peerSlot] = r;
    }
    const h = this.#hdr;
    h.kind = sync ? FRAME_KIND.EAGER_SYNC : FRAME_KIND.EAGER;
    h.flags = flags;
    h.contextId = ctx;
    h.srcEndpoint = src;
    h.dstEndpoint = dst;
    h.tag = tag;
    h.aux = peerSlot;
    h.aux2 = 0;
    h.payloadLength = data.length;
    this.#arrive(this.opts.process, h, data, FLAG.LOCAL);
    if (!sync) this.#complete(r);
  }

  /** An EAGER, EAGER_SYNC or RNDV_RTS frame for one of our endpoints. */
  #arrive(srcProcess: number, h: FrameHeader, payload: Uint8Array, extraFlags: number): void {
    const st = this.stats;
    st.messagesReceived++;
    const rndv = h.kind === FRAME_KIND.RNDV_RTS;
    const len = rndv ? h.aux2 : payload.length;
    st.bytesReceived += len;
    const msg = this.pool.alloc(KIND.MESSAGE);
    if (msg === NIL) {
      this.#fatal(mpiError(ERR_NO_MEM, 'progress', `all ${this.table.capacity} request slots are in use by unexpected messages; raise TSMPI_REQUEST_SLOTS`));
      return;
    }
    const w = this.table.words;
    const b = msg * SLOT_WORDS;
    w[b + SLOT.CTX] = h.contextId;
    w[b + SLOT.SRC] = h.srcEndpoint;
    w[b + SLOT.TAG] = h.tag;
    w[b + SLOT.LENGTH] = len;
    w[b + SLOT.FLAGS] =
      extraFlags |
      ((h.flags & FRAME_FLAG.OBJECT) !== 0 ? FLAG.OBJECT : 0) |
      (h.kind === FRAME_KIND.EAGER_SYNC ? FLAG.SYNC : 0) |
      (rndv ? FLAG.RNDV : 0);
    w[b + SLOT.PEER_SLOT] = h.kind === FRAME_KIND.EAGER ? NIL : h.aux;
    w[b + SLOT.PEER_PROCESS] = srcProcess;
    const recv = this.queues[h.dstEndpoint - this.firstEndpoint]!.arrive(msg);
    if (recv !== NIL) {
      const r = this.#reqs[recv]!;
      this.#deliverMatched(r, msg, payload);
      this.pool.free(msg);
      return;
    }
    // Unexpected: keep the bytes until a receive comes.
    if (!rndv && len > 0) {
      const off = this.payloads.alloc(len);
      if (off !== NIL) {
        this.payloads.bytes.set(payload, off);
        w[b + SLOT.PAYLOAD] = off;
      } else {
        this.#overflow.set(msg, payload.slice());
      }
    }
    if (this.#arrivalWaiters.size > 0) for (const fn of this.#arrivalWaiters) fn();
  }

  /** A matched message (slot `msg`) whose data, if eager, is `payload`. */
  #deliverMatched(r: DevRequest, msg: number, payload: Uint8Array): void {
    const w = this.table.words;
    const b = msg * SLOT_WORDS;
    const flags = w[b + SLOT.FLAGS]!;
    r.sourceEndpoint = w[b + SLOT.SRC]!;
    r.tag = w[b + SLOT.TAG]!;
    if ((flags & FLAG.RNDV) !== 0) {
      // Clear to send: the data will come straight to this receive.
      r.count = w[b + SLOT.LENGTH]!;
      const h = this.#hdr;
      h.kind = FRAME_KIND.RNDV_CTS;
      h.flags = 0;
      h.contextId = w[b + SLOT.CTX]!;
      h.srcEndpoint = this.table.words[r.slot * SLOT_WORDS + SLOT.ENDPOINT]!;
      h.dstEndpoint = r.sourceEndpoint;
      h.tag = r.tag;
      h.aux = w[b + SLOT.PEER_SLOT]!;
      h.aux2 = r.slot;
      h.payloadLength = 0;
      this.transport!.send(w[b + SLOT.PEER_PROCESS]!, h, null, -1);
      return;
    }
    if ((flags & FLAG.SYNC) !== 0) this.#ackSync(msg);
    this.#fill(r, payload, (flags & FLAG.OBJECT) !== 0);
  }

  /** Completes receive r with message bytes `data`. */
  #fill(r: DevRequest, data: Uint8Array, isObject: boolean): void {
    const n = data.length;
    r.count = n;
    if (r.objectMode) {
      r.value = isObject ? packr.unpack(data) : data.slice();
    } else {
      const buf = r.buf!;
      if (n > buf.length) {
        buf.set(data.subarray(0, buf.length));
        r.count = buf.length;
        r.error = mpiError(ERR_TRUNCATE, 'recv', `message of ${n} bytes from endpoint ${r.sourceEndpoint} (tag ${r.tag}) is longer than the receive buffer of ${buf.length} bytes`);
      } else if (n > 0) {
        buf.set(data);
      }
    }
    this.#complete(r);
  }

  /** An unexpected message `msg` now matched by receive r. */
  #receiveMessage(r: DevRequest, msg: number): void {
    const w = this.table.words;
    const b = msg * SLOT_WORDS;
    const off = w[b + SLOT.PAYLOAD]!;
    const len = w[b + SLOT.LENGTH]!;
    let data: Uint8Array;
    if ((w[b + SLOT.FLAGS]! & FLAG.RNDV) !== 0 || len === 0) data = EMPTY;
    else if (off !== NIL) data = this.payloads.bytes.subarray(off, off + len);
    else data = this.#overflow.get(msg)!;
    this.#deliverMatched(r, msg, data);
    if (off !== NIL) this.payloads.free(off);
    else this.#overflow.delete(msg);
    this.pool.free(msg);
  }

  #ackSync(msg: number): void {
    const w = this.table.words;
    const b = msg * SLOT_WORDS;
    const senderSlot = w[b + SLOT.PEER_SLOT]!;
    if ((w[b + SLOT.FLAGS]! & FLAG.LOCAL) !== 0) {
      const s = this.#reqs[senderSlot];
      if (s !== undefined) this.#complete(s);
      return;
    }
    const h = this.#hdr;
    h.kind = FRAME_KIND.SYNC_ACK;
    h.flags = 0;
    h.contextId = w[b + SLOT.CTX]!;
    h.srcEndpoint = 0;
    h.dstEndpoint = w[b + SLOT.SRC]!;
    h.tag = 0;
    h.aux = senderSlot;
    h.aux2 = 0;
    h.payloadLength = 0;
    this.transport!.send(w[b + SLOT.PEER_PROCESS]!, h, null, -1);
  }

  #onDeliver(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    switch (h.kind) {
      case FRAME_KIND.EAGER:
      case FRAME_KIND.EAGER_SYNC:
      case FRAME_KIND.RNDV_RTS:
        this.#arrive(srcProcess, h, payload, 0);
        return;
      case FRAME_KIND.SYNC_ACK: {
        const s = this.#reqs[h.aux];
        if (s !== undefined) this.#complete(s);
        return;
      }
      case FRAME_KIND.RNDV_CTS: {
        const s = this.#reqs[h.aux];
        if (s === undefined) return;
        const recvSlot = h.aux2;
        const out = this.#hdr;
        out.kind = FRAME_KIND.RNDV_DATA;
        out.flags = 0;
        out.contextId = h.contextId;
        out.srcEndpoint = h.dstEndpoint;
        out.dstEndpoint = h.srcEndpoint;
        out.tag = 0;
        out.aux = recvSlot;
        out.aux2 = 0;
        out.payloadLength = s.buf!.length;
        this.transport!.send(srcProcess, out, s.buf, s.slot);
        return;
      }
      case FRAME_KIND.RNDV_DATA: {
        const r = this.#reqs[h.aux];
        if (r === undefined) return;
        if (!r.objectMode && payload.buffer === r.buf!.buffer && payload.byteOffset === r.buf!.byteOffset) {
          r.count = payload.length;
          this.#complete(r);
        } else {
          this.#fill(r, payload, r.objectMode);
        }
        return;
      }
      default:
        this.opts.log.warn({ kind: h.kind, srcProcess }, 'frame of unknown kind dropped');
    }
  }

  #payloadTarget(_src: number, h: FrameHeader): Uint8Array | null {
    if (h.kind !== FRAME_KIND.RNDV_DATA) return null;
    const r = this.#reqs[h.aux];
    if (r === undefined || r.objectMode || r.buf === null || r.buf.length < h.payloadLength) return null;
    return r.buf.subarray(0, h.payloadLength);
  }

  #onSent(token: number): void {
    const s = this.#reqs[token];
    if (s !== undefined) this.#complete(s);
  }

  #onPeerLost(proc: number, err: TransportError): void {
    if (this.#closing) return;
    this.opts.log.error({ peer: proc, code: err.code }, 'peer process lost');
    this.#fatal(mpiError(ERR_PROC_FAILED, 'progress', `lost the connection to process ${proc} (${err.code}: ${err.message})`, err));
  }

  /** Fails every pending request: the job cannot go on (the launcher ends it). */
  #fatal(err: Error): void {
    if (this.#failure === null) this.#failure = err;
    for (let i = 0; i < this.#reqs.length; i++) {
      const r = this.#reqs[i];
      if (r !== undefined && !r.done) this.#fail(r, err);
    }
  }
}

const EMPTY = new Uint8Array(0);
const noop = (): void => undefined;
