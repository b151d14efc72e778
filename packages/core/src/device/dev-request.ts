/**
 * The calling thread's side of one request: what cannot live in shared memory
 * (the user's buffer, a decoded value, the completion callback). The shared
 * side is the slot (device/request-table.ts). The public Request of the API
 * layer wraps one of these.
 */
import type { MPIError } from '../util/index.ts';

export const REQ_KIND = { SEND: 1, RECV: 2, GENERALIZED: 3 } as const;

export class DevRequest {
  /** shared slot, or -1 once released */
  slot = -1;
  kind: number;
  done = false;
  /** receive: the bytes to fill (null in object mode); send: the bytes to send (rendezvous keeps them) */
  buf: Uint8Array | null = null;
  /** receive in object form: decode msgpack into `value` */
  objectMode = false;
  value: unknown = undefined;
  error: MPIError | null = null;
  /** completed status (source is an endpoint; the API layer maps it to a comm rank) */
  sourceEndpoint = -2;
  tag = -1;
  count = 0;
  cancelled = false;
  /** freed by the user while pending: release on completion */
  freed = false;
  /** the API-layer object that wraps this request */
  owner: unknown = null;
  /** called once on completion (a waiter: a promise resolver or a waitall counter) */
  onComplete: ((r: DevRequest) => void) | null = null;
  /** how this request references the objects it uses (REF_MODE in lifetime.ts; NONE: internal, or done) */
  refMode = 0;
  /** the handles it holds counted references to (0: none) */
  refComm = 0;
  refType = 0;
  refOp = 0;
  /** its reference cell (gc strategy) */
  refCell = -1;
  /** optional post-processing before onComplete (e.g. unpack a non-contiguous datatype) */
  finish: ((r: DevRequest) => void) | null = null;
  /**
   * The API call that started this request (e.g. 'Isend', 'bcast', 'SendInit.start'): the errors
   * the device raises for it name this call, not a device function (docs/ERRORS.md).
   */
  readonly call: string;

  /** @param call the API call that starts it (default: an internal request, its errors say 'progress') */
  constructor(kind: number, call = 'progress') {
    this.kind = kind;
    this.call = call;
  }
}
