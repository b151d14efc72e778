/**
 * CollPt2pt (coll/pt2pt.ts) over an explicit list of endpoints and one context
 * id: the point-to-point view that collectives run on (a communicator's
 * collective context, api/coll-pt2pt.ts; or a group's, for createGroup).
 *
 * Role: createGroup's context-id allocation runs a barrier and BAND allreduces
 * over the members of the new group only (papers/context-id-allocation.txt,
 * section 3: "group-collective allreduce and barrier routines ... that include
 * only the processes specified by a group argument"). They travel on the
 * parent's group-collective context (parent id + CONTEXT_SUFFIX.GROUP_COLL)
 * with tags above TAG_UB (context-id-collectives.ts), so no user receive on
 * the parent, not even ANY_TAG, can match them.
 *
 * Callers: the API layer (Comm.createGroup), on the thread attached to `me`.
 * Ranks are ranks of `members`; the caller passes a member (trusted, rule 19).
 * Buffers: as CollPt2pt says (send keeps `data` until it resolves; recv
 * resolves a fresh Uint8Array). Errors: the device's rejection (e.g.
 * ERR_PROC_FAILED) passes through; a receive completed by a message of another
 * collective call (its tag's signature, util/coll-tag.ts) rejects with
 * ERR_OTHER naming both calls and both ranks (coll/signature.ts kindMismatch).
 */
import { DevRequest, REQ_KIND, type Device } from '../device/index.ts';
import { kindMismatch, sameCollective, type CollPt2pt, type ReceiveIntoTarget, type ReceiveTarget, type SendTarget } from '../coll/index.ts';
import { collSignature, type MPIError } from '../util/index.ts';
import { bytesOf, countOf, none, promiseOf } from './dev-settle.ts';

/** What a send that left by the lean route resolves: it has left the caller's buffer when sendBytes returns. */
const SENT: Promise<void> = Promise.resolve();

/**
 * The outcome of receive `r` posted with `tag` from group rank `source`, as promiseOf gives it, unless
 * the message that completed it carries another tag: on a collective context the device matches the
 * sequence bits only (util/coll-tag.ts), so a message of another collective made at the same point
 * completes the receive, and its tag's signature names that collective (issue 39). r.tag is -1 when
 * no message completed r (a failed process): that error stands. It is dev-settle.ts's promiseOf with
 * that check, written out rather than passed to it as a closure, which would cost every collective
 * receive an allocation.
 */
function received<T>(pt: GroupPt2pt, r: DevRequest, tag: number, source: number, value: (r: DevRequest) => T): Promise<T> {
  if (r.done) {
    if (r.tag !== tag && r.tag >= 0) {
      const e = pt.mismatch(r.tag, tag, source);
      if (e !== null) return Promise.reject(e);
    }
    return r.error !== null ? Promise.reject(r.error) : Promise.resolve(value(r));
  }
  return new Promise<T>((resolve, reject) => {
    r.onComplete = (d) => {
      const e = d.tag !== tag && d.tag >= 0 ? pt.mismatch(d.tag, tag, source) : null;
      if (e !== null) reject(e);
      else if (d.error !== null) reject(d.error);
      else resolve(value(d));
    };
  });
}

/** recvThen's completion: a module-level handler that reaches its target through r.owner (STYLE.md rule 12). */
function toReceiveTarget(r: DevRequest): void {
  (r.owner as ReceiveTarget).received(r.error === null ? (r.value as Uint8Array) : null, r.tag, r.error);
}

/** recvIntoThen's completion. */
function toReceiveIntoTarget(r: DevRequest): void {
  (r.owner as ReceiveIntoTarget).receivedInto(r.count, r.tag, r.error);
}

/** sendThen's completion. */
function toSendTarget(r: DevRequest): void {
  (r.owner as SendTarget).sent(r.error);
}

/** Point-to-point among `members` on context `contextId`, as the collective algorithms see it. */
export class GroupPt2pt implements CollPt2pt {
  readonly rank: number;
  readonly size: number;
  readonly #device: Device;
  readonly #members: Int32Array;
  readonly #me: number;
  readonly #contextId: number;
  readonly #call: string;
  /** a communicator's collective context: its messages go to the device's byte-view entries (sendBytes, recvBytes, recvFresh) */
  readonly #bytes: boolean;
  /** what a mismatch error calls the members (a communicator's name) */
  readonly #where: string;
  /** the root of the collective these messages serve (-1: none), for a mismatch error */
  readonly #root: number;

  /**
   * @param device the process's device
   * @param members endpoint ids in group-rank order
   * @param me the calling thread's endpoint (a member)
   * @param contextId the context every message of these collectives uses
   * @param call the API call these messages serve (e.g. 'bcast'): the device's errors name it
   * @param byteEntries the context is a communicator's collective context (docs/adr/0022-small-collectives-lean.md):
   *   its messages go to the device's byte-view entries, which choose the lean route where it
   *   applies. Only for contexts whose tags stay within 0..TAG_UB (the lanes read a tag as a signed
   *   word) and whose lanes are empty whenever the context is freed: a collective's every message
   *   to a rank is received by that rank's call before the call ends, and a nonblocking or
   *   persistent collective references its communicator until then (api/coll-object-comm.ts), so a
   *   freed communicator's collective context comes back with nothing in its lane, as its shared
   *   queues do on the general path. Other contexts (createGroup's, tags above TAG_UB) post every
   *   message as a general one.
   * @param where what a mismatch error calls the members (default 'the group')
   * @param root the root of the collective, for a mismatch error (default -1: none)
   */
  constructor(device: Device, members: Int32Array, me: number, contextId: number, call = 'progress', byteEntries = false, where = 'the group', root = -1) {
    this.#device = device;
    this.#members = members;
    this.#me = me;
    this.#contextId = contextId;
    this.#call = call;
    this.rank = members.indexOf(me);
    this.size = members.length;
    this.#bytes = byteEntries;
    this.#where = where;
    this.#root = root;
  }

