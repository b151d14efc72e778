/**
 * A multi-producer, single-consumer ring of variable-length records in a
 * SharedArrayBuffer: how one thread hands work to another without messages
 * (the channel engines' injection rings, the threads' completion rings).
 *
 *   header (Int32): [0] producer mutex  [1] head (consumer)  [2] tail (producers)  [3] doorbell
 *                   [4] closed (the consumer serves no more)  [5] producers sleeping for space
 *   data:  ... | len u32 | bytes (padded to 4) | len u32 | bytes | SKIP ... |
 *
 * Producers take the mutex (tryLock spin: they hold it for one copy), append a
 * record, publish the new tail with Atomics.store, release, then ring the
 * doorbell (Atomics.add + notify), or leave the ringing for later to wake the
 * consumer once for several records (ringDoorbell). The consumer reads records between head and
 * tail and publishes the new head; it waits for the doorbell with
 * Atomics.waitAsync (never blocking its event loop). A record that would not
 * fit before the end of the data area is preceded by a SKIP marker and starts
 * again at offset 0. Head and tail are byte offsets that only grow (mod 2^32);
 * the free space is capacity - (tail - head).
 *
 * Limits: a record of at most maxRecordBytes (half the data area, less its
 * length word) always fits once the ring has drained, wherever the tail
 * stands; a larger one might never fit (it could need the skipped end as well)
 * and is refused as a caller bug. A producer that finds the ring full may
 * sleep in waitForSpace(): the consumer notifies the head word after a drain
 * when producers sleep (the waiters word), so an idle ring costs no notify.
 */
import { Mutex } from './mutex.ts';
import { assert, waitAsync } from '../util/index.ts';

const H_LOCK = 0;
const H_HEAD = 1;
const H_TAIL = 2;
const H_DOORBELL = 3;
const H_CLOSED = 4;
const H_WAITERS = 5;
const HEADER_WORDS = 8;
const SKIP = 0xffffffff | 0;

export class Ring {
  readonly buffer: SharedArrayBuffer;
  readonly #h: Int32Array;
  readonly #words: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #capacity: number;
  readonly #mutex: Mutex;

  /** A new ring of `capacityBytes` (a power of two). */
  static create(capacityBytes: number): Ring {
    return new Ring(new SharedArrayBuffer(Ring.bytesFor(capacityBytes)));
  }

  /** Bytes a ring of `capacityBytes` occupies (header included). */
  static bytesFor(capacityBytes: number): number {
    if ((capacityBytes & (capacityBytes - 1)) !== 0) throw new RangeError('ring capacity must be a power of two');
    return HEADER_WORDS * 4 + capacityBytes;
  }

