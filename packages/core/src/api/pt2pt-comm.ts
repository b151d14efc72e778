/**
 * The point-to-point half of Comm (API.md "Comm"), in both forms:
 * lower-case methods move any JavaScript value (msgpack), Capitalized methods
 * move buffers with MPI's exact semantics. Arguments are checked here, once,
 * before anything changes; the device below trusts them.
 *
 * A communicator is a context id (point-to-point traffic on ctx, collective
 * traffic on ctx + 1, group-collective on ctx + 2) plus the endpoints of its
 * group in rank order.
 */
import { DevRequest, MAX_MESSAGE_BYTES, REQ_KIND, handleIndex, type Device } from '../device/index.ts';
import { CONTEXT_SUFFIX, ERR_COMM, ERR_RANK, ERR_TAG, mpiError, rejectAtCallSite } from '../util/index.ts';
import { encodeObject } from '../util/index.ts';
import { ANY_SOURCE, ANY_TAG, CONGRUENT, IDENT, PROC_NULL, SIMILAR, TAG_UB, UNDEFINED, UNEQUAL } from './constants.ts';
import { bytesOfBuf, messageTooLong, recvTargetOf, sendSourceOf, setRecvBuf, typeHandleOf, type BufSpec, describe } from './buffer.ts';
import { Request } from './request.ts';
import { Status } from './status.ts';
import { Message } from './message.ts';
import { runtime, runtimeOrNull, checkActive, type ThreadRuntime } from '../runtime/index.ts';
import { commStats, type CommStats } from './introspection.ts';

/** Context-id suffixes: the traffic classes of one communicator (util/sentinels.ts). */
export const CTX_PT2PT = CONTEXT_SUFFIX.PT2PT;
export const CTX_COLL = CONTEXT_SUFFIX.COLL;
export const CTX_GROUP_COLL = CONTEXT_SUFFIX.GROUP_COLL;

export class Pt2ptComm {
  #name: string;
  /** base context id (suffix bits 0) */
  _ctx: number;
  /** endpoints of the group, index = rank */
  _endpoints: Int32Array;
  /**
   * The endpoints point-to-point ranks address (dest, source): the group's, except on an
   * intercommunicator, where they are the remote group's (api/intercomm.ts).
   */
  _peers: Int32Array;
  /** The context sends go out on: _ctx, except on an intercommunicator (the remote group's id). */
  _sendCtx: number;
  /** endpoint -> rank, for endpoints of this group */
  #rankOf: Map<number, number> | null = null;
  readonly _predefined: boolean;
  /** the record in the object table (NULL_HANDLE until init for predefined communicators) */
  _handle = 0;
  _freed = false;
  /**
   * This thread's device where the communicator is bound to it (_bind, at init, where Device.binds
   * says so), else null: an Isend or Irecv of a plain byte view whose arguments pass the checks made
   * inline goes straight to Device.sendBytes or recvBytes, which choose the message's route
   * (docs/adr/0020-lean-common-path.md); one field test per call.
   */
  _dev: Device | null = null;
  /** the calling thread's endpoint, a member, where it cannot move (one endpoint per process); -1: look it up per call */
  _boundMe = -1;

