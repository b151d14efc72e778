/**
 * Where the bytes of an unexpected eager message wait for their receive. In a multithreaded
 * process any thread may match a queued message, so its bytes go to shared memory before it is
 * queued: the payload pool first, then the big arena (FLAG.BIG in the message slot); the slot's
 * PAYLOAD word holds the offset. A single-threaded process keeps a private copy on its heap, by
 * message slot (PAYLOAD NIL), and only once the message is queued (Protocol.arrive: a message
 * whose receive was posted is delivered from the frame and never kept): no other thread can take
 * it, and the copy is decoded as it is, where shared bytes are copied again for msgpackr.
 *
 * Callers: the device, on the thread that queues the message (keep) and on the thread that
 * receives it (bytesOf, drop).
 */
import type { PayloadPool } from '../shm/index.ts';
import { FLAG, NIL, SLOT, SLOT_WORDS } from './request-table.ts';
import type { SharedState } from './shared-state.ts';

export class UnexpectedPayloads {
  readonly #w: Int32Array;
  readonly #payloads: PayloadPool;
  readonly #big: PayloadPool | null;
  /** a single-threaded process's private copies, by message slot; null in a multithreaded one */
  readonly #private: (Uint8Array | undefined)[] | null;

  constructor(shared: SharedState) {
    this.#w = shared.table.words;
    this.#payloads = shared.payloads;
    this.#big = shared.big;
    this.#private = shared.layout.multithreaded ? null : [];
  }

  /** Whether keep() must run before the message is queued (another thread may take it from the queue). */
  get keepsBeforeQueue(): boolean {
    return this.#private === null;
  }

  /**
   * Stores `payload` (length > 0) for message slot `msg`; false when no shared memory is left for
   * it (multithreaded only: the caller fails the job; the slot's PAYLOAD word is then left as it was).
   */
  keep(msg: number, payload: Uint8Array): boolean {
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    if (this.#private !== null) {
      this.#private[msg] = new Uint8Array(payload); // a copy even when payload is a Buffer (whose slice() is a view)
      w[b + SLOT.PAYLOAD] = NIL;
      return true;
    }
    const len = payload.length;
    let off = this.#payloads.alloc(len);
    if (off !== NIL) {
      this.#payloads.bytes.set(payload, off);
    } else if (this.#big !== null && (off = this.#big.alloc(len)) !== NIL) {
      this.#big.bytes.set(payload, off);
      w[b + SLOT.FLAGS] |= FLAG.BIG;
    } else {
      return false;
    }
    w[b + SLOT.PAYLOAD] = off;
    return true;
  }

  /** The kept bytes of message slot `msg` (`len` > 0 bytes, `flags` its FLAGS word): a view, valid until drop(). */
  bytesOf(msg: number, len: number, flags: number): Uint8Array {
    const off = this.#w[msg * SLOT_WORDS + SLOT.PAYLOAD]!;
    if (off !== NIL) return ((flags & FLAG.BIG) !== 0 ? this.#big! : this.#payloads).bytes.subarray(off, off + len);
    return this.#private![msg]!;
  }

  /** Frees what keep() stored for message slot `msg` (nothing for a rendezvous or empty message). */
  drop(msg: number): void {
    const w = this.#w;
    const off = w[msg * SLOT_WORDS + SLOT.PAYLOAD]!;
    if (off !== NIL) ((w[msg * SLOT_WORDS + SLOT.FLAGS]! & FLAG.BIG) !== 0 ? this.#big! : this.#payloads).free(off);
    else if (this.#private !== null) this.#private[msg] = undefined;
  }
}