  /** A view of a ring (possibly another thread's) at `byteOffset` of `buffer`, `byteLength` = bytesFor(capacity). */
  constructor(buffer: SharedArrayBuffer, byteOffset = 0, byteLength = buffer.byteLength - byteOffset) {
    this.buffer = buffer;
    this.#h = new Int32Array(buffer, byteOffset, HEADER_WORDS);
    this.#capacity = byteLength - HEADER_WORDS * 4;
    this.#words = new Int32Array(buffer, byteOffset + HEADER_WORDS * 4, this.#capacity >>> 2);
    this.#bytes = new Uint8Array(buffer, byteOffset + HEADER_WORDS * 4, this.#capacity);
    this.#mutex = new Mutex(this.#h, H_LOCK);
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** The largest record (words and bytes) that tryPush accepts: it fits once the ring has drained. */
  get maxRecordBytes(): number {
    return (this.#capacity >>> 1) - 4;
  }

  /**
   * Appends one record made of a word part and a byte part. Returns false if it
   * cannot fit now (the caller retries after the consumer has drained).
   * `ring` false leaves the doorbell alone: the record is visible to drain() at
   * once, but a consumer asleep in waitAsync() sees it only at the producer's
   * next ringDoorbell(), which the producer then owes (one notify for a batch).
   */
  tryPush(words: Int32Array, wordCount: number, bytes: Uint8Array | null, ring = true): boolean {
    const byteLen = bytes === null ? 0 : bytes.length;
    const payload = wordCount * 4 + byteLen;
    const need = 4 + ((payload + 3) & ~3);
    assert(payload <= this.maxRecordBytes, `a record of ${payload} bytes exceeds the ring's limit of ${this.maxRecordBytes}`);
    const h = this.#h;
    // Another producer holds the mutex for one copy: spin, then sleep (lockSync).
    this.#mutex.lockSync();
    const head = Atomics.load(h, H_HEAD) >>> 0;
    let tail = Atomics.load(h, H_TAIL) >>> 0;
    let at = tail & (this.#capacity - 1);
    const contiguous = this.#capacity - at;
    const extra = need > contiguous ? contiguous : 0;
    if (((tail - head) >>> 0) + need + extra > this.#capacity) {
      this.#mutex.unlock();
      return false;
    }
    if (extra > 0) {
      this.#words[at >>> 2] = SKIP;
      tail = (tail + extra) >>> 0;
      at = 0;
    }
    const w = at >>> 2;
    this.#words[w] = payload;
    for (let i = 0; i < wordCount; i++) this.#words[w + 1 + i] = words[i]!;
    if (byteLen > 0) this.#bytes.set(bytes!, at + 4 + wordCount * 4);
    Atomics.store(h, H_TAIL, (tail + need) | 0);
    this.#mutex.unlock();
    if (ring) this.ringDoorbell();
    return true;
  }

  /** Wakes the consumer for the records pushed so far (tryPush does it unless told not to). */
  ringDoorbell(): void {
    Atomics.add(this.#h, H_DOORBELL, 1);
    Atomics.notify(this.#h, H_DOORBELL);
  }

  /**
   * Consumer: calls `onRecord(byteOffset, byteLength)` for each record, in
   * order, with the record's bytes at `this.view` offsets; returns how many.
   * The record's memory is reused once drain returns.
   */
  drain(onRecord: (offset: number, length: number) => void): number {
    const h = this.#h;
    let head = Atomics.load(h, H_HEAD) >>> 0;
    const tail = Atomics.load(h, H_TAIL) >>> 0;
    let n = 0;
    while (head !== tail) {
      const at = head & (this.#capacity - 1);
      const len = this.#words[at >>> 2]!;
      if (len === SKIP) {
        head = (head + (this.#capacity - at)) >>> 0;
        continue;
      }
      onRecord(at + 4, len);
      head = (head + 4 + ((len + 3) & ~3)) >>> 0;
      n++;
    }
    Atomics.store(h, H_HEAD, head | 0);
    if (n > 0 && Atomics.load(h, H_WAITERS) !== 0) Atomics.notify(h, H_HEAD);
    return n;
  }

  /** The consumer's position; pass it to waitForSpace() after a failed tryPush. */
  head(): number {
    return Atomics.load(this.#h, H_HEAD);
  }

  /**
   * Producer: sleeps (Atomics.wait: the thread's event loop stops) until the consumer moves the
   * head past `seenHead`, the ring is closed, or `timeoutMs` passes. Returns at once if the head
   * has already moved.
   */
  waitForSpace(seenHead: number, timeoutMs: number): void {
    const h = this.#h;
    Atomics.add(h, H_WAITERS, 1);
    Atomics.wait(h, H_HEAD, seenHead, timeoutMs);
    Atomics.sub(h, H_WAITERS, 1);
  }

  /**
   * Consumer: it will drain no more; producers stop waiting (isClosed() tells them why). The notify
   * wakes producers asleep in waitForSpace; one about to sleep (it checked isClosed() just before)
   * misses it, as the head word it waits on does not change, and sees the close when its wait's
   * timeout ends: producers wait in short slices (thread-bridge.ts).
   */
  close(): void {
    Atomics.store(this.#h, H_CLOSED, 1);
    Atomics.notify(this.#h, H_HEAD);
  }

  isClosed(): boolean {
    return Atomics.load(this.#h, H_CLOSED) !== 0;
  }

  /** Word view of the data area (records are 4-byte aligned). */
  get words(): Int32Array {
    return this.#words;
  }
  /** Byte view of the data area. */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  /** The doorbell value; wait for it to change with waitAsync(). */
  doorbell(): number {
    return Atomics.load(this.#h, H_DOORBELL);
  }

  /** Resolves when the doorbell moves past `seen` (at once if it already has). */
  waitAsync(seen: number): Promise<unknown> | null {
    return waitAsync(this.#h, H_DOORBELL, seen);
  }

  isEmpty(): boolean {
    return Atomics.load(this.#h, H_HEAD) === Atomics.load(this.#h, H_TAIL);
  }
}
