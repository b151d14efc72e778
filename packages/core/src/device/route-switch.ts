/**
 * The ordering core of an endpoint route switch (docs/adr/0019; used through
 * route-sender.ts and route-intake.ts by reader-routes.ts): how a sending thread moves its frames to one
 * remote endpoint from one path to another (the channel host's connection,
 * the endpoint reader's own) without a frame overtaking an earlier one.
 *
 * Sender (SenderRoute): at a switch it sends a MARK of the new epoch k as the
 * last item on the old path, then every frame on the new path tagged k. It
 * never waits and never holds a frame.
 *
 * Consumers (Intake, one per path and sender): an item of epoch e may be
 * matched only once the mark that opened epoch e was consumed on the other
 * path (e = 0: the first path, always). Until then it waits in the intake's
 * queue, in arrival order, and so does everything behind it. Consuming a
 * mark of epoch m publishes m (in the real device a shared word per sender;
 * here a MarkWord) and lets the other path's intake resume. Marks are
 * consumed in epoch order, since a mark is itself an item of the epoch it
 * closes.
 *
 * Why not an acknowledged marker (keep the old path until the mark is
 * acknowledged, then move): the acknowledgement vouches only for the frames
 * before the mark; frames sent on the old path after it can still be unread
 * when the first frame on the new path is matched (route-switch.test.ts
 * shows a schedule where that overtakes). Pure logic: no threads, no I/O.
 */

/** The highest epoch whose opening mark has been consumed, for one sender (a shared Int32 word in the device). */
export interface MarkWord {
  get(): number;
  set(epoch: number): void;
}

/** What the sender does for its next frame: send a mark of `epoch` on `markPath` first when `mark` is true. */
export interface RouteStep {
  path: number;
  epoch: number;
  mark: boolean;
  markPath: number;
}

/** One sending thread's route to one remote endpoint. */
export class SenderRoute {
  #path: number;
  #epoch = 0;
  readonly #step: RouteStep = { path: 0, epoch: 0, mark: false, markPath: 0 };

  /** `initialEpoch`: where a previous route of the same sender id stopped (route-table.ts senderEpoch: ids are recycled). */
  constructor(initialPath: number, initialEpoch = 0) {
    this.#path = initialPath;
    this.#epoch = initialEpoch;
  }

  /** The epoch of the frames sent last (to keep for the next route of this sender id). */
  get epoch(): number {
    return this.#epoch;
  }

  /** The step for the next frame when the route offers `path` (a reused object: read it before the next call). */
  next(path: number): RouteStep {
    const s = this.#step;
    s.mark = path !== this.#path;
    if (s.mark) {
      s.markPath = this.#path;
      this.#path = path;
      this.#epoch++;
    }
    s.path = this.#path;
    s.epoch = this.#epoch;
    return s;
  }
}

/** One path's consumer of one sender's items: matches what it may, holds the rest in order. */
export class Intake<T> {
  readonly #word: MarkWord;
  readonly #deliver: (item: T) => void;
  readonly #onMark: ((item: T) => void) | null;
  readonly #held: { item: T; epoch: number; isMark: boolean }[] = [];

  /** `deliver` matches a frame (never called for marks); `onMark` is told of each mark consumed. */
  constructor(word: MarkWord, deliver: (item: T) => void, onMark: ((item: T) => void) | null = null) {
    this.#word = word;
    this.#deliver = deliver;
    this.#onMark = onMark;
  }

  /** Items waiting for a mark of the other path. */
  get heldCount(): number {
    return this.#held.length;
  }

  /**
   * An item read from this path: a frame of `epoch`, or the mark opening `epoch` (which closes
   * epoch - 1 on this path). Returns whether a mark was consumed (the other path's intake should resume).
   */
  offer(item: T, epoch: number, isMark: boolean): boolean {
    this.#held.push({ item, epoch: isMark ? epoch - 1 : epoch, isMark });
    return this.resume();
  }

  /** Matches held items whose epoch is open, in order; returns whether a mark was consumed. */
  resume(): boolean {
    let consumedMark = false;
    const held = this.#held;
    let i = 0;
    while (i < held.length && held[i]!.epoch <= this.#word.get()) {
      const h = held[i++]!;
      if (h.isMark) {
        this.#word.set(h.epoch + 1);
        consumedMark = true;
        this.#onMark?.(h.item);
      } else {
        this.#deliver(h.item);
      }
    }
    held.splice(0, i);
    return consumedMark;
  }
}
