/**
 * Receive lanes: the lean path's matching state for one single-threaded process
 * (docs/adr/0020-lean-common-path.md, step 1).
 *
 * Every context id is in one of three states. UNDECIDED until the first thing
 * touches it; the first touch decides: a lean receive or a plain EAGER arrival
 * from another process makes it LEAN, anything that would put an entry for a
 * remote source into the shared queues (match-queues.ts) makes it GENERAL. A
 * LEAN context's receives and arrivals match here, in its lane: a posted FIFO
 * of receives (each for one remote source, any tag or one) and an unexpected
 * FIFO of messages, in arrival order. When something that the lane cannot
 * serve touches a LEAN context (demote), it becomes GENERAL for good and the
 * device moves the lane into the shared queues: posted receives first in
 * posting order, then the unexpected messages in arrival order. Nothing in a
 * lane can match anything else in it (an unexpected message matched none of
 * the receives posted before it arrived, and a receive took the first match at
 * its posting), so the move keeps MPI's order per (source, context).
 *
 * Pure data: the device (device.ts) fills and completes the requests. No locks:
 * lanes exist only where no other thread can match (the device decides).
 */
import { ANY, tagMatchMask } from '../util/index.ts';
import type { DevRequest } from './dev-request.ts';

/** Context ids fit 16 bits in a frame header. */
const CONTEXT_IDS = 1 << 16;

export const LANE_STATE = { UNDECIDED: 0, LEAN: 1, GENERAL: 2 } as const;

/** An unexpected message waiting in a lane: its bytes are a private copy. */
export interface LaneMessage {
  readonly src: number;
  readonly tag: number;
  readonly srcProcess: number;
  readonly data: Uint8Array;
}

/** A lean receive posted in a lane: the request, and its pattern (a remote source; a tag or ANY). */
export interface LaneReceive {
  readonly r: DevRequest;
  readonly src: number;
  readonly tag: number;
}

/**
 * An empty array that V8 already stores as an array of objects. A `[]` starts as an array of small
 * integers and changes its map at its first push of an object; code that TurboFan compiled after
 * another lane's array had changed (the map it saw) threw itself away at this lane's first push:
 * the arrival path (the transport's bytes hook, which inlines #laneMessage) at the first unexpected
 * message in the neighbour-rate kernel, in one rank of every run, at about iteration 2,500
 * (docs/adr/0020-lean-common-path.md section 8).
 */
function objectArray<T extends object>(): T[] {
  const a: (T | null)[] = [null];
  a.length = 0;
  return a as T[];
}

/** One LEAN context's posted receives and unexpected messages, oldest first. */
export class Lane {
  readonly posted: LaneReceive[] = objectArray<LaneReceive>();
  readonly unexpected: LaneMessage[] = objectArray<LaneMessage>();
  /** The tag bits matching compares in this lane's context (util/coll-tag.ts: a collective context's sequence bits). */
  readonly tagMask: number;

  constructor(ctx: number) {
    this.tagMask = tagMatchMask(ctx);
  }

  /** The oldest posted receive that a message (src, tag) matches, removed; or null. */
  takePosted(src: number, tag: number): DevRequest | null {
    const p = this.posted;
    for (let i = 0; i < p.length; i++) {
      const e = p[i]!;
      if (e.src === src && (((e.tag ^ tag) & this.tagMask) === 0 || e.tag === ANY)) {
        if (i === 0) p.shift();
        else p.splice(i, 1);
        return e.r;
      }
    }
    return null;
  }

  /** The oldest unexpected message that a receive (src, tag or ANY) matches, removed; or null. */
  takeUnexpected(src: number, tag: number): LaneMessage | null {
    const u = this.unexpected;
    for (let i = 0; i < u.length; i++) {
      const m = u[i]!;
      if (m.src === src && (tag === ANY || ((m.tag ^ tag) & this.tagMask) === 0)) {
        if (i === 0) u.shift();
        else u.splice(i, 1);
        return m;
      }
    }
    return null;
  }

  /** Removes posted receive r (cancel); false if it is not posted here. */
  unlink(r: DevRequest): boolean {
    const p = this.posted;
    for (let i = 0; i < p.length; i++) {
      if (p[i]!.r === r) {
        p.splice(i, 1);
        return true;
      }
    }
    return false;
  }
}

/** Every context's state and the lanes of the LEAN ones. */
export class ReceiveLanes {
  readonly #state = new Uint8Array(CONTEXT_IDS);
  /**
   * The lane of each LEAN context (undefined for the others): the device reads it directly on the
   * path of every message, and calls lean() only when it finds none. Only this class writes it.
   */
  readonly byContext: (Lane | undefined)[] = [];
  /** the lanes in the order their contexts became LEAN (failures and counts walk them) */
  readonly #all: Lane[] = [];

  /** The lane of `ctx`, making an UNDECIDED context LEAN; null when the context is GENERAL. */
  lean(ctx: number): Lane | null {
    const s = this.#state[ctx]!;
    if (s === LANE_STATE.LEAN) return this.byContext[ctx]!;
    if (s === LANE_STATE.GENERAL) return null;
    this.#state[ctx] = LANE_STATE.LEAN;
    const lane = new Lane(ctx);
    this.byContext[ctx] = lane;
    this.#all.push(lane);
    return lane;
  }

  /**
   * Makes `ctx` GENERAL for good. Returns its lane when it was LEAN (the caller moves the lane's
   * contents into the shared queues, in order), else null.
   */
  general(ctx: number): Lane | null {
    const s = this.#state[ctx]!;
    this.#state[ctx] = LANE_STATE.GENERAL;
    if (s !== LANE_STATE.LEAN) return null;
    const lane = this.byContext[ctx]!;
    this.byContext[ctx] = undefined;
    this.#all.splice(this.#all.indexOf(lane), 1);
    return lane;
  }

  state(ctx: number): number {
    return this.#state[ctx]!;
  }

  /** The lane a posted receive of context `ctx` waits in (cancel), or null. */
  laneOf(ctx: number): Lane | null {
    return this.#state[ctx] === LANE_STATE.LEAN ? this.byContext[ctx]! : null;
  }

  /** Every LEAN context's lane. */
  lanes(): readonly Lane[] {
    return this.#all;
  }
}
