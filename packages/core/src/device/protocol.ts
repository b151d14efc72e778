/**
 * The point-to-point protocols over the request slots and the shared matching queues (the CH4 core,
 * in MPICH words), one instance per device (device.ts). Frame kinds in transport/interface.ts:
 *
 *   eager      EAGER(data)                      length <= eagerLimit
 *   sync       EAGER_SYNC(data) -> SYNC_ACK     ssend: the send completes once matched
 *   rendezvous RNDV_RTS -> RNDV_CTS -> RNDV_DATA length > eagerLimit: nothing big is buffered
 *                                               before its receive is posted
 *   cancel     CANCEL_SEND -> CANCEL_ACK        MPI_Cancel of a pending (sync or rendezvous) send:
 *                                               the receiver removes the message if no receive has
 *                                               matched it and answers then (as MPICH ch3 does);
 *                                               otherwise the send completes by its own protocol
 *
 * The state of a message lives in its slot's words (request-table.ts): an arriving EAGER,
 * EAGER_SYNC or RNDV_RTS takes a message slot (arrive) and meets a posted receive in the shared
 * queues, or waits there as unexpected (its bytes in unexpected-payloads.ts); a matched EAGER_SYNC
 * answers SYNC_ACK, a matched RNDV_RTS answers RNDV_CTS naming the receive slot, whose RNDV_DATA
 * lands straight in the receive's buffer (payloadTarget) or, for another thread's receive, in the
 * big arena. Messages between endpoints of one process take `local` and never touch a transport.
 * Where a frame goes (the thread's hosted channel, direct route, injection ring or a reader's
 * route) is the device's send path (ProtocolHost.out, send-path.ts); completion is completion.ts's. Nothing here
 * logs or throws per message.
 */
import { FRAME_FLAG, FRAME_KIND, fillAnswer, newFrameHeader, type FrameHeader } from '../transport/index.ts';
import type { PayloadPool } from '../shm/index.ts';
import { ERR_NO_MEM, mpiError, type MPIError } from '../util/index.ts';
import type { DevRequest } from './dev-request.ts';
import { FLAG, KIND, NIL, SLOT, SLOT_WORDS, type SlotPool } from './request-table.ts';
import { COMM_STAT, STAT, type SharedState } from './shared-state.ts';
import type { MatchQueues } from './match-queues.ts';
import { UnexpectedPayloads } from './unexpected-payloads.ts';
import { EMPTY, REQUEST_SLOTS_ENV, type Completion } from './completion.ts';

/** What the protocols ask of the device that owns them (device.ts). */
export interface ProtocolHost {
  /** Sends a frame to remote process `proc` on this thread's path for it; `call` names the API call an error names. */
  out(proc: number, h: FrameHeader, payload: Uint8Array | null, call?: string): void;
  /** Sends a rendezvous's data on the transport of the hosted channels; `token` comes back in sent(). */
  sendData(proc: number, h: FrameHeader, data: Uint8Array, token: number): void;
  /** The length of a rendezvous message whose data this thread is about to send or receive (wait-poll.ts). */
  rendezvous(bytes: number): void;
  fatal(err: MPIError, lostProcess: number | null): void;
  /** Process `proc` sent a frame this device cannot act on: it is taken for lost. */
  protocolError(proc: number, fault: string): void;
}

export class Protocol {
  readonly #host: ProtocolHost;
  readonly #completion: Completion;
  readonly #pool: SlotPool;
  readonly #w: Int32Array;
  readonly #queues: readonly MatchQueues[];
  readonly #capacity: number;
  readonly #big: PayloadPool | null;
  readonly #stat: Float64Array;
  readonly #me: number;
  readonly #process: number;
  readonly #first: number;
  /** where unexpected eager messages' bytes wait for their receive */
  readonly #unexpected: UnexpectedPayloads;
  /** big-arena blocks receiving rendezvous data for other threads' receives, by receive slot */
  readonly #dataTargets = new Map<number, number>();
  /** private arrays receiving rendezvous data for this thread's object-form receives, by receive slot: kept, not copied again */
  readonly #privateTargets = new Map<number, Uint8Array>();
  readonly #hdr: FrameHeader = newFrameHeader();