  /**
   * Sequence of this endpoint's collective calls on the communicator: each call
   * gets its own tag on the collective context. Kept in shared memory per
   * (communicator, endpoint), so that any thread attached to the endpoint
   * continues the same sequence as the other processes.
   */
  get _collSeq(): number {
    return Atomics.load(this.#seqCells(), this.#seqIndex());
  }
  set _collSeq(v: number) {
    Atomics.store(this.#seqCells(), this.#seqIndex(), v | 0);
  }
  /**
   * @internal Where _collSeq lives for the calling thread: the shared cells and this
   * communicator's index in them (fixed for a thread while the communicator lives), for a caller
   * that keeps them across calls (coll-comm.ts, the lean small allreduce).
   */
  _collSeqCell(): { readonly cells: Int32Array; readonly index: number } {
    return { cells: this.#seqCells(), index: this.#seqIndex() };
  }
  #seqCells(): Int32Array {
    return runtime('collective').device.shared.collSeq;
  }
  #seqIndex(): number {
    const rt = runtime('collective');
    return handleIndex(this._handle) * rt.settings.endpoints + (rt.endpoint - rt.device.firstEndpoint);
  }

  /** @internal */
  constructor(name: string, ctx: number, endpoints: Int32Array, predefined: boolean) {
    this.#name = name;
    this._ctx = ctx;
    this._sendCtx = ctx;
    this._endpoints = endpoints;
    this._peers = endpoints;
    this._predefined = predefined;
    this._setEndpoints(endpoints);
  }

  /** @internal (Re)sets the group: predefined communicators get theirs at init. */
  _setEndpoints(endpoints: Int32Array, handle = this._handle): void {
    this._handle = handle;
    this._endpoints = endpoints;
    this._peers = endpoints;
    let identity = true;
    for (let i = 0; i < endpoints.length; i++) if (endpoints[i] !== i) identity = false;
    this.#rankOf = identity ? null : new Map(Array.from(endpoints, (e, i) => [e, i] as [number, number]));
  }

  /**
   * @internal Binds the communicator to this thread's device where the device takes it
   * (Device.binds; a predefined communicator, at init), or unbinds it (null, at finalize).
   */
  _bind(rt: ThreadRuntime | null): void {
    this._dev = null;
    this._boundMe = -1;
    if (rt === null || !rt.device.binds(this._predefined)) return;
    const dev = rt.device;
    if (dev.opts.endpointsPerProcess === 1) {
      // MPI.threadAttach cannot move a thread off the process's one endpoint: its membership is fixed.
      if (this._rankOfEndpoint(rt.endpoint) === UNDEFINED) return;
      this._boundMe = rt.endpoint;
    }
    this._dev = dev;
  }

  /** @internal The calling thread's endpoint on a bound communicator, or -1 where it is not a member (several endpoints per process: it may move). */
  _boundEndpoint(call: string): number {
    const me = this._boundMe;
    if (me >= 0) return me;
    const ep = runtime(call).endpoint;
    return this._rankOfEndpoint(ep) === UNDEFINED ? -1 : ep;
  }

  get name(): string {
    return this.#name;
  }
  set name(v: string) {
    this.#name = String(v);
  }
  /** Diagnostics: the communicator's base context id. */
  get contextId(): number {
    return this._ctx;
  }
  get size(): number {
    return this._endpoints.length;
  }
  /** The caller's rank, or UNDEFINED when the calling thread's endpoint is not a member. */
  get rank(): number {
    return this._rankOfEndpoint(runtime('Comm.rank').endpoint);
  }

  /** @internal */
  _rankOfEndpoint(endpoint: number): number {
    if (this.#rankOf === null) return endpoint < this._endpoints.length ? endpoint : UNDEFINED;
    return this.#rankOf.get(endpoint) ?? UNDEFINED;
  }

  /**
   * @internal Throws ERR_COMM naming `call` when the communicator has been freed: through this
   * wrapper, or through another thread's wrapper of the same record (then this one is stale: the
   * record's handle generation or free flag says so, object-table.ts).
   */
  _checkNotFreed(call: string, verb = 'has been freed'): void {
    if (this._freed) throw mpiError(ERR_COMM, call, `communicator ${this.#name} ${verb}`);
    if (!this._predefined && !runtime(call).device.objects.isUsable(this._handle)) {
      this._freed = true;
      throw mpiError(ERR_COMM, call, `communicator ${this.#name} ${verb} (in another thread)`);
    }
  }

  /** @internal My endpoint, checked: the communicator is usable and the caller is a member. */
  _me(call: string): number {
    const rt = runtime(call);
    this._checkNotFreed(call);
    const ep = rt.endpoint;
    if (this._rankOfEndpoint(ep) === UNDEFINED) {
      throw mpiError(ERR_COMM, call, `the calling thread's endpoint ${ep} is not a member of ${this.#name}`);
    }
    return ep;
  }

  /** @internal Checks a destination rank; returns its endpoint, or PROC_NULL. */
  _dest(dest: number, call: string, arg = 'dest'): number {
    if (dest === PROC_NULL) return PROC_NULL;
    const peers = this._peers;
    if (!Number.isInteger(dest) || dest < 0 || dest >= peers.length) {
      throw mpiError(ERR_RANK, call, `${arg} ${String(dest)} is out of range for ${this.#name} (${this._peersAre()} ${peers.length}): expected 0..${peers.length - 1} or PROC_NULL`);
    }
    return peers[dest]!;
  }

  /** @internal Checks a source rank; returns its endpoint, ANY_SOURCE or PROC_NULL. */
  _source(source: number, call: string): number {
    if (source === ANY_SOURCE || source === PROC_NULL) return source;
    const peers = this._peers;
    if (!Number.isInteger(source) || source < 0 || source >= peers.length) {
      throw mpiError(ERR_RANK, call, `source ${String(source)} is out of range for ${this.#name} (${this._peersAre()} ${peers.length}): expected 0..${peers.length - 1}, ANY_SOURCE or PROC_NULL`);
    }
    return peers[source]!;
  }

  /** @internal What the ranks of point-to-point calls count, for error messages ('remote size' on an intercommunicator). */
  _peersAre(): string {
    return 'size';
  }

  /** @internal */
  _sendTag(tag: number, call: string, arg = 'tag'): void {
    if (!Number.isInteger(tag) || tag < 0 || tag > TAG_UB) {
      throw mpiError(ERR_TAG, call, `${arg} ${String(tag)} is invalid: expected 0..${TAG_UB} (TAG_UB)`);
    }
  }

  /** @internal */
  _recvTag(tag: number, call: string, arg = 'tag'): void {
    if (tag !== ANY_TAG && (!Number.isInteger(tag) || tag < 0 || tag > TAG_UB)) {
      throw mpiError(ERR_TAG, call, `${arg} ${String(tag)} is invalid: expected 0..${TAG_UB} (TAG_UB) or ANY_TAG`);
    }
  }

  // --- object form ---------------------------------------------------------

  #startSend(value: unknown, dest: number, tag: number, sync: boolean, call: string): Request<void> {
    const me = this._me(call);
    const dst = this._dest(dest, call);
    this._sendTag(tag, call);
    const r = new DevRequest(REQ_KIND.SEND, call);
    if (dst === PROC_NULL) return Request._completed(r, this, call);
    const req = new Request<void>(r, this, call);
    let data = encodeObject(value, call);
    if (data.length > MAX_MESSAGE_BYTES) throw messageTooLong(call, 'value', data.length);
    const rt = runtime(call);
    // The encoder's buffer is reused by the next pack: copy what the transport may keep (rendezvous).
    if (data.length > rt.settings.eagerLimit) data = data.slice();
    const dev = rt.device;
    dev.lifetime.acquire(r, this._handle, 0, 0);
    dev.send(r, me, dst, this._sendCtx, tag, data, true, sync);
    return req;
  }

  #startRecv(source: number, tag: number, objectForm: boolean, buf: BufSpec | null, call: string): Request<any> {
    // A plain byte view from a rank on a bound communicator, its arguments checked inline: the
    // device's receive of a byte view (Device.recvBytes chooses the route). Anything else, and any
    // bad argument (for its MPIError), is checked and posted below.
    const bound = this._dev;
    if (bound !== null && buf instanceof Uint8Array && !this._freed && (tag === ANY_TAG || (Number.isInteger(tag) && tag >= 0 && tag <= TAG_UB)) &&
      Number.isInteger(source) && source >= 0 && source < this._endpoints.length) {
      let me = this._boundMe;
      if (me < 0) me = this._boundEndpoint(call);
      if (me >= 0) return new Request<void>(bound.recvBytes(me, this._ctx, this._endpoints[source]!, tag, buf, this._handle, call), this, call);
    }
    const me = this._me(call);
    const src = this._source(source, call);
    this._recvTag(tag, call);
    const r = new DevRequest(REQ_KIND.RECV, call);
    if (objectForm) r.objectMode = true;
    else setRecvBuf(r, buf, call, 'buf');
    if (src === PROC_NULL) {
      r.sourceEndpoint = PROC_NULL;
      r.tag = ANY_TAG;
      const done = Request._completed<unknown>(r, this, call);
      if (objectForm) done._valueOf = valueOf;
      return done;
    }
    const req = new Request<unknown>(r, this, call);
    if (objectForm) req._valueOf = valueOf;
    const dev = runtime(call).device;
    const lt = dev.lifetime;
    lt.acquire(r, this._handle, objectForm || !(lt.countsPredefined || Array.isArray(buf)) ? 0 : typeHandleOf(buf, lt.countsPredefined), 0);
    dev.postRecv(r, me, this._ctx, src, tag);
    return req;
  }

