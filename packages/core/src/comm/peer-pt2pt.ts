/**
 * CollPt2pt (coll/pt2pt.ts) where sends and receives use different contexts:
 * the point-to-point view of an intercommunicator's traffic.
 *
 * Role: an intercommunicator (api/intercomm.ts) has two context ids: the one
 * its local group allocated (every message to this group arrives on it) and
 * the one the remote group allocated (every message this group sends goes out
 * on it), as MPICH's recvcontext_id and context_id. A PeerPt2pt addresses a
 * list of peer endpoints, each with the context its messages are sent on, and
 * receives on one context:
 * ```
 *   view          peers            send context (per peer)      receive context
 *   inter         remote group     remote id + suffix           local id + suffix
 *   merged        both groups      own group's id or remote's   local id + suffix
 *   bootstrap     remote leader    peer comm's id + suffix 3    the same
 * ```
 * Local and remote groups are disjoint, so a message from a local peer and
 * one from a remote peer on the same receive context never match each other's
 * receives (matching is per source endpoint).
 *
 * Callers: api/intercomm.ts, on the thread attached to `me`. `rank` is the
 * caller's rank as the algorithms should see it (its local rank for the inter
 * view, its merged rank for the merged one), given by the caller (trusted,
 * STYLE.md rule 19). Buffers and errors: as CollPt2pt says.
 */
import { DevRequest, REQ_KIND, type Device } from '../device/index.ts';
import type { CollPt2pt } from '../coll/index.ts';
import { bytesOf, countOf, none, promiseOf } from './dev-settle.ts';

/** Point-to-point with `peers`, sending on a per-peer context and receiving on one. */
export class PeerPt2pt implements CollPt2pt {
  readonly rank: number;
  readonly size: number;
  readonly #device: Device;
  readonly #peers: Int32Array;
  readonly #sendContexts: Int32Array;
  readonly #recvContext: number;
  readonly #me: number;
  readonly #call: string;

  /**
   * @param peers endpoint ids, index = the rank the algorithms address
   * @param sendContexts the context of messages to each peer (same length as peers)
   * @param recvContext the context every message to this caller arrives on
   * @param rank the caller's rank in the algorithms' numbering
   * @param call the API call these messages serve: the device's errors name it
   */
  constructor(device: Device, me: number, rank: number, peers: Int32Array, sendContexts: Int32Array, recvContext: number, call: string) {
    this.#device = device;
    this.#me = me;
    this.rank = rank;
    this.size = peers.length;
    this.#peers = peers;
    this.#sendContexts = sendContexts;
    this.#recvContext = recvContext;
    this.#call = call;
  }

  send(dest: number, tag: number, data: Uint8Array): Promise<void> {
    const r = new DevRequest(REQ_KIND.SEND, this.#call);
    this.#device.send(r, this.#me, this.#peers[dest]!, this.#sendContexts[dest]!, tag, data, false, false);
    return promiseOf(r, none);
  }

  recv(source: number, tag: number): Promise<Uint8Array> {
    const r = new DevRequest(REQ_KIND.RECV, this.#call);
    r.objectMode = true; // a fresh Uint8Array of the message's length
    this.#device.postRecv(r, this.#me, this.#recvContext, this.#peers[source]!, tag);
    return promiseOf(r, bytesOf);
  }

  recvInto(source: number, tag: number, buf: Uint8Array): Promise<number> {
    const r = new DevRequest(REQ_KIND.RECV, this.#call);
    r.buf = buf;
    this.#device.postRecv(r, this.#me, this.#recvContext, this.#peers[source]!, tag);
    return promiseOf(r, countOf);
  }
}