  constructor(host: ProtocolHost, shared: SharedState, completion: Completion, pool: SlotPool, stat: Float64Array, threadId: number, process: number, firstEndpoint: number) {
    this.#host = host;
    this.#completion = completion;
    this.#pool = pool;
    this.#w = shared.table.words;
    this.#queues = shared.queues;
    this.#capacity = shared.table.capacity;
    this.#big = shared.big;
    this.#stat = stat;
    this.#me = threadId;
    this.#process = process;
    this.#first = firstEndpoint;
    this.#unexpected = new UnexpectedPayloads(shared);
  }

  /** Posts receive r, which owns `slot`, in the shared queues (and takes a waiting message). */
  postSlot(r: DevRequest, slot: number, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void {
    const w = this.#w;
    const b = slot * SLOT_WORDS;
    w[b + SLOT.CTX] = ctx;
    w[b + SLOT.SRC] = srcEndpoint;
    w[b + SLOT.TAG] = tag;
    w[b + SLOT.ENDPOINT] = endpoint;
    w[b + SLOT.LENGTH] = r.buf === null ? -1 : r.buf.length;
    const msg = this.#queues[endpoint - this.#first]!.postRecv(slot);
    if (msg !== NIL) this.receiveMessage(slot, msg);
  }

  /** A send slot for r (its LENGTH word: the bytes Completion.countSent counts when it completes). */
  sendSlot(r: DevRequest, len: number): number {
    const slot = this.#completion.ownSlot(r, KIND.SEND, false);
    this.#w[slot * SLOT_WORDS + SLOT.LENGTH] = len;
    return slot;
  }

  /**
   * Makes `h` (its payloadLength set) eager send r's first frame and returns r's send slot, or NIL
   * when r completes at once. A synchronous send's slot is in h.aux and completes once matched; one
   * whose frame waits for this thread to open the connection (`waits`) is the transport's sent
   * token, so it completes once the frame is written, as code that computes after the call would
   * otherwise hold it, and every frame behind it, until it yields (docs/adr/0061).
   */
  eagerSlot(r: DevRequest, h: FrameHeader, sync: boolean, waits: boolean): number {
    h.kind = sync ? FRAME_KIND.EAGER_SYNC : FRAME_KIND.EAGER;
    h.aux = 0;
    if (!sync && !waits) return NIL;
    const slot = this.sendSlot(r, h.payloadLength);
    this.noteSend(slot, h);
    if (sync) h.aux = slot;
    return slot;
  }

  /**
   * The send slot of rendezvous send r of `data`. When this thread answers the CTS itself
   * (`answersCts`: it hosts the channel) the data goes out from the user's buffer; else another
   * thread answers, which needs the data in shared memory (the big arena; none left: ERR_NO_MEM,
   * r undone).
   */
  rendezvousSlot(r: DevRequest, data: Uint8Array, answersCts: boolean): number {
    const len = data.length;
    const slot = this.sendSlot(r, len);
    if (answersCts) {
      r.buf = data;
      return slot;
    }
    const off = this.#big!.alloc(len);
    if (off === NIL) {
      this.#completion.abandon(r, true);
      throw mpiError(ERR_NO_MEM, r.call, `no room for a ${len}-byte message in the shared large-payload arena`);
    }
    this.#big!.bytes.set(data, off);
    const b = slot * SLOT_WORDS;
    this.#w[b + SLOT.PAYLOAD] = off;
    this.#w[b + SLOT.FLAGS] |= FLAG.BIG;
    return slot;
  }

  /**
   * Records what send slot `slot` sends (h's context, endpoints and tag), so that a cancel can name
   * its message (cancelSend). Synchronous and rendezvous sends only: an eager one completes at once.
   */
  noteSend(slot: number, h: FrameHeader): void {
    const w = this.#w;
    const b = slot * SLOT_WORDS;
    w[b + SLOT.CTX] = h.contextId;
    w[b + SLOT.SRC] = h.srcEndpoint;
    w[b + SLOT.TAG] = h.tag;
    w[b + SLOT.ENDPOINT] = h.dstEndpoint;
  }

  /**
   * Asks to cancel pending send r (MPI 3.1 §3.8.4): a synchronous or rendezvous send, which holds its
   * slot until matched. To an endpoint of this process the queue is searched here; to another
   * process a CANCEL_SEND goes on the send's own path, behind its message, and the receiver answers
   * CANCEL_ACK only when it removed the message. Either way r completes as cancelled (status.cancelled)
   * only if no receive had matched it; otherwise it completes as a matched send does. Once per send.
   */
  cancelSend(r: DevRequest): void {
    const s = r.slot;
    if (s === NIL) return;
    const w = this.#w;
    const b = s * SLOT_WORDS;
    const flags = w[b + SLOT.FLAGS]!;
    if ((flags & FLAG.CANCEL_ASKED) !== 0 || w[b + SLOT.KIND] !== KIND.SEND) return;
    // Atomics: the slot's flags are shared with the thread that may answer for it (CTS, CANCEL_ACK).
    Atomics.or(w, b + SLOT.FLAGS, FLAG.CANCEL_ASKED);
    const dst = w[b + SLOT.ENDPOINT]!;
    const J = this.#queues.length;
    if (dst >= this.#first && dst < this.#first + J) {
      const msg = this.#queues[dst - this.#first]!.cancelMessage(w[b + SLOT.SRC]!, this.#process, s);
      if (msg !== NIL) this.#dropCancelled(msg, s);
      return;
    }
    const h = this.#hdr;
    h.kind = FRAME_KIND.CANCEL_SEND;
    h.flags = 0;
    h.contextId = w[b + SLOT.CTX]!;
    h.srcEndpoint = w[b + SLOT.SRC]!;
    h.dstEndpoint = dst;
    h.tag = w[b + SLOT.TAG]!;
    h.aux = s;
    h.aux2 = 0;
    h.payloadLength = 0;
    this.#host.out((dst / J) | 0, h, null, r.call);
  }

  /** A CANCEL_SEND from process `srcProcess`: the message of its send slot h.aux goes, if still unmatched, and CANCEL_ACK says so. */
  cancelArrived(srcProcess: number, h: FrameHeader): void {
    const msg = this.#queues[h.dstEndpoint - this.#first]!.cancelMessage(h.srcEndpoint, srcProcess, h.aux);
    // Not queued: a receive or a matched probe has it, and the send completes by SYNC_ACK or CTS and data.
    if (msg === NIL) return;
    this.#dropCancelled(msg, NIL);
    this.#host.out(srcProcess, fillAnswer(this.#hdr, h, FRAME_KIND.CANCEL_ACK, 0, h.aux, 0), null);
  }

  /** A CANCEL_ACK: the message of this process's send slot h.aux was removed unmatched. */
  cancelAcked(h: FrameHeader): void {
    this.#sendCancelled(h.aux);
  }

  /** Frees cancelled message `msg` (uncounted: it was never received); completes local send slot `sendSlot` (NIL: remote) as cancelled. */
  #dropCancelled(msg: number, sendSlot: number): void {
    const w = this.#w;
    const st = this.#stat;
    const len = w[msg * SLOT_WORDS + SLOT.LENGTH]! >>> 0;
    st[STAT.RECEIVED]!--;
    st[STAT.BYTES_RECEIVED]! -= len;
    const c = STAT.WORDS + (w[msg * SLOT_WORDS + SLOT.CTX]! >>> 2) * COMM_STAT.WORDS;
    st[c + COMM_STAT.RECEIVED]!--;
    st[c + COMM_STAT.BYTES_RECEIVED]! -= len;
    this.#unexpected.drop(msg);
    this.#pool.free(msg);
    if (sendSlot !== NIL) this.#sendCancelled(sendSlot);
  }

