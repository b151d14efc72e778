/**
 * The relay cell: how the outcome of a request made in one thread reaches
 * another thread that waits on it (issue 3, docs/adr/0003). api/request-relay.ts
 * wraps it in the Request API: relayOut fills a cell from a Request, and a
 * RelayedRequest is a Request completed from a cell.
 *
 * The operation stays where it was started: its receive buffer and its
 * completion callback belong to that thread's event loop. What crosses is
 * the cell, a small growable SharedArrayBuffer:
 *
 *   words  STATE (PENDING | DONE), CANCEL (OPEN | REQUESTED | CLOSED),
 *          SOURCE, TAG, COUNT, ERROR, CANCELLED, VALUE_BYTES
 *   bytes  from VALUE_AT: msgpack of { value } or { message }
 *
 * The origin fills the cell once, when its request completes, and notifies
 * STATE; then it sets CANCEL to CLOSED, which ends its cancel watch. A thread
 * that waits on the cell asks for a cancel by moving CANCEL from OPEN to
 * REQUESTED; the origin's watch cancels its request if it has not completed.
 */
import { ERR_OTHER, decodeObject, encodeObject, waitAsync } from '../util/index.ts';

const W = { STATE: 0, CANCEL: 1, SOURCE: 2, TAG: 3, COUNT: 4, ERROR: 5, CANCELLED: 6, VALUE_BYTES: 7 } as const;
const WORDS = 8;
const VALUE_AT = WORDS * 4;
const PENDING = 0;
const DONE = 1;
const OPEN = 0;
const REQUESTED = 1;
const CLOSED = 2;

/** Address space reserved per cell for the value; only the bytes a value needs are committed. */
const MAX_CELL_BYTES = 2 ** 30;

/** A completed request's status as the cell carries it (source already a rank of the request's communicator). */
export interface RelayStatus {
  readonly source: number;
  readonly tag: number;
  readonly count: number;
  /** an error class; SUCCESS when the request succeeded */
  readonly error: number;
  readonly cancelled: boolean;
}

/** What the cell's bytes carry: the (dehydrated) value, or the text of the origin's error. */
export interface RelayContent {
  readonly value?: unknown;
  readonly message?: string;
}

/** One thread's view of a relay cell. */
export class RelayCell {
  readonly buffer: SharedArrayBuffer;
  readonly #words: Int32Array;

  /** A new, pending cell (origin side). */
  static create(): RelayCell {
    // A growable SharedArrayBuffer (ES2024, in Node 20): the value's size is known only at completion.
    const Growable = SharedArrayBuffer as unknown as new (bytes: number, options: { maxByteLength: number }) => SharedArrayBuffer;
    return new RelayCell(new Growable(VALUE_AT, { maxByteLength: MAX_CELL_BYTES }));
  }

  /** @param buffer a cell that RelayCell.create made, in this thread or another */
  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.#words = new Int32Array(buffer, 0, WORDS);
  }

  /**
   * Origin: fills the cell once its request has completed, and wakes the threads that wait on it.
   * @param content gives what the bytes carry; if it throws, the cell carries ERR_OTHER and why
   */
  fill(status: RelayStatus, content: () => RelayContent): void {
    const words = this.#words;
    words[W.SOURCE] = status.source;
    words[W.TAG] = status.tag;
    words[W.COUNT] = status.count;
    words[W.ERROR] = status.error;
    words[W.CANCELLED] = status.cancelled ? 1 : 0;
    let payload: Uint8Array;
    try {
      payload = encodeObject(content(), 'relay');
    } catch (e) {
      words[W.ERROR] = ERR_OTHER;
      payload = encodeObject({ message: `the value could not be relayed to another thread: ${String(e)}` }, 'relay');
    }
    (this.buffer as unknown as { grow(bytes: number): void }).grow(VALUE_AT + payload.length);
    new Uint8Array(this.buffer, VALUE_AT, payload.length).set(payload);
    words[W.VALUE_BYTES] = payload.length;
    Atomics.store(words, W.STATE, DONE);
    Atomics.notify(words, W.STATE);
    // Ends the origin's cancel watch: a later cancel() elsewhere finds CLOSED and does nothing.
    Atomics.store(words, W.CANCEL, CLOSED);
    Atomics.notify(words, W.CANCEL);
  }

  /** Origin: calls `cancel` when another thread asks for a cancel before the cell is filled. */
  watchCancel(cancel: () => void): void {
    const words = this.#words;
    void waitAsync(words, W.CANCEL, OPEN)?.then(() => {
      if (Atomics.load(words, W.CANCEL) === REQUESTED) cancel();
    });
  }

  /** Another thread: asks the origin to cancel (nothing once the cell is filled). */
  requestCancel(): void {
    if (Atomics.compareExchange(this.#words, W.CANCEL, OPEN, REQUESTED) === OPEN) Atomics.notify(this.#words, W.CANCEL);
  }

  /** Whether the origin has filled the cell. */
  get isDone(): boolean {
    return Atomics.load(this.#words, W.STATE) === DONE;
  }

  /** Resolves once the cell is filled; null if it was filled already. */
  whenDone(): Promise<unknown> | null {
    return waitAsync(this.#words, W.STATE, PENDING);
  }

  /** The status the origin wrote (call once isDone). */
  status(): RelayStatus {
    const w = this.#words;
    return { source: w[W.SOURCE]!, tag: w[W.TAG]!, count: w[W.COUNT]!, error: w[W.ERROR]!, cancelled: w[W.CANCELLED] === 1 };
  }

  /** What the bytes carry, decoded (call once isDone). */
  content(): RelayContent {
    return decodeObject(new Uint8Array(this.buffer, VALUE_AT, this.#words[W.VALUE_BYTES]!).slice(), 'wait') as RelayContent;
  }
}
