/**
 * The receive lanes' matcher (docs/adr/0020-lean-common-path.md sections 3-5): the
 * lean path's receive side. In a process whose only MPI thread is the main thread (threadLevel
 * single or funneled, inline progress, one endpoint) a receive into a plain byte view from another
 * process, and a plain EAGER arrival, match in the context's lane (receive-lanes.ts) with no
 * request slot and no shared queue; the transport hands such frames over as numbers (eagerArrived).
 *
 * Invariants: a context is LEAN until anything of the general path touches it (ANY_SOURCE, a probe,
 * a synchronous, rendezvous or object-form message: generalTouch), then GENERAL for good, its lane
 * moved into the shared queues in order (posted receives in posting order, then unexpected messages
 * in arrival order: demote); a lane holds the event loop once while it has posted receives. As the
 * device's Matcher (matcher.ts) it asks the lanes first and hands everything else, and every
 * demoted context, to the other matcher, the shared per-source queues (QueueMatcher, `general`).
 */
import { FRAME_KIND, newFrameHeader, type EagerArrived, type FrameHeader } from '../transport/index.ts';
import { ANY, type MPIError } from '../util/index.ts';
import { DevRequest, REQ_KIND } from './dev-request.ts';
import { NIL } from './request-table.ts';
import { COMM_STAT, STAT, type SharedState } from './shared-state.ts';
import { ReceiveLanes, type Lane } from './receive-lanes.ts';
import { truncated, type Completion } from './completion.ts';
import type { Matcher } from './matcher.ts';

/** What the lanes ask of the shared queues' matcher (QueueMatcher, matcher.ts) when a context leaves the lean path. */
export interface LaneHost {
  /** A receive of a demoted lane: posted in the shared queues with a slot of its own (or failed: no slot left). */
  postDemoted(r: DevRequest, ctx: number, src: number, tag: number): void;
  /** An unexpected message of a demoted lane (`h` a header of its own): arrives in the shared queues, not counted again. */
  arriveDemoted(srcProcess: number, h: FrameHeader, data: Uint8Array): void;
}

export class LaneMatcher implements Matcher {
  readonly hasLanes = true;
  readonly #lanes = new ReceiveLanes();
  /** the shared queues' matcher: demoted contexts and everything the lanes do not take */
  readonly #host: LaneHost & Matcher;
  readonly #completion: Completion;
  readonly #shared: SharedState;
  readonly #stat: Float64Array;
  /** the process's one endpoint (lanes exist only with one endpoint per process) */
  readonly #endpoint: number;
  /**
   * This device has failed (#fatal): lean receives take the general path, which completes them
   * with the failure. A process with lanes has one MPI thread and no engines, so only this
   * device's failure marks the process failed.
   */
  #failed = false;

  constructor(host: LaneHost & Matcher, completion: Completion, shared: SharedState, stat: Float64Array, endpoint: number) {
    this.#host = host;
    this.#completion = completion;
    this.#shared = shared;
    this.#stat = stat;
    this.#endpoint = endpoint;
  }

  // --- the device's Matcher (matcher.ts): the lanes first, then the shared queues ---------

  /** The transport hands plain EAGER frames to the lanes as numbers (eagerArrived). */
  get onEager(): EagerArrived {
    return this.eagerArrived;
  }

  arriveFrame(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    if (!this.arrive(srcProcess, h, payload)) this.#host.arriveFrame(srcProcess, h, payload);
  }

  postRecv(r: DevRequest, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void {
    this.generalTouch(ctx, srcEndpoint);
    this.#host.postRecv(r, endpoint, ctx, srcEndpoint, tag);
  }

  probe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): number {
    this.generalTouch(ctx, srcEndpoint);
    return this.#host.probe(endpoint, ctx, srcEndpoint, tag);
  }

  takeMatching(endpoint: number, ctx: number, srcEndpoint: number, tag: number): number {
    this.generalTouch(ctx, srcEndpoint);
    return this.#host.takeMatching(endpoint, ctx, srcEndpoint, tag);
  }

  cancelRecv(r: DevRequest): boolean {
    // A pending receive without a slot is a lean one: it waits in a lane.
    return r.slot === NIL ? this.cancel(r) : this.#host.cancelRecv(r);
  }

  unexpectedQueued(): number {
    return this.#host.unexpectedQueued() + this.unexpectedCount();
  }

  postedQueued(): number {
    return this.#host.postedQueued() + this.postedCount();
  }

  laneState(ctx: number): number {
    return this.#lanes.state(ctx);
  }

  // --- the lanes ------------------------------------------------------------------------