  /** Send slot `s` completes as cancelled, wherever its owner is; a rendezvous's shared copy is freed. */
  #sendCancelled(s: number): void {
    const w = this.#w;
    const b = s * SLOT_WORDS;
    if ((w[b + SLOT.FLAGS]! & FLAG.BIG) !== 0) {
      this.#big!.free(w[b + SLOT.PAYLOAD]!);
      w[b + SLOT.PAYLOAD] = NIL;
    }
    Atomics.or(w, b + SLOT.FLAGS, FLAG.CANCELLED);
    this.#completion.finishSlot(s);
  }

  /** Send r whose first frame could not go: its shared copy (a rendezvous's) freed, r undone. */
  abandonSend(r: DevRequest): void {
    const w = this.#w;
    if (r.slot !== NIL && (w[r.slot * SLOT_WORDS + SLOT.FLAGS]! & FLAG.BIG) !== 0) this.#big!.free(w[r.slot * SLOT_WORDS + SLOT.PAYLOAD]!);
    this.#completion.abandon(r, true);
  }

  /** Send r between two endpoints of this process: it arrives here at once, never touching a transport (sync: completes once matched). */
  local(r: DevRequest, src: number, dst: number, ctx: number, tag: number, data: Uint8Array, flags: number, sync: boolean): void {
    const h = this.#hdr;
    h.kind = sync ? FRAME_KIND.EAGER_SYNC : FRAME_KIND.EAGER;
    h.flags = flags;
    h.contextId = ctx;
    h.srcEndpoint = src;
    h.dstEndpoint = dst;
    h.tag = tag;
    h.aux = sync ? this.sendSlot(r, data.length) : NIL;
    h.aux2 = 0;
    h.payloadLength = data.length;
    if (sync) this.noteSend(h.aux, h);
    this.arrive(this.#process, h, data, FLAG.LOCAL);
    if (!sync) {
      this.#completion.countSent(data.length, ctx);
      this.#completion.complete(r);
    }
  }

  /** An EAGER, EAGER_SYNC or RNDV_RTS frame for one of our endpoints. */
  arrive(srcProcess: number, h: FrameHeader, payload: Uint8Array, extraFlags: number, count = true): void {
    const rndv = h.kind === FRAME_KIND.RNDV_RTS;
    const len = rndv ? h.aux2 : payload.length;
    if (count) {
      // Not when a lane's message moves to the shared queues: it was counted when it arrived.
      const st = this.#stat;
      st[STAT.RECEIVED]!++;
      st[STAT.BYTES_RECEIVED]! += len;
      const c = STAT.WORDS + (h.contextId >>> 2) * COMM_STAT.WORDS;
      st[c + COMM_STAT.RECEIVED]!++;
      st[c + COMM_STAT.BYTES_RECEIVED]! += len;
    }
    const msg = this.#pool.alloc(KIND.MESSAGE);
    if (msg === NIL) {
      this.#host.fatal(mpiError(ERR_NO_MEM, 'progress', `all ${this.#capacity} request slots are in use by unexpected messages; raise ${REQUEST_SLOTS_ENV}`), null);
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
    const queues = this.#queues[h.dstEndpoint - this.#first]!;
    // Multithreaded, the bytes go to shared memory first: once queued, another thread may take the
    // message. Single-threaded, only a message that waits is kept (unexpected-payloads.ts).
    const bytes = !rndv && len > 0;
    const early = bytes && this.#unexpected.keepsBeforeQueue;
    if (early) this.#keep(msg, payload);
    const recv = queues.arrive(msg);
    if (recv !== NIL) {
      this.#deliverMatched(recv, msg, payload);
      if (early) this.#unexpected.drop(msg);
      this.#pool.free(msg);
      return;
    }
    if (bytes && !early) this.#keep(msg, payload);
    queues.notifyArrival();
  }

  /** Stores an arriving payload for a later receive (unexpected-payloads.ts); no memory left fails the job. */
  #keep(msg: number, payload: Uint8Array): void {
    if (!this.#unexpected.keep(msg, payload)) {
      this.#host.fatal(mpiError(ERR_NO_MEM, 'progress', `no shared memory left for a ${payload.length}-byte unexpected message`), null);
    }
  }

  /** An unexpected message `msg` now matched by this thread's receive slot `recv`. */
  receiveMessage(recv: number, msg: number): void {
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    const len = w[b + SLOT.LENGTH]! >>> 0;
    const flags = w[b + SLOT.FLAGS]!;
    const data = (flags & FLAG.RNDV) !== 0 || len === 0 ? EMPTY : this.#unexpected.bytesOf(msg, len, flags);
    this.#deliverMatched(recv, msg, data);
    this.#unexpected.drop(msg);
    this.#pool.free(msg);
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
      this.#host.out(w[b + SLOT.PEER_PROCESS]!, h, null);
      this.#host.rendezvous(w[b + SLOT.LENGTH]! >>> 0);
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
    this.#host.out(w[b + SLOT.PEER_PROCESS]!, h, null);
  }

  /**
   * The array rendezvous data for receive slot h.aux is read into. Every frame this device asked
   * for gets one (the transport refuses a large payload it was not asked for, interface.ts): a
   * receive that sent a CTS (FLAG.RNDV) for no more than the RTS announced (ST_COUNT).
   */
  payloadTarget(_src: number, h: FrameHeader): Uint8Array | null {
    if (h.kind !== FRAME_KIND.RNDV_DATA) return null;
    const recv = h.aux;
    const w = this.#w;
    const rb = recv * SLOT_WORDS;
    const plen = h.payloadLength;
    if (recv >= this.#capacity || (w[rb + SLOT.FLAGS]! & FLAG.RNDV) === 0 || plen > w[rb + SLOT.ST_COUNT]! >>> 0) return null;
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
  sent(token: number): void {
    const w = this.#w;
    const b = token * SLOT_WORDS;
    if ((w[b + SLOT.FLAGS]! & FLAG.BIG) !== 0) {
      this.#big!.free(w[b + SLOT.PAYLOAD]!);
      w[b + SLOT.PAYLOAD] = NIL;
    }
    this.#completion.finishSlot(token);
  }

  /** A RNDV_CTS for send slot h.aux: its data goes out to the receive slot h.aux2 (RNDV_DATA). */
  cts(srcProcess: number, h: FrameHeader): void {
    const s = h.aux;
    const b = s * SLOT_WORDS;
    const w = this.#w;
    const own = w[b + SLOT.OWNER] === this.#me ? this.#completion.reqs[s] : undefined;
    let data: Uint8Array | null = null;
    if ((w[b + SLOT.FLAGS]! & FLAG.BIG) !== 0) {
      const off = w[b + SLOT.PAYLOAD]!;
      data = this.#big!.bytes.subarray(off, off + w[b + SLOT.LENGTH]!);
    } else if (own !== undefined) {
      data = own.buf;
    }
    if (data === null) {
      // A pending send with no rendezvous data (an eager one, or another thread's not in shared memory).
      this.#host.protocolError(srcProcess, `a RNDV_CTS frame for request slot ${s}, which has no rendezvous data to send`);
      return;
    }
    this.#host.sendData(srcProcess, fillAnswer(this.#hdr, h, FRAME_KIND.RNDV_DATA, 0, h.aux2, data.length), data, s);
    this.#host.rendezvous(data.length);
  }

  /** A RNDV_DATA for receive slot h.aux: complete it, wherever its owner is. */
  data(h: FrameHeader, payload: Uint8Array): void {
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
}
