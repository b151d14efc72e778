/**
 * The matchers: where a device's receives meet the messages that arrive, behind one interface
 * (Matcher), chosen once per device by selectMatcher. Two implementations:
 *
 *   QueueMatcher  the shared per-source queues of the paper (match-queues.ts, one block per
 *                 endpoint, any thread of the process may match there) through the protocols
 *                 (protocol.ts); every device that has no receive lanes
 *   LaneMatcher   the receive lanes (lane-matcher.ts, docs/adr/0020): the one MPI
 *                 thread of a process with one endpoint, hosting every channel; a context leaves
 *                 its lane for the QueueMatcher for good when the general path touches it
 *
 * One implementation per device, so the device's calls through the interface are monomorphic.
 * Slots (request-table.ts) are NIL where a message or receive has none.
 */
import type { EagerArrived, FrameHeader } from '../transport/index.ts';
import type { MPIError } from '../util/index.ts';
import { ANY } from '../util/index.ts';
import type { DevRequest } from './dev-request.ts';
import { KIND, NIL, SLOT, SLOT_WORDS, type SlotPool } from './request-table.ts';
import type { SharedState } from './shared-state.ts';
import type { MatchQueues } from './match-queues.ts';
import { slotsExhausted, type Completion } from './completion.ts';
import type { Protocol } from './protocol.ts';
import { LaneMatcher, type LaneHost } from './lane-matcher.ts';

export interface Matcher {
  /** Receive lanes exist here: leanRecv may take receives (the send path's lean route then sees failures through this device alone). */
  readonly hasLanes: boolean;
  /** The transport's typed eager hook (TransportHandlers.onEager) where this matcher takes plain EAGER frames so, else undefined. */
  readonly onEager: EagerArrived | undefined;
  /** A checked EAGER, EAGER_SYNC or RNDV_RTS frame from another process. */
  arriveFrame(srcProcess: number, h: FrameHeader, payload: Uint8Array): void;
  /** A general receive (r.buf or r.objectMode set) on local `endpoint` for (ctx, src|ANY, tag|ANY). */
  postRecv(r: DevRequest, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void;
  /** The lean receive into `buf` (Device.recvBytes): the request, or null (having done nothing) where it must take postRecv. */
  leanRecv(ctx: number, srcEndpoint: number, tag: number, buf: Uint8Array, call: string): DevRequest | null;
  /** leanRecv whose message lands in a fresh array (r.value): the collectives' receive. */
  leanRecvBytes(ctx: number, srcEndpoint: number, tag: number, call: string): DevRequest | null;
  /** The message slot a receive would match, left in place, or NIL. */
  probe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): number;
  /** The message slot a receive would match, taken out of matching (mprobe), or NIL. */
  takeMatching(endpoint: number, ctx: number, srcEndpoint: number, tag: number): number;
  /** Cancels pending receive r if it has not matched: true, r completed as cancelled. */
  cancelRecv(r: DevRequest): boolean;
  /** The device failed: receives waiting here fail with `err`. */
  fail(err: MPIError): void;
  unexpectedQueued(): number;
  postedQueued(): number;
  /** Context `ctx`'s lane state (receive-lanes.ts LANE_STATE), or -1 where there are no lanes. */
  laneState(ctx: number): number;
}

/** What a matcher is chosen from. */
export interface MatcherLayout {
  /** this thread is the process's one MPI thread, with inline progress (DeviceOptions.lanes) */
  readonly lanes: boolean;
  readonly multithreaded: boolean;
  readonly endpointsPerProcess: number;
  readonly firstEndpoint: number;
  readonly threadId: number;
  readonly stat: Float64Array;
}

/** The one place that chooses this device's matcher (see the file's comment). */
export function selectMatcher(l: MatcherLayout, shared: SharedState, protocol: Protocol, completion: Completion, pool: SlotPool): Matcher {
  const queues = new QueueMatcher(shared, protocol, completion, pool, l.threadId, l.firstEndpoint);
  if (!l.lanes || l.multithreaded || l.endpointsPerProcess !== 1) return queues;
  return new LaneMatcher(queues, completion, shared, l.stat, l.firstEndpoint);
}