  /** Sends any msgpack-encodable value; resolves when the value may be reused (eager: at once). */
  send(value: unknown, dest: number, tag = 0): Promise<void> {
    return blocking(this.#startSend(value, dest, tag, false, 'send'), 'send', this, dest, tag);
  }
  /** Synchronous send: resolves only once the receiver has matched it. */
  ssend(value: unknown, dest: number, tag = 0): Promise<void> {
    return blocking(this.#startSend(value, dest, tag, true, 'ssend'), 'ssend', this, dest, tag);
  }
  isend(value: unknown, dest: number, tag = 0): Request<void> {
    return this.#startSend(value, dest, tag, false, 'isend');
  }
  /** Receives a value. @example const x = await MPI.COMM_WORLD.recv<number[]>(0, 7); */
  recv<T>(source: number = ANY_SOURCE, tag: number = ANY_TAG, status?: Status): Promise<T> {
    const req = this.#startRecv(source, tag, true, null, 'recv') as Request<T>;
    return blocking(req, 'recv', this, source, tag, status);
  }
  irecv<T>(source: number = ANY_SOURCE, tag: number = ANY_TAG): Request<T> {
    return this.#startRecv(source, tag, true, null, 'irecv') as Request<T>;
  }
  /** Sends `value` to dest and receives from source, without deadlock between the two. */
  async sendrecv<T>(value: unknown, dest: number, sendtag: number, source: number, recvtag: number, status?: Status): Promise<T> {
    const rreq = this.#startRecv(source, recvtag, true, null, 'sendrecv') as Request<T>;
    const sreq = this.#startSend(value, dest, sendtag, false, 'sendrecv');
    await blocking(sreq, 'sendrecv', this, dest, sendtag);
    return blocking(rreq, 'sendrecv', this, source, recvtag, status);
  }

  // --- buffer form ---------------------------------------------------------

  /** @internal A standard (or synchronous) send of a buffer, checked, its errors naming `call` (the send modes of pt2pt-modes.ts start theirs here too). */
  _startSendBuf(buf: BufSpec, dest: number, tag: number, sync: boolean, call: string): Request<void> {
    const me = this._me(call);
    const dst = this._dest(dest, call);
    this._sendTag(tag, call);
    const bytes = bytesOfBuf(buf, call, 'buf');
    const r = new DevRequest(REQ_KIND.SEND, call);
    if (dst === PROC_NULL) return Request._completed(r, this, call);
    const req = new Request<void>(r, this, call);
    const dev = runtime(call).device;
    const lt = dev.lifetime;
    lt.acquire(r, this._handle, lt.countsPredefined || Array.isArray(buf) ? typeHandleOf(buf, lt.countsPredefined) : 0, 0);
    dev.send(r, me, dst, this._sendCtx, tag, bytes, false, sync);
    return req;
  }

  Send(buf: BufSpec, dest: number, tag = 0): Promise<void> {
    return blocking(this._startSendBuf(buf, dest, tag, false, 'Send'), 'Send', this, dest, tag);
  }
  Ssend(buf: BufSpec, dest: number, tag = 0): Promise<void> {
    return blocking(this._startSendBuf(buf, dest, tag, true, 'Ssend'), 'Ssend', this, dest, tag);
  }
  Isend(buf: BufSpec, dest: number, tag = 0): Request<void> {
    // A plain byte view to a rank on a bound communicator, every check of _startSendBuf made inline:
    // the device's send of a byte view (Device.sendBytes chooses the route; null: it left by the lean
    // route, complete). Anything else, and any bad argument (for its MPIError), takes _startSendBuf.
    const dev = this._dev;
    if (dev !== null && buf instanceof Uint8Array && !this._freed && Number.isInteger(tag) && tag >= 0 && tag <= TAG_UB &&
      Number.isInteger(dest) && dest >= 0 && dest < this._endpoints.length && buf.length <= MAX_MESSAGE_BYTES) {
      let me = this._boundMe;
      // Several endpoints per process: the thread's endpoint may move (MPI.threadAttach).
      if (me < 0) me = this._boundEndpoint('Isend');
      if (me >= 0) {
        const r = dev.sendBytes(me, this._endpoints[dest]!, this._ctx, tag, buf, this._handle, 'Isend');
        return r === null ? Request._leanSent(this) : new Request<void>(r, this, 'Isend');
      }
    }
    return this._startSendBuf(buf, dest, tag, false, 'Isend');
  }
  Issend(buf: BufSpec, dest: number, tag = 0): Request<void> {
    return this._startSendBuf(buf, dest, tag, true, 'Issend');
  }
  /** Receives into buf. @throws MPIError(ERR_TRUNCATE) if the message is longer than buf. */
  async Recv(buf: BufSpec, source: number = ANY_SOURCE, tag: number = ANY_TAG): Promise<Status> {
    const req = this.#startRecv(source, tag, false, buf, 'Recv');
    await blocking(req, 'Recv', this, source, tag);
    return req.status!;
  }
  Irecv(buf: BufSpec, source: number = ANY_SOURCE, tag: number = ANY_TAG): Request<void> {
    // #startRecv's byte-view receive, inline: one call less on the path of the common message (ADR 0020).
    const dev = this._dev;
    if (dev !== null && buf instanceof Uint8Array && !this._freed && (tag === ANY_TAG || (Number.isInteger(tag) && tag >= 0 && tag <= TAG_UB)) &&
      Number.isInteger(source) && source >= 0 && source < this._endpoints.length) {
      let me = this._boundMe;
      if (me < 0) me = this._boundEndpoint('Irecv');
      if (me >= 0) return new Request<void>(dev.recvBytes(me, this._ctx, this._endpoints[source]!, tag, buf, this._handle, 'Irecv'), this, 'Irecv');
    }
    return this.#startRecv(source, tag, false, buf, 'Irecv');
  }
  async Sendrecv(sendbuf: BufSpec, dest: number, sendtag: number, recvbuf: BufSpec, source: number, recvtag: number): Promise<Status> {
    const rreq = this.#startRecv(source, recvtag, false, recvbuf, 'Sendrecv');
    const sreq = this._startSendBuf(sendbuf, dest, sendtag, false, 'Sendrecv');
    await blocking(sreq, 'Sendrecv', this, dest, sendtag);
    await blocking(rreq, 'Sendrecv', this, source, recvtag);
    return rreq.status!;
  }

  /** A persistent send: start() sends buf to dest again each time. */
  SendInit(buf: BufSpec, dest: number, tag = 0): Request<void> {
    const call = 'SendInit';
    const me = this._me(call);
    const dst = this._dest(dest, call);
    this._sendTag(tag, call);
    const source = sendSourceOf(buf, call, 'buf');
    const req = new Request<void>(null, this, call);
    const type = req._hold(this._handle, buf);
    // The request holds its communicator and datatype from now until free(): start() works after their user release.
    req._starter = (r) => {
      r.kind = REQ_KIND.SEND;
      const dev = runtime(call).device;
      if (dst === PROC_NULL) return dev.completeNow(r);
      dev.lifetime.acquire(r, this._handle, type, 0);
      dev.send(r, me, dst, this._sendCtx, tag, source(), false, false);
    };
    return req;
  }

  /** A persistent receive: start() posts it again each time. */
  RecvInit(buf: BufSpec, source: number = ANY_SOURCE, tag: number = ANY_TAG): Request<void> {
    const call = 'RecvInit';
    const me = this._me(call);
    const src = this._source(source, call);
    this._recvTag(tag, call);
    const target = recvTargetOf(buf, call, 'buf');
    const req = new Request<void>(null, this, call);
    const type = req._hold(this._handle, buf);
    req._starter = (r) => {
      r.kind = REQ_KIND.RECV;
      r.buf = target.buf;
      r.finish = target.finish;
      const dev = runtime(call).device;
      if (src === PROC_NULL) {
        r.sourceEndpoint = PROC_NULL;
        r.tag = ANY_TAG;
        return dev.completeNow(r);
      }
      dev.lifetime.acquire(r, this._handle, type, 0);
      dev.postRecv(r, me, this._ctx, src, tag);
    };
    return req;
  }

  // --- probe -----------------------------------------------------------------

  #probeArgs(source: number, tag: number, call: string): [number, number] {
    const me = this._me(call);
    const src = this._source(source, call);
    this._recvTag(tag, call);
    return [me, src];
  }

  #statusOf(info: { sourceEndpoint: number; tag: number; count: number }): Status {
    return new Status()._set(this._rankOfEndpoint(info.sourceEndpoint), info.tag, info.count, 0, false);
  }

