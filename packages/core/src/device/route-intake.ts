/**
 * One consumer's side of ADR 0019's route switch for real frames (used by reader-routes.ts): the channel host and an endpoint's reader each run a RouteIntakes over the frames they
 * read, and it decides per frame whether it may be matched now or must wait for the other path's
 * mark (route-switch.ts Intake, one per sending thread and destination endpoint).
 *
 * The tag: a sender that takes part in routes puts its thread id and its switch epoch towards the
 * destination in the frame header's `seq` word (which the device does not otherwise use):
 * bit 31 set, thread id in bits 22..27, epoch in bits 0..21. A frame without bit 31 is from a
 * sender that never switched (or a job without readers) and is matched at once, as today.
 *
 * Copies: a frame's header and payload are valid only during the transport's call (interface.ts),
 * so a frame that has to wait is copied (header fields and payload bytes); one that may be matched
 * at once (the common case: nothing held for its sender, its epoch open) is passed on as it is.
 *
 * Waking: an intake holding frames waits for its mark word with one Atomics.waitAsync (the other
 * path's consumer runs in another thread), then matches what the word now lets through.
 */
import type { FrameHeader } from '../transport/index.ts';
import { Intake } from './route-switch.ts';
import type { RouteTable, SharedMarkWord } from './route-table.ts';

const TAGGED = 0x8000_0000;
const THREAD_SHIFT = 22;
const THREAD_MASK = 0x3f;
const EPOCH_MASK = (1 << THREAD_SHIFT) - 1;

/** The seq word of a frame sent by `thread` (0..63) in switch epoch `epoch` (0..2^22-1). */
export function routeTag(thread: number, epoch: number): number {
  return (TAGGED | (thread << THREAD_SHIFT) | (epoch & EPOCH_MASK)) >>> 0;
}
export function isRouteTagged(seq: number): boolean {
  return seq >= TAGGED;
}
export function tagThread(seq: number): number {
  return (seq >>> THREAD_SHIFT) & THREAD_MASK;
}
export function tagEpoch(seq: number): number {
  return seq & EPOCH_MASK;
}

/** What a consumer matches: the frame as the transport gave it, or a copy of one that waited. */
export type DeliverFrame = (srcProcess: number, header: FrameHeader, payload: Uint8Array) => void;

interface Frame {
  srcProcess: number;
  header: FrameHeader;
  payload: Uint8Array;
}

interface SenderIntake {
  intake: Intake<Frame>;
  word: SharedMarkWord;
  waiting: boolean;
}

export class RouteIntakes {
  readonly #table: RouteTable;
  readonly #firstEndpoint: number;
  readonly #deliver: DeliverFrame;
  /** by (srcProcess * threads + thread) * J + local endpoint */
  readonly #intakes = new Map<number, SenderIntake>();
  readonly #matchFrame = (f: Frame): void => this.#deliver(f.srcProcess, f.header, f.payload);
  readonly #onMark: ((srcProcess: number, mark: FrameHeader) => void) | null;
  readonly #markConsumed = (f: Frame): void => this.#onMark?.(f.srcProcess, f.header);

  /**
   * `firstEndpoint`: this process's first endpoint (frames are for firstEndpoint..+J-1).
   * `onMark`: told of every mark consumed, with its header (a reader counts its senders' FINs with it).
   */
  constructor(table: RouteTable, firstEndpoint: number, deliver: DeliverFrame, onMark: ((srcProcess: number, mark: FrameHeader) => void) | null = null) {
    this.#table = table;
    this.#firstEndpoint = firstEndpoint;
    this.#deliver = deliver;
    this.#onMark = onMark;
  }

  /** Frames held, over every sender (for tests and the debug log). */
  get heldCount(): number {
    let n = 0;
    for (const s of this.#intakes.values()) n += s.intake.heldCount;
    return n;
  }

  /**
   * A frame this consumer read (`isMark`: the sender's mark, which opens the epoch in its tag and
   * closes the one before on this path). Matches it through `deliver` now, or holds a copy.
   */
  offer(srcProcess: number, header: FrameHeader, payload: Uint8Array, isMark: boolean): void {
    const seq = header.seq;
    if (!isRouteTagged(seq)) {
      this.#deliver(srcProcess, header, payload);
      return;
    }
    const s = this.#senderIntake(srcProcess, tagThread(seq), header.dstEndpoint - this.#firstEndpoint);
    const epoch = tagEpoch(seq);
    const passes = s.intake.heldCount === 0 && (isMark ? epoch - 1 : epoch) <= s.word.get();
    // Intake.offer matches a passing frame before it returns and keeps no reference to it.
    const frame: Frame = passes ? { srcProcess, header, payload } : { srcProcess, header: { ...header }, payload: payload.slice() };
    s.intake.offer(frame, epoch, isMark);
    this.#waitIfHeld(s);
  }

  #senderIntake(srcProcess: number, thread: number, local: number): SenderIntake {
    const J = this.#table.layout.endpointsPerProcess;
    const key = (srcProcess * this.#table.layout.threads + thread) * J + local;
    let s = this.#intakes.get(key);
    if (s === undefined) {
      const word = this.#table.markWord(srcProcess, thread, local);
      s = { intake: new Intake<Frame>(word, this.#matchFrame, this.#markConsumed), word, waiting: false };
      this.#intakes.set(key, s);
    }
    return s;
  }

  /** One waitAsync per intake that holds frames: the other path's consumer sets the word. */
  #waitIfHeld(s: SenderIntake): void {
    if (s.waiting || s.intake.heldCount === 0) return;
    s.waiting = true;
    const seen = s.word.get();
    // The word may have moved since the intake last looked: match what it lets through first.
    s.intake.resume();
    if (s.intake.heldCount === 0) {
      s.waiting = false;
      return;
    }
    void s.word.changedAfter(seen).then(() => {
      s.waiting = false;
      s.intake.resume();
      this.#waitIfHeld(s);
    });
  }
}