/** The shared per-source queues (match-queues.ts) through the protocols: slots, any thread may match. */
export class QueueMatcher implements Matcher, LaneHost {
  readonly hasLanes = false;
  readonly onEager = undefined;
  readonly #protocol: Protocol;
  readonly #completion: Completion;
  readonly #pool: SlotPool;
  readonly #queues: readonly MatchQueues[];
  readonly #w: Int32Array;
  readonly #capacity: number;
  readonly #me: number;
  readonly #first: number;

  constructor(shared: SharedState, protocol: Protocol, completion: Completion, pool: SlotPool, threadId: number, firstEndpoint: number) {
    this.#protocol = protocol;
    this.#completion = completion;
    this.#pool = pool;
    this.#queues = shared.queues;
    this.#w = shared.table.words;
    this.#capacity = shared.table.capacity;
    this.#me = threadId;
    this.#first = firstEndpoint;
  }

  arriveFrame(srcProcess: number, h: FrameHeader, payload: Uint8Array): void {
    this.#protocol.arrive(srcProcess, h, payload, 0);
  }

  postRecv(r: DevRequest, endpoint: number, ctx: number, srcEndpoint: number, tag: number): void {
    this.#protocol.postSlot(r, this.#completion.ownSlot(r, KIND.RECV), endpoint, ctx, srcEndpoint, tag);
  }

  leanRecv(): DevRequest | null {
    return null;
  }

  leanRecvBytes(): DevRequest | null {
    return null;
  }

  probe(endpoint: number, ctx: number, srcEndpoint: number, tag: number): number {
    return this.#queues[endpoint - this.#first]!.probe(ctx, srcEndpoint, tag);
  }

  takeMatching(endpoint: number, ctx: number, srcEndpoint: number, tag: number): number {
    return this.#queues[endpoint - this.#first]!.takeMatching(ctx, srcEndpoint, tag);
  }

  cancelRecv(r: DevRequest): boolean {
    if (r.slot === NIL) return false;
    const ep = this.#w[r.slot * SLOT_WORDS + SLOT.ENDPOINT]!;
    if (!this.#queues[ep - this.#first]!.cancelRecv(r.slot)) return false;
    r.cancelled = true;
    r.sourceEndpoint = ANY;
    r.tag = ANY;
    this.#completion.complete(r);
    return true;
  }

  fail(): void {
    // Nothing waits here but slots, which the device's failure completes (Completion.reqs).
  }

  unexpectedQueued(): number {
    let n = 0;
    for (const q of this.#queues) n += q.unexpectedCount;
    return n;
  }

  postedQueued(): number {
    let n = 0;
    for (const q of this.#queues) n += q.postedCount;
    return n;
  }

  laneState(): number {
    return -1;
  }

  /** A receive of a demoted lane (LaneHost): it holds the event loop and a slot of its own, as a general one does. */
  postDemoted(r: DevRequest, ctx: number, src: number, tag: number): void {
    this.#completion.hold();
    const slot = this.#pool.alloc(KIND.RECV);
    if (slot === NIL) {
      r.error = slotsExhausted(r.call, this.#capacity);
      this.#completion.complete(r);
      return;
    }
    this.#w[slot * SLOT_WORDS + SLOT.OWNER] = this.#me;
    this.#completion.attach(r, slot);
    this.#protocol.postSlot(r, slot, this.#first, ctx, src, tag);
  }

  /** An unexpected message of a demoted lane (LaneHost): into the shared queues, not counted again. */
  arriveDemoted(srcProcess: number, h: FrameHeader, data: Uint8Array): void {
    this.#protocol.arrive(srcProcess, h, data, 0, false);
  }
}