  /** Non-blocking probe: the status of a matching pending message, or null. */
  iprobe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Status | null {
    const [me, src] = this.#probeArgs(source, tag, 'iprobe');
    if (src === PROC_NULL) return procNullStatus();
    const info = runtime('iprobe').device.probe(me, this._ctx, src, tag);
    return info === null ? null : this.#statusOf(info);
  }

  /** Waits until a matching message is pending; the message stays for a later receive. */
  async probe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Promise<Status> {
    const [me, src] = this.#probeArgs(source, tag, 'probe');
    if (src === PROC_NULL) return procNullStatus();
    const rt = runtime('probe');
    const dev = rt.device;
    for (;;) {
      const seen = dev.arrivals(me);
      const info = dev.probe(me, this._ctx, src, tag);
      if (info !== null) return this.#statusOf(info);
      await this.#awaitArrival(rt, me, seen, 'probe', source, tag);
    }
  }

  async #awaitArrival(rt: ThreadRuntime, me: number, seen: number, call: string, source: number, tag: number): Promise<void> {
    const dev = rt.device;
    const failure = dev.failure();
    if (failure !== null) throw failure;
    rt.blocked.enter(call, this.#name, source, tag, this._ctx);
    try {
      await dev.arrivalAfter(me, seen);
    } finally {
      rt.blocked.leave();
    }
  }