  /**
   * The error of a message with tag `theirs` from group rank `source` that completed this view's
   * receive posted with tag `mine`: the two ranks made different collective calls (kind, form or
   * root: coll/signature.ts), or null when the tags name one collective (a blocking and a
   * nonblocking form of it).
   */
  mismatch(theirs: number, mine: number, source: number): MPIError | null {
    const a = collSignature(theirs);
    const b = collSignature(mine);
    return sameCollective(a, b) ? null : kindMismatch(this.#call, this.#where, this.rank, this.#root, source, b, a, this.size);
  }

  send(dest: number, tag: number, data: Uint8Array): Promise<void> {
    if (this.#bytes) {
      const b = this.#device.sendBytes(this.#me, this.#members[dest]!, this.#contextId, tag, data, 0, this.#call);
      return b === null ? SENT : promiseOf(b, none);
    }
    const r = new DevRequest(REQ_KIND.SEND, this.#call);
    this.#device.send(r, this.#me, this.#members[dest]!, this.#contextId, tag, data, false, false);
    return promiseOf(r, none);
  }

  recv(source: number, tag: number): Promise<Uint8Array> {
    let r: DevRequest;
    if (this.#bytes) r = this.#device.recvFresh(this.#me, this.#contextId, this.#members[source]!, tag, this.#call);
    else {
      r = new DevRequest(REQ_KIND.RECV, this.#call);
      r.objectMode = true; // a fresh Uint8Array of the message's length
      this.#device.postRecv(r, this.#me, this.#contextId, this.#members[source]!, tag);
    }
    return received(this, r, tag, source, bytesOf);
  }

  /**
   * recv() for a step machine (coll/pt2pt.ts recvThen): target.received gets the fresh bytes and the
   * message's tag (the machine checks the tag with mismatch()), now if the message was waiting.
   */
  recvThen(source: number, tag: number, target: ReceiveTarget): void {
    let r: DevRequest;
    if (this.#bytes) r = this.#device.recvFresh(this.#me, this.#contextId, this.#members[source]!, tag, this.#call);
    else {
      r = new DevRequest(REQ_KIND.RECV, this.#call);
      r.objectMode = true;
      this.#device.postRecv(r, this.#me, this.#contextId, this.#members[source]!, tag);
    }
    if (r.done) target.received(r.error === null ? (r.value as Uint8Array) : null, r.tag, r.error);
    else {
      r.owner = target;
      r.onComplete = toReceiveTarget;
    }
  }

  /** recvInto() for a step machine (coll/pt2pt.ts recvIntoThen): the message lands in `buf`, target.receivedInto tells its length. */
  recvIntoThen(source: number, tag: number, buf: Uint8Array, target: ReceiveIntoTarget): void {
    const r = this.#postRecvInto(source, tag, buf);
    if (r.done) target.receivedInto(r.count, r.tag, r.error);
    else {
      r.owner = target;
      r.onComplete = toReceiveIntoTarget;
    }
  }

  /** send() for a step machine (coll/pt2pt.ts sendThen): target.sent, now when the message left by the lean route. */
  sendThen(dest: number, tag: number, data: Uint8Array, target: SendTarget): void {
    let r: DevRequest | null;
    if (this.#bytes) r = this.#device.sendBytes(this.#me, this.#members[dest]!, this.#contextId, tag, data, 0, this.#call);
    else {
      r = new DevRequest(REQ_KIND.SEND, this.#call);
      this.#device.send(r, this.#me, this.#members[dest]!, this.#contextId, tag, data, false, false);
    }
    if (r === null || r.done) target.sent(r === null ? null : r.error);
    else {
      r.owner = target;
      r.onComplete = toSendTarget;
    }
  }

  /** Receives into `buf` (a rendezvous payload lands there directly); resolves the byte count. */
  recvInto(source: number, tag: number, buf: Uint8Array): Promise<number> {
    return received(this, this.#postRecvInto(source, tag, buf), tag, source, countOf);
  }

  /** A receive of `source`'s message into `buf` (a rendezvous payload lands there directly), posted. */
  #postRecvInto(source: number, tag: number, buf: Uint8Array): DevRequest {
    if (this.#bytes) return this.#device.recvBytes(this.#me, this.#contextId, this.#members[source]!, tag, buf, 0, this.#call);
    const r = new DevRequest(REQ_KIND.RECV, this.#call);
    r.buf = buf;
    this.#device.postRecv(r, this.#me, this.#contextId, this.#members[source]!, tag);
    return r;
  }
}
