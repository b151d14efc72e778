/**
 * The other send modes and combined calls of Comm's point-to-point (API.md "More point-to-point",
 * MPI 4.0 §3.4-3.10): buffered (Bsend, Ibsend, BsendInit, bsend, ibsend), ready (Rsend, Irsend,
 * RsendInit), the persistent synchronous SsendInit, and SendrecvReplace, Isendrecv,
 * IsendrecvReplace. The standard modes stay in pt2pt-comm.ts; this class sits between it and the
 * collectives (ObjectCollComm extends it), so Comm, Intercomm and the topology communicators have
 * every mode. On an intercommunicator, dest and source are ranks of the remote group, as for Send.
 *
 * Every send here ends in Device.send, as Send's do. Modes:
 * - buffered: the message is copied and its bytes reserved in the process's attached buffer
 *   (bsend-buffer.ts); the call completes at once; a standard send of the copy carries it and gives
 *   the bytes back when it completes.
 * - ready: MPI lets a ready send be a standard send (§3.4: it is correct wherever Rsend is), and
 *   tsmpi does exactly that: no error is raised when no receive is posted.
 * - SsendInit: SendInit whose every start is a synchronous send.
 * Arguments are checked here, once, before anything changes; errors name the call.
 */
import { DevRequest, MAX_MESSAGE_BYTES, REQ_KIND } from '../device/index.ts';
import { encodeObject } from '../util/index.ts';
import { ANY_TAG, PROC_NULL } from './constants.ts';
import { bytesOfBuf, messageTooLong, sendSourceOf, setRecvBuf, typeHandleOf, type BufSpec } from './buffer.ts';
import { reserveBsend, releaseBsend } from './bsend-buffer.ts';
import { Pt2ptComm, blocking } from './pt2pt-comm.ts';
import { Request } from './request.ts';
import { Status } from './status.ts';
import { precvInit, psendInit, type PartitionedRequest } from './partitioned.ts';
import { runtime } from '../runtime/index.ts';

export class Pt2ptModesComm extends Pt2ptComm {
  // --- buffered mode -----------------------------------------------------------------