  /**
   * The lean receive: a receive into the plain byte view `buf` from `srcEndpoint`, an endpoint of
   * another process, on context `ctx`, matched in the context's lane with no request slot and no
   * shared queue. Returns the request, already complete when a waiting message matched, or null,
   * having done nothing, when this receive must take the general path (a GENERAL context, a local
   * source, a failed process).
   */
  leanRecv(ctx: number, srcEndpoint: number, tag: number, buf: Uint8Array, call: string): DevRequest | null {
    const lanes = this.#lanes;
    if (this.#failed || srcEndpoint === this.#endpoint) return null;
    const lane = lanes.byContext[ctx] ?? lanes.lean(ctx);
    if (lane === null) return null;
    const r = new DevRequest(REQ_KIND.RECV, call);
    r.buf = buf;
    const m = lane.unexpected.length === 0 ? null : lane.takeUnexpected(srcEndpoint, tag);
    if (m !== null) {
      r.sourceEndpoint = m.src;
      r.tag = m.tag;
      this.#fill(r, m.data);
      return r;
    }
    // The lane, not each receive, holds the event loop while it has posted receives (step 3).
    if (lane.posted.length === 0) this.#completion.hold();
    lane.posted.push({ r, src: srcEndpoint, tag });
    return r;
  }

  /**
   * leanRecv for a receive of the collectives (coll/pt2pt.ts recv(), docs/adr/0022): the message lands
   * in a fresh Uint8Array of its length (r.value), as the general path does for r.objectMode with
   * a message that is not object-form. Null, having done nothing, where leanRecv would be null.
   */
  leanRecvBytes(ctx: number, srcEndpoint: number, tag: number, call: string): DevRequest | null {
    const lanes = this.#lanes;
    if (this.#failed || srcEndpoint === this.#endpoint || this.#shared.failedClass() !== 0) return null;
    const lane = lanes.lean(ctx);
    if (lane === null) return null;
    const r = new DevRequest(REQ_KIND.RECV, call);
    // Demoted into the shared queues, it is an object-mode receive there (QueueMatcher.postDemoted, Completion.fill).
    r.objectMode = true;
    const m = lane.takeUnexpected(srcEndpoint, tag);
    if (m !== null) {
      r.sourceEndpoint = m.src;
      r.tag = m.tag;
      // The lane's copy is private already (#message): it becomes the result as it is.
      r.value = m.data;
      r.count = m.data.length;
      done(r);
      return r;
    }
    if (lane.posted.length === 0) this.#completion.hold();
    lane.posted.push({ r, src: srcEndpoint, tag });
    return r;
  }

  /**
   * A frame from another process, decoded: a plain EAGER one for a context that is or becomes LEAN
   * is matched in its lane, or kept there (a private copy) as unexpected, and true. Any other frame:
   * its context becomes GENERAL (generalTouch) and false: the caller takes the general path.
   */
  arrive(srcProcess: number, h: FrameHeader, payload: Uint8Array): boolean {
    if (h.kind === FRAME_KIND.EAGER && h.flags === 0) {
      const lanes = this.#lanes;
      const lane = lanes.byContext[h.contextId] ?? lanes.lean(h.contextId);
      if (lane !== null) {
        this.#message(lane, srcProcess, h.contextId, h.srcEndpoint, h.tag, payload);
        return true;
      }
    }
    this.generalTouch(h.contextId, h.srcEndpoint);
    return false;
  }

  /**
   * The transport's onEager (interface.ts EagerArrived): arrive for a plain EAGER frame whose header
   * the transport read into numbers, its payload `bytes[start, end)`, with no header object. False,
   * having done nothing, for a frame for a context that is GENERAL (the transport then decodes it
   * and calls onDeliver) or whose endpoints a peer could not send (onDeliver's check reports it).
   * (An engine's onFrame hook, engine-poll.ts, never meets lanes: engines run only in
   * multithreaded processes, lanes only in single-threaded ones.)
   */
  readonly eagerArrived = (srcProcess: number, ctx: number, src: number, dst: number, tag: number, bytes: Uint8Array, start: number, end: number): boolean => {
    // Lanes have one endpoint per process: any other source or destination is a peer's fault.
    if (src !== srcProcess || dst !== this.#endpoint) return false;
    const lanes = this.#lanes;
    const lane = lanes.byContext[ctx] ?? lanes.lean(ctx);
    if (lane === null) return false;
    this.#message(lane, srcProcess, ctx, src, tag, bytes.subarray(start, end));
    return true;
  };

  /**
   * Something of the general path touches context `ctx` from source `srcEndpoint` (ANY, or an
   * endpoint): unless the source is local (lanes never hold those), the context becomes GENERAL,
   * and a lane it had moves into the shared queues (demotion, receive-lanes.ts).
   */
  generalTouch(ctx: number, srcEndpoint: number): void {
    if (srcEndpoint === this.#endpoint) return;
    const lane = this.#lanes.general(ctx);
    if (lane !== null) this.#demote(ctx, lane);
  }

  /** Cancels lean receive r (it has no slot): true when it waited in a lane, completed as cancelled. */
  cancel(r: DevRequest): boolean {
    const lane = this.#lanes.lanes().find((l) => l.unlink(r));
    if (lane === undefined) return false;
    if (lane.posted.length === 0) this.#completion.release();
    r.cancelled = true;
    r.sourceEndpoint = ANY;
    r.tag = ANY;
    done(r);
    return true;
  }

  /** Fails every lean receive waiting in a lane (the device failed); later ones take the general path. */
  fail(err: MPIError): void {
    this.#failed = true;
    for (const lane of this.#lanes.lanes()) {
      const posted = lane.posted.splice(0);
      if (posted.length > 0) this.#completion.release();
      for (const p of posted) {
        p.r.error = err;
        done(p.r);
      }
    }
  }

  /** Context `ctx`'s lane state (receive-lanes.ts LANE_STATE). */
  state(ctx: number): number {
    return this.#lanes.state(ctx);
  }

  unexpectedCount(): number {
    let n = 0;
    for (const lane of this.#lanes.lanes()) n += lane.unexpected.length;
    return n;
  }

  postedCount(): number {
    let n = 0;
    for (const lane of this.#lanes.lanes()) n += lane.posted.length;
    return n;
  }

  /** A plain EAGER message (ctx, src, tag, payload) from process srcProcess in LEAN `lane`: counted, then matched or kept as unexpected. */
  #message(lane: Lane, srcProcess: number, ctx: number, src: number, tag: number, payload: Uint8Array): void {
    const st = this.#stat;
    st[STAT.RECEIVED]!++;
    st[STAT.BYTES_RECEIVED]! += payload.length;
    const c = STAT.WORDS + (ctx >>> 2) * COMM_STAT.WORDS;
    st[c + COMM_STAT.RECEIVED]!++;
    st[c + COMM_STAT.BYTES_RECEIVED]! += payload.length;
    // The common case inline: the oldest posted receive matches (Lane.takePosted's rule); else the lane searches.
    const posted = lane.posted;
    const head = posted[0];
    let r: DevRequest | null;
    if (head !== undefined && head.src === src && (((head.tag ^ tag) & lane.tagMask) === 0 || head.tag === ANY)) {
      posted.shift();
      r = head.r;
    } else {
      r = posted.length === 0 ? null : lane.takePosted(src, tag);
    }
    if (r === null) {
      lane.unexpected.push({ src, tag, srcProcess, data: payload.slice() });
      return;
    }
    if (posted.length === 0) this.#completion.release();
    r.sourceEndpoint = src;
    r.tag = tag;
    this.#fill(r, payload);
  }

  /**
   * Completes lean receive r with message bytes `data`: Completion.fill for a request that has no
   * slot, no lifetime reference, no finish step and no event-loop hold of its own (its lane holds
   * the loop while it has posted receives).
   */
  #fill(r: DevRequest, data: Uint8Array): void {
    const n = data.length;
    r.count = n;
    const buf = r.buf;
    if (buf === null) {
      // leanRecvBytes: a fresh array (`data` may lie in the transport's read buffer).
      r.value = data.slice();
    } else if (n > buf.length) {
      buf.set(data.subarray(0, buf.length));
      r.count = buf.length;
      r.error = truncated(r, n, buf.length);
    } else if (n > 0) {
      buf.set(data);
    }
    // done() inline (one call less per message).
    r.done = true;
    const cb = r.onComplete;
    if (cb !== null) {
      r.onComplete = null;
      cb(r);
    }
  }

  /** Moves a lane into the shared queues: posted receives in posting order, then unexpected messages in arrival order. */
  #demote(ctx: number, lane: Lane): void {
    // Each moved receive holds the event loop as a general one does (completion releases it); the lane's hold goes.
    const laneHeld = lane.posted.length > 0;
    for (const p of lane.posted) this.#host.postDemoted(p.r, ctx, p.src, p.tag);
    lane.posted.length = 0;
    if (laneHeld) this.#completion.release();
    // A header of its own: the caller may be in the middle of using the device's or a transport's header.
    const h = newFrameHeader();
    for (const m of lane.unexpected) {
      h.kind = FRAME_KIND.EAGER;
      h.flags = 0;
      h.contextId = ctx;
      h.srcEndpoint = m.src;
      h.dstEndpoint = this.#endpoint;
      h.tag = m.tag;
      h.seq = 0;
      h.aux = 0;
      h.aux2 = 0;
      h.payloadLength = m.data.length;
      this.#host.arriveDemoted(m.srcProcess, h, m.data);
    }
    lane.unexpected.length = 0;
  }
}

/** Completes lean receive r (Completion.complete without what a lean receive does not have). */
function done(r: DevRequest): void {
  r.done = true;
  const cb = r.onComplete;
  if (cb !== null) {
    r.onComplete = null;
    cb(r);
  }
}
