/**
 * A byte arena in shared memory for message payloads that must outlive the
 * chunk they arrived in (unexpected eager messages), so that any thread of the
 * process can later copy them out.
 *
 * Blocks come in power-of-two size classes (64 B .. 64 KiB by default). A free
 * block's first word links it into its class's free list; a fresh block is cut
 * from a bump pointer. A block carries its class in the word before its data.
 * Requests that do not fit (larger than the biggest class, or arena full)
 * return NIL and the caller keeps the bytes on its own heap.
 *
 * Layout of `meta` (Int32Array): [0] bump offset, [1 + c] head of class c's
 * free list, [last] spin lock, taken around alloc/free when several threads
 * share the arena.
 */
import { SpinLocks, type LockHolders } from './spin-lock.ts';

const NIL = -1;
const MIN_SHIFT = 6;

export class PayloadPool {
  readonly bytes: Uint8Array;
  readonly #words: Int32Array;
  readonly #meta: Int32Array;
  readonly #maxShift: number;
  readonly #lock: SpinLocks;
  readonly #lockIndex: number;

  /** `name` and `holders`: the lock's name and what it asks about a holder that may have died (spin-lock.ts). */
  constructor(
    buffers: { arena: SharedArrayBuffer; meta: SharedArrayBuffer },
    maxShift: number,
    initialize: boolean,
    shared = false,
    name = 'payload pool',
    holders: LockHolders | null = null,
  ) {
    this.bytes = new Uint8Array(buffers.arena);
    this.#words = new Int32Array(buffers.arena);
    this.#meta = new Int32Array(buffers.meta);
    this.#maxShift = maxShift;
    this.#lockIndex = this.#meta.length - 1;
    this.#lock = new SpinLocks(this.#meta, shared, name, holders);
    if (initialize) {
      this.#meta.fill(NIL);
      this.#meta[0] = 8;
      this.#meta[this.#lockIndex] = 0;
    }
  }

  static allocateBuffers(arenaBytes: number, maxShift: number): { arena: SharedArrayBuffer; meta: SharedArrayBuffer } {
    return { arena: new SharedArrayBuffer(arenaBytes), meta: new SharedArrayBuffer((3 + maxShift) * 4) };
  }

  /** Byte offset of a block of at least `length` bytes, or NIL. */
  alloc(length: number): number {
    let shift = MIN_SHIFT;
    while (2 ** shift < length) shift++;
    if (shift > this.#maxShift) return NIL;
    const meta = this.#meta;
    this.#lock.lock(this.#lockIndex);
    const head = meta[1 + shift]!;
    if (head !== NIL) {
      meta[1 + shift] = this.#words[head >>> 2]!;
      this.#lock.unlock(this.#lockIndex);
      return head;
    }
    const start = meta[0]!;
    const end = start + 8 + 2 ** shift;
    if (end > this.bytes.length) {
      this.#lock.unlock(this.#lockIndex);
      return NIL;
    }
    meta[0] = end;
    this.#words[(start >>> 2) + 1] = shift;
    this.#lock.unlock(this.#lockIndex);
    return start + 8;
  }

  free(offset: number): void {
    const shift = this.#words[(offset >>> 2) - 1]!;
    this.#lock.lock(this.#lockIndex);
    this.#words[offset >>> 2] = this.#meta[1 + shift]!;
    this.#meta[1 + shift] = offset;
    this.#lock.unlock(this.#lockIndex);
  }
}
