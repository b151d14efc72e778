/**
 * Where the bytes of an unexpected eager message wait for their receive (moved out of
 * device.ts, behaviour unchanged). Once a message is queued, any thread of the process may
 * match it, so its bytes go to shared memory before it is queued: the payload pool first,
 * then the big arena (FLAG.BIG in the message slot), and, in a single-threaded process only,
 * a private copy on this heap when both are full (no other thread can take the message).
 * The message slot's PAYLOAD word holds the shared offset, or NIL for a private copy.
 *
 * Callers: the device, on the thread that queues the message (keep) and on the thread that
 * receives it (bytesOf, drop); a private copy is only ever read by the thread that made it.
 */
import type { PayloadPool } from '../shm/index.ts';
import { FLAG, NIL, SLOT, SLOT_WORDS } from './request-table.ts';
import type { SharedState } from './shared-state.ts';

export class UnexpectedPayloads {
  readonly #w: Int32Array;
  readonly #payloads: PayloadPool;
  readonly #big: PayloadPool | null;
  readonly #mt: boolean;
  /** unexpected payloads that did not fit in the shared pool (single-threaded processes only) */
  readonly #overflow = new Map<number, Uint8Array>();

  constructor(shared: SharedState) {
    this.#w = shared.table.words;
    this.#payloads = shared.payloads;
    this.#big = shared.big;
    this.#mt = shared.layout.multithreaded;
  }

  /**
   * Stores `payload` (length > 0) for message slot `msg`; false when no memory is left for it
   * (multithreaded: the caller fails the job; the slot's PAYLOAD word is then left as it was).
   */
  keep(msg: number, payload: Uint8Array): boolean {
    const w = this.#w;
    const b = msg * SLOT_WORDS;
    const len = payload.length;
    let off = this.#payloads.alloc(len);
    if (off !== NIL) {
      this.#payloads.bytes.set(payload, off);
    } else if (this.#big !== null && (off = this.#big.alloc(len)) !== NIL) {
      this.#big.bytes.set(payload, off);
      w[b + SLOT.FLAGS] |= FLAG.BIG;
    } else if (!this.#mt) {
      this.#overflow.set(msg, new Uint8Array(payload)); // a copy even when payload is a Buffer (whose slice() is a view)
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
    return this.#overflow.get(msg)!;
  }

  /** Frees what keep() stored for message slot `msg` (nothing for a rendezvous or empty message). */
  drop(msg: number): void {
    const w = this.#w;
    const off = w[msg * SLOT_WORDS + SLOT.PAYLOAD]!;
    if (off !== NIL) ((w[msg * SLOT_WORDS + SLOT.FLAGS]! & FLAG.BIG) !== 0 ? this.#big! : this.#payloads).free(off);
    else this.#overflow.delete(msg);
  }
}
