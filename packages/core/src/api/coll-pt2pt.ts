/**
 * CollPt2pt (coll/pt2pt.ts) over a communicator's collective context:
 * the only way the collective algorithms reach the device.
 */
import { DevRequest, REQ_KIND } from '../device/index.ts';
import type { CollPt2pt } from '../coll/index.ts';
import { CTX_COLL, type Pt2ptComm } from './pt2pt-comm.ts';
import { runtime } from './runtime.ts';

function settle(r: DevRequest, resolve: (v: any) => void, reject: (e: unknown) => void, value: (r: DevRequest) => unknown): void {
  if (r.done) {
    if (r.error !== null) reject(r.error);
    else resolve(value(r));
    return;
  }
  r.onComplete = (d) => (d.error !== null ? reject(d.error) : resolve(value(d)));
}

const none = (): undefined => undefined;
const bytesOf = (r: DevRequest): Uint8Array => r.value as Uint8Array;
const countOf = (r: DevRequest): number => r.count;

export class CommCollPt2pt implements CollPt2pt {
  readonly rank: number;
  readonly size: number;
  readonly #comm: Pt2ptComm;
  readonly #me: number;

  constructor(comm: Pt2ptComm, call: string) {
    this.#comm = comm;
    this.#me = comm._me(call);
    this.rank = comm._rankOfEndpoint(this.#me);
    this.size = comm.size;
  }

  send(dest: number, tag: number, data: Uint8Array): Promise<void> {
    const c = this.#comm;
    const r = new DevRequest(REQ_KIND.SEND);
    // Rendezvous keeps a reference: the algorithms promise not to touch `data` until this resolves.
    runtime().device.send(r, this.#me, c._endpoints[dest]!, c._ctx + CTX_COLL, tag, data, false, false);
    return new Promise((resolve, reject) => settle(r, resolve, reject, none));
  }

  recv(source: number, tag: number): Promise<Uint8Array> {
    const c = this.#comm;
    const r = new DevRequest(REQ_KIND.RECV);
    r.objectMode = true; // a fresh Uint8Array of the message's length
    runtime().device.postRecv(r, this.#me, c._ctx + CTX_COLL, c._endpoints[source]!, tag);
    return new Promise((resolve, reject) => settle(r, resolve, reject, bytesOf));
  }

  recvInto(source: number, tag: number, buf: Uint8Array): Promise<number> {
    const c = this.#comm;
    const r = new DevRequest(REQ_KIND.RECV);
    r.buf = buf; // a rendezvous payload lands here directly
    runtime().device.postRecv(r, this.#me, c._ctx + CTX_COLL, c._endpoints[source]!, tag);
    return new Promise((resolve, reject) => settle(r, resolve, reject, countOf));
  }
}