  /**
   * Starts one buffered send of `bytes` (already checked) to endpoint dst: reserves its room in the
   * attached buffer, copies it, and sends the copy; the bytes go back when that send completes.
   * @throws MPIError(ERR_BUFFER) when no buffer is attached or it has no room.
   */
  #bufferedSend(me: number, dst: number, tag: number, bytes: Uint8Array, objectForm: boolean, call: string): void {
    const { cells, need } = reserveBsend(call, bytes.length);
    const copy = bytes.slice();
    const inner = new DevRequest(REQ_KIND.SEND, call);
    inner.onComplete = () => releaseBsend(cells, need);
    const dev = runtime(call).device;
    dev.lifetime.acquire(inner, this._handle, 0, 0);
    try {
      dev.send(inner, me, dst, this._sendCtx, tag, copy, objectForm, false);
    } catch (e) {
      // The first frame could not go (Device.send undid the request): its room goes back.
      if (!inner.done) releaseBsend(cells, need);
      throw e;
    }
  }

  #startBsend(buf: BufSpec, dest: number, tag: number, call: string): Request<void> {
    const me = this._me(call);
    const dst = this._dest(dest, call);
    this._sendTag(tag, call);
    const bytes = bytesOfBuf(buf, call, 'buf');
    if (dst !== PROC_NULL) this.#bufferedSend(me, dst, tag, bytes, false, call);
    return Request._completed(new DevRequest(REQ_KIND.SEND, call), this, call);
  }

  #startObjectBsend(value: unknown, dest: number, tag: number, call: string): Request<void> {
    const me = this._me(call);
    const dst = this._dest(dest, call);
    this._sendTag(tag, call);
    if (dst !== PROC_NULL) {
      const data = encodeObject(value, call);
      if (data.length > MAX_MESSAGE_BYTES) throw messageTooLong(call, 'value', data.length);
      this.#bufferedSend(me, dst, tag, data, true, call);
    }
    return Request._completed(new DevRequest(REQ_KIND.SEND, call), this, call);
  }

  /**
   * Buffered send (MPI_Bsend): copies buf into the attached buffer and resolves at once, whether or
   * not a receive is posted.
   * @throws MPIError(ERR_BUFFER) when no buffer is attached (MPI.attachBuffer) or it lacks room for
   *   buf's bytes + BSEND_OVERHEAD; ERR_RANK, ERR_TAG for bad arguments.
   * @example MPI.attachBuffer(1 << 20); await comm.Bsend(new Float64Array(100), 1, 7);
   */
  Bsend(buf: BufSpec, dest: number, tag = 0): Promise<void> {
    try {
      this.#startBsend(buf, dest, tag, 'Bsend');
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }
  /** Nonblocking buffered send (MPI_Ibsend): the request is complete on return. @throws as Bsend */
  Ibsend(buf: BufSpec, dest: number, tag = 0): Request<void> {
    return this.#startBsend(buf, dest, tag, 'Ibsend');
  }
  /** Buffered send of any value (object form of Bsend): its encoding is what the attached buffer holds. */
  bsend(value: unknown, dest: number, tag = 0): Promise<void> {
    try {
      this.#startObjectBsend(value, dest, tag, 'bsend');
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }
  /** Nonblocking object-form buffered send: the request is complete on return. */
  ibsend(value: unknown, dest: number, tag = 0): Request<void> {
    return this.#startObjectBsend(value, dest, tag, 'ibsend');
  }

  /**
   * A persistent buffered send (MPI_Bsend_init): each start() copies buf into the attached buffer,
   * and the request completes at once. @throws MPIError(ERR_BUFFER) from start() when there is no room.
   */
  BsendInit(buf: BufSpec, dest: number, tag = 0): Request<void> {
    return this.#persistentSend(buf, dest, tag, 'BsendInit', 'buffered');
  }

  // --- ready mode (a standard send, as MPI allows) -------------------------------------

  /** Ready send (MPI_Rsend): MPI lets it be a standard send, and in tsmpi it is one. */
  Rsend(buf: BufSpec, dest: number, tag = 0): Promise<void> {
    return blocking(this._startSendBuf(buf, dest, tag, false, 'Rsend'), 'Rsend', this, dest, tag);
  }
  /** Nonblocking ready send (MPI_Irsend): a standard Isend. */
  Irsend(buf: BufSpec, dest: number, tag = 0): Request<void> {
    return this._startSendBuf(buf, dest, tag, false, 'Irsend');
  }
  /** Persistent ready send (MPI_Rsend_init): SendInit under another name. */
  RsendInit(buf: BufSpec, dest: number, tag = 0): Request<void> {
    return this.#persistentSend(buf, dest, tag, 'RsendInit', 'standard');
  }

  /** Persistent synchronous send (MPI_Ssend_init): each start() completes once the receiver has matched the message. */
  SsendInit(buf: BufSpec, dest: number, tag = 0): Request<void> {
    return this.#persistentSend(buf, dest, tag, 'SsendInit', 'synchronous');
  }

  /** The persistent sends of this file (SendInit's shape: the request holds its communicator and datatype until free()). */
  #persistentSend(buf: BufSpec, dest: number, tag: number, call: string, mode: 'standard' | 'synchronous' | 'buffered'): Request<void> {
    const me = this._me(call);
    const dst = this._dest(dest, call);
    this._sendTag(tag, call);
    const source = sendSourceOf(buf, call, 'buf');
    const req = new Request<void>(null, this, call);
    const type = req._hold(this._handle, buf);
    const startCall = `${call}.start`;
    req._starter = (r) => {
      r.kind = REQ_KIND.SEND;
      const dev = runtime(startCall).device;
      if (dst === PROC_NULL) return dev.completeNow(r);
      if (mode === 'buffered') {
        this.#bufferedSend(me, dst, tag, source(), false, startCall);
        return dev.completeNow(r);
      }
      dev.lifetime.acquire(r, this._handle, type, 0);
      dev.send(r, me, dst, this._sendCtx, tag, source(), false, mode === 'synchronous');
    };
    return req;
  }

  // --- partitioned (MPI 4.0 chapter 4, partitioned.ts) ---------------------------------------

  /**
   * A partitioned send (MPI_Psend_init): buf's elements split evenly into `partitions` parts; after
   * each start(), mark parts ready with pready / preadyRange / preadyList (from any thread of this
   * process) and each goes as soon as it is ready.
   * @throws MPIError(ERR_COUNT) when the elements do not split evenly; ERR_BUFFER for a buffer that
   *   is not a typed array or DataView; ERR_RANK, ERR_TAG for bad arguments.
   * @example const req = comm.PsendInit(data, 4, 1); req.start(); req.preadyRange(0, 3); await req.wait();
   */
  PsendInit(buf: BufSpec, partitions: number, dest: number, tag = 0): PartitionedRequest {
    return psendInit(this, buf, partitions, dest, tag);
  }

  /**
   * A partitioned receive (MPI_Precv_init) from `source` (not ANY_SOURCE) with `tag` (not ANY_TAG):
   * after each start(), parrived(i) tells whether part i is in buf; wait() completes once all are.
   */
  PrecvInit(buf: BufSpec, partitions: number, source: number, tag = 0): PartitionedRequest {
    return precvInit(this, buf, partitions, source, tag);
  }

  // --- combined send and receive --------------------------------------------------------

  /**
   * Sends sendbuf to dest and receives into recvbuf from source (MPI_Isendrecv, MPI 4.0): one
   * request, complete when both are; its status is the receive's.
   */
  Isendrecv(sendbuf: BufSpec, dest: number, sendtag: number, recvbuf: BufSpec, source: number, recvtag: number): Request<void> {
    return this.#sendrecv(sendbuf, dest, sendtag, recvbuf, source, recvtag, false, 'Isendrecv');
  }

  /**
   * Sends buf to dest, then receives into the same buf from source (MPI_Sendrecv_replace): the
   * outgoing contents are copied first, so the two never overlap.
   * @returns the receive's status
   * @example const st = await ring.SendrecvReplace(block, right, 0, left, 0);
   */
  async SendrecvReplace(buf: BufSpec, dest: number, sendtag: number, source: number, recvtag: number): Promise<Status> {
    const req = this.#sendrecv(buf, dest, sendtag, buf, source, recvtag, true, 'SendrecvReplace');
    await req.wait();
    return req.status!;
  }

  /** Nonblocking SendrecvReplace (MPI_Isendrecv_replace, MPI 4.0): buf must not be touched until the request completes. */
  IsendrecvReplace(buf: BufSpec, dest: number, sendtag: number, source: number, recvtag: number): Request<void> {
    return this.#sendrecv(buf, dest, sendtag, buf, source, recvtag, true, 'IsendrecvReplace');
  }

  /**
   * One send and one receive under one request whose status is the receive's. `replace`: the send
   * carries a copy of the buffer taken before the receive is posted into it.
   */
  #sendrecv(sendbuf: BufSpec, dest: number, sendtag: number, recvbuf: BufSpec, source: number, recvtag: number, replace: boolean, call: string): Request<void> {
    // Every argument is checked before anything starts (STYLE.md rule 19); the errors name `call`.
    const me = this._me(call);
    this._dest(dest, call);
    this._sendTag(sendtag, call, 'sendtag');
    const src = this._source(source, call);
    this._recvTag(recvtag, call, 'recvtag');
    let bytes = bytesOfBuf(sendbuf, call, replace ? 'buf' : 'sendbuf');
    const r = new DevRequest(REQ_KIND.RECV, call);
    setRecvBuf(r, recvbuf, call, replace ? 'buf' : 'recvbuf');
    // The outgoing contents, copied before the receive may overwrite them.
    if (replace) bytes = bytes.slice();
    let rreq: Request<void>;
    if (src === PROC_NULL) {
      r.sourceEndpoint = PROC_NULL;
      r.tag = ANY_TAG;
      rreq = Request._completed(r, this, call);
    } else {
      rreq = new Request<void>(r, this, call);
      const dev = runtime(call).device;
      const lt = dev.lifetime;
      lt.acquire(r, this._handle, lt.countsPredefined || Array.isArray(recvbuf) ? typeHandleOf(recvbuf, lt.countsPredefined) : 0, 0);
      dev.postRecv(r, me, this._ctx, src, recvtag);
    }
    const sreq = this._startSendBuf(bytes, dest, sendtag, false, call);
    return joinPair(rreq, sreq, this, call);
  }
}

/**
 * One request for a receive and a send already started: complete when both are, with the receive's
 * status (source, tag, count) and the first error of the two. It holds no references of its own: the
 * two it joins hold theirs until they complete.
 */
function joinPair(rreq: Request<void>, sreq: Request<void>, comm: Pt2ptComm, call: string): Request<void> {
  const outer = new DevRequest(REQ_KIND.GENERALIZED, call);
  const req = new Request<void>(outer, comm, call);
  let pending = 2;
  const settle = (): void => {
    if (--pending > 0) return;
    const rr = rreq._r!;
    const sr = sreq._r!;
    rreq._reported = true;
    sreq._reported = true;
    outer.sourceEndpoint = rr.sourceEndpoint;
    outer.tag = rr.tag;
    outer.count = rr.count;
    outer.error = rr.error ?? sr.error;
    runtime(call).device.completeNow(outer);
  };
  for (const inner of [rreq, sreq]) {
    if (inner._isDone) settle();
    else inner._listen(settle);
  }
  return req;
}