  /** Matched probe without waiting: the message is removed from matching, or null. */
  improbe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Message | null {
    const [me, src] = this.#probeArgs(source, tag, 'improbe');
    if (src === PROC_NULL) return Message._procNull(this);
    const got = runtime('improbe').device.mprobe(me, this._ctx, src, tag);
    return got === null ? null : new Message(this, got.slot, this.#statusOf(got.info));
  }

  /** Matched probe: waits for a message and removes it from matching, so no other receive can take it. */
  async mprobe(source: number = ANY_SOURCE, tag: number = ANY_TAG): Promise<Message> {
    const [me, src] = this.#probeArgs(source, tag, 'mprobe');
    if (src === PROC_NULL) return Message._procNull(this);
    const rt = runtime('mprobe');
    const dev = rt.device;
    for (;;) {
      const seen = dev.arrivals(me);
      const got = dev.mprobe(me, this._ctx, src, tag);
      if (got !== null) return new Message(this, got.slot, this.#statusOf(got.info));
      await this.#awaitArrival(rt, me, seen, 'mprobe', source, tag);
    }
  }

  // --- management ------------------------------------------------------------

  /** User release. Pending operations still complete. @throws MPIError(ERR_COMM) for predefined communicators. */
  free(): void {
    checkActive('Comm.free');
    if (this._predefined) throw mpiError(ERR_COMM, 'Comm.free', `${this.#name} is predefined and cannot be freed`);
    this._checkNotFreed('Comm.free', 'has already been freed');
    this._freed = true;
  }

  /**
   * Counters of this process on this communicator since it was made (tsmpi's MPI_T, API.md
   * "Introspection"): messages and bytes sent and received, collective calls, time blocked.
   * @throws MPIError(ERR_COMM) when the communicator has been freed
   * @example const { messagesSent, blockedMs } = comm.stats();
   */
  stats(): CommStats {
    checkActive('Comm.stats');
    this._checkNotFreed('Comm.stats');
    return commStats(runtime('Comm.stats'), this);
  }

  /** IDENT (same communicator), CONGRUENT (same ranks, other context), SIMILAR (same members), or UNEQUAL. */
  compare(other: Pt2ptComm): number {
    if (!(other instanceof Pt2ptComm)) throw mpiError(ERR_COMM, 'Comm.compare', `other is ${describe(other)}: expected a Comm`);
    // The same record is the same communicator; a context id alone can be reused after a free.
    if (other === this || (other._handle !== 0 && other._handle === this._handle)) return IDENT;
    const a = this._endpoints;
    const b = other._endpoints;
    if (a.length !== b.length) return UNEQUAL;
    let same = true;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) same = false;
    if (same) return CONGRUENT;
    const sa = Array.from(a).sort((x, y) => x - y);
    const sb = Array.from(b).sort((x, y) => x - y);
    return sa.every((x, i) => x === sb[i]) ? SIMILAR : UNEQUAL;
  }

  toString(): string {
    return `Comm(${this.#name})`;
  }
}

function valueOf(r: DevRequest): unknown {
  return r.value;
}

function procNullStatus(): Status {
  return new Status()._set(PROC_NULL, ANY_TAG, 0, 0, false);
}

/** Awaits a request as a blocking call: records it for the roll-call, fills `status`. */
export function blocking<T>(req: Request<T>, call: string, comm: Pt2ptComm, peer: number, tag: number, status?: Status): Promise<T> {
  if (req._isDone) {
    if (status !== undefined) copyStatus(req, status);
    try {
      return Promise.resolve(req._result());
    } catch (e) {
      return rejectAtCallSite(e);
    }
  }
  // Null only in a program that finalized while this call was in flight: nothing to record then.
  const blocked = runtimeOrNull()?.blocked ?? null;
  return new Promise<T>((resolve) => {
    blocked?.enter(call, comm.name, peer, tag, comm._ctx);
    req._listen(() => {
      blocked?.leave();
      if (status !== undefined) copyStatus(req, status);
      try {
        resolve(req._result());
      } catch (e) {
        // The error was made where the request completed: rejected at the awaiting call, its stack names the user's.
        resolve(rejectAtCallSite(e));
      }
    });
  });
}

function copyStatus(req: Request<any>, out: Status): void {
  const st = req.status!;
  out._set(st.source, st.tag, st._count, st.error, st.cancelled);
}
