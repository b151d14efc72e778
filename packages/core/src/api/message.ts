/**
 * Message: a matched message from mprobe/improbe. It has been removed from
 * matching, so only this handle can receive it, exactly once. Until then it
 * holds a reference to its communicator (device/lifetime.ts), so a
 * communicator freed meanwhile keeps its record and context id.
 */
import { DevRequest, REQ_KIND } from '../device/index.ts';
import { ERR_ARG, mpiError } from '../util/index.ts';
import { ANY_TAG, PROC_NULL } from './constants.ts';
import { setRecvBuf, type BufSpec } from './buffer.ts';
import { Request, type RequestComm } from './request.ts';
import { Status } from './status.ts';
import { runtime } from '../runtime/index.ts';

const NO_SLOT = -1;

export class Message {
  readonly status: Status;
  readonly #comm: RequestComm;
  #slot: number;
  #received = false;

  /** @internal */
  constructor(comm: RequestComm, slot: number, status: Status) {
    this.#comm = comm;
    this.#slot = slot;
    this.status = status;
    if (slot !== NO_SLOT) runtime('mprobe').device.lifetime.retain(comm._handle);
  }

  /** @internal The message of a matched probe on PROC_NULL. */
  static _procNull(comm: RequestComm): Message {
    return new Message(comm, NO_SLOT, new Status()._set(PROC_NULL, ANY_TAG, 0, 0, false));
  }

  #start(objectForm: boolean, buf: BufSpec | null, call: string): Request<any> {
    if (this.#received) throw mpiError(ERR_ARG, call, 'this Message has already been received (each Message is received exactly once)');
    const r = new DevRequest(REQ_KIND.RECV, call);
    if (objectForm) r.objectMode = true;
    else setRecvBuf(r, buf, call, 'buf');
    const dev = runtime(call).device;
    this.#received = true;
    if (this.#slot === NO_SLOT) {
      r.sourceEndpoint = PROC_NULL;
      r.tag = ANY_TAG;
      const req = Request._completed<unknown>(r, this.#comm, call);
      req._valueOf = (d) => d.value;
      return req;
    }
    const req = new Request<unknown>(r, this.#comm, call);
    if (objectForm) req._valueOf = (d) => d.value;
    const slot = this.#slot;
    // The receive references the communicator from now on; the Message's own reference goes once it has started.
    dev.lifetime.acquire(r, this.#comm._handle, 0, 0);
    try {
      dev.recvMatched(r, slot);
    } catch (e) {
      // No request slot (ERR_NO_MEM): the device dropped the receive; the Message stays receivable.
      this.#received = false;
      throw e;
    }
    this.#slot = NO_SLOT;
    dev.lifetime.release(this.#comm._handle);
    return req;
  }

  recv<T>(): Promise<T> {
    return (this.#start(true, null, 'Message.recv') as Request<T>).wait();
  }
  irecv<T>(): Request<T> {
    return this.#start(true, null, 'Message.irecv') as Request<T>;
  }
  async Recv(buf: BufSpec): Promise<Status> {
    const req = this.#start(false, buf, 'Message.Recv');
    await req.wait();
    return req.status!;
  }
  Irecv(buf: BufSpec): Request<void> {
    return this.#start(false, buf, 'Message.Irecv');
  }
}
