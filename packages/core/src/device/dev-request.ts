/**
 * The calling thread's side of one request: what cannot live in shared memory
 * (the user's buffer, a decoded value, the completion callback). The shared
 * side is the slot (device/request-table.ts). The public Request of the API
 * layer wraps one of these.
 */
import { ERR_OTHER, mpiError, type MPIError } from '../util/index.ts';

export const REQ_KIND = { SEND: 1, RECV: 2, GENERALIZED: 3 } as const;

export class DevRequest {
  /** shared slot, or -1 once released */
  declare slot: number;
  declare kind: number;
  declare done: boolean;
  /** receive: the bytes to fill (null in object mode); send: the bytes to send (rendezvous keeps them) */
  declare buf: Uint8Array | null;
  /** receive in object form: decode msgpack into `value` */
  declare objectMode: boolean;
  declare value: unknown;
  declare error: MPIError | null;
  /** completed status (source is an endpoint; the API layer maps it to a comm rank) */
  declare sourceEndpoint: number;
  declare tag: number;
  declare count: number;
  declare cancelled: boolean;
  /** freed by the user while pending: release on completion */
  declare freed: boolean;
  /** the API-layer object that wraps this request */
  declare owner: unknown;
  /** called once on completion (a waiter: a promise resolver or a waitall counter) */
  declare onComplete: ((r: DevRequest) => void) | null;
  /** how this request references the objects it uses (REF_MODE in lifetime.ts; NONE: internal, or done) */
  declare refMode: number;
  /** the handles it holds counted references to (0: none) */
  declare refComm: number;
  declare refType: number;
  declare refOp: number;
  /** its reference cell (gc strategy) */
  declare refCell: number;
  /** optional post-processing before onComplete (e.g. unpack a non-contiguous datatype) */
  declare finish: ((r: DevRequest) => void) | null;
  /**
   * The API call that started this request (e.g. 'Isend', 'bcast', 'SendInit.start'): the errors
   * the device raises for it name this call, not a device function (docs/ERRORS.md).
   */
  declare readonly call: string;

  /** @param call the API call that starts it (default: an internal request, its errors say 'progress') */
  constructor(kind: number, call = 'progress') {
    // Every field is set here, in declaration order, not by class-field initializers: V8 runs those as a
    // function of their own per object made, a call on the path of every message (docs/adr/0020-lean-common-path.md).
    this.slot = -1;
    this.kind = kind;
    this.done = false;
    this.buf = null;
    this.objectMode = false;
    this.value = undefined;
    this.error = null;
    this.sourceEndpoint = -2;
    this.tag = -1;
    this.count = 0;
    this.cancelled = false;
    this.freed = false;
    this.owner = null;
    this.onComplete = null;
    this.refMode = 0;
    this.refComm = 0;
    this.refType = 0;
    this.refOp = 0;
    this.refCell = -1;
    this.finish = null;
    this.call = call;
  }
}

/**
 * Rewrites every field of one throwaway request, once, when this module loads. V8 treats a field
 * that no object has rewritten since its constructor as constant, and code TurboFan compiled while
 * that held (the constructor, and every caller it is inlined into: Isend, Irecv, the lean path) is
 * thrown away the first time any request rewrites it. The lean path's receives never rewrite
 * objectMode, value, error or the reference fields, so a program's first collective, truncation or
 * general-path receive after its lean loop had been compiled threw the loop's code away
 * (docs/adr/0020-lean-common-path.md section 8). Same representations as the real values: small
 * integers, booleans, objects.
 */
function rewriteEveryFieldOnce(): void {
  const r = new DevRequest(REQ_KIND.SEND);
  r.slot = 0;
  r.kind = REQ_KIND.RECV;
  r.done = true;
  r.buf = new Uint8Array(0);
  r.objectMode = true;
  r.value = null;
  r.error = mpiError(ERR_OTHER, 'progress', 'a request that never ran');
  r.sourceEndpoint = 0;
  r.tag = 0;
  r.count = 1;
  r.cancelled = true;
  r.freed = true;
  r.owner = r;
  r.onComplete = rewriteEveryFieldOnce;
  r.refMode = 1;
  r.refComm = 1;
  r.refType = 1;
  r.refOp = 1;
  r.refCell = 0;
  r.finish = rewriteEveryFieldOnce;
}
rewriteEveryFieldOnce();
