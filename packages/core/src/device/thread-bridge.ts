/**
 * The thread bridge of the device (DESIGN.md "Channels and progress"): how
 * threads of one process hand work to each other through rings in shared memory.
 *
 *   injection ring (one per channel)   a thread that does not host a channel queues
 *                                      a frame (header words + payload) for the thread
 *                                      that does; the host serves the ring on its
 *                                      event loop and gives each frame to its transport.
 *   completion ring (one per thread)   a thread that completes another thread's
 *                                      request slot queues the slot number for its
 *                                      owner, which drains the ring on its event loop
 *                                      (or in test()) and completes the request.
 *
 * Threads: every Device has one bridge; inject() and complete() run on any
 * thread, the serve loops on the thread that owns the ring. A pending
 * Atomics.waitAsync keeps no event loop alive: the device decides how long a
 * loop runs (completions: while it has operations in flight; injection: until
 * close). Nothing here allocates or logs per frame.
 */
import { newFrameHeader, type FrameHeader } from '../transport/index.ts';
import type { Ring } from '../shm/index.ts';
import type { SharedState } from './shared-state.ts';

/** Words of an injected frame: the header fields, the destination process. */
const INJ = { KIND: 0, FLAGS: 1, CTX: 2, SRC: 3, DST: 4, TAG: 5, SEQ: 6, AUX: 7, AUX2: 8, LEN: 9, PROC: 10, WORDS: 11 } as const;

export class ThreadBridge {
  readonly #shared: SharedState;
  /** scratch words of one injected frame or one completion record */
  readonly #words = new Int32Array(INJ.WORDS);
  /** scratch header of a frame taken from an injection ring */
  readonly #hdr: FrameHeader = newFrameHeader();
  readonly #served: [Ring, (offset: number, length: number) => void][] = [];
  #closing = false;
  #completionArmed = false;

  constructor(shared: SharedState) {
    this.#shared = shared;
  }

  /** Queues frame (h, payload) for process `proc` on channel c, whose host sends it. Waits only while the ring is full. */
  inject(c: number, proc: number, h: FrameHeader, payload: Uint8Array | null): void {
    const w = this.#words;
    w[INJ.KIND] = h.kind;
    w[INJ.FLAGS] = h.flags;
    w[INJ.CTX] = h.contextId;
    w[INJ.SRC] = h.srcEndpoint;
    w[INJ.DST] = h.dstEndpoint;
    w[INJ.TAG] = h.tag;
    w[INJ.SEQ] = h.seq;
    w[INJ.AUX] = h.aux;
    w[INJ.AUX2] = h.aux2;
    w[INJ.LEN] = h.payloadLength;
    w[INJ.PROC] = proc;
    const ring = this.#shared.injection(c);
    while (!ring.tryPush(w, INJ.WORDS, payload)) {
      // the channel's host drains on its own thread
    }
  }

  /** Serves channel c's injection ring on this thread until close(): every frame goes to send (which must copy what it keeps). */
  serveInjection(c: number, send: (proc: number, h: FrameHeader, payload: Uint8Array | null) => void): void {
    const ring = this.#shared.injection(c);
    const h = this.#hdr;
    const onRecord = (offset: number, length: number): void => {
      const words = ring.words;
      const i = offset >>> 2;
      h.kind = words[i + INJ.KIND]!;
      h.flags = words[i + INJ.FLAGS]!;
      h.contextId = words[i + INJ.CTX]!;
      h.srcEndpoint = words[i + INJ.SRC]!;
      h.dstEndpoint = words[i + INJ.DST]!;
      h.tag = words[i + INJ.TAG]!;
      h.seq = words[i + INJ.SEQ]!;
      h.aux = words[i + INJ.AUX]!;
      h.aux2 = words[i + INJ.AUX2]!;
      h.payloadLength = words[i + INJ.LEN]!;
      const start = offset + INJ.WORDS * 4;
      send(words[i + INJ.PROC]!, h, length > INJ.WORDS * 4 ? ring.bytes.subarray(start, offset + length) : null);
    };
    this.#served.push([ring, onRecord]);
    const loop = (): void => {
      for (;;) {
        if (this.#closing && ring.isEmpty()) return;
        const seen = ring.doorbell();
        ring.drain(onRecord);
        const p = ring.waitAsync(seen);
        if (p !== null) {
          void p.then(loop);
          return;
        }
      }
    };
    loop();
  }

  /** Sends what other threads queued for the served channels, and lets the serve loops end once their rings are empty. */
  close(): void {
    this.#closing = true;
    for (const [ring, onRecord] of this.#served) ring.drain(onRecord);
  }

  /** Lets the serve loops end without sending anything more (the device is destroyed). */
  stop(): void {
    this.#closing = true;
  }

  /** Hands completed slot `slot` to thread `owner` through its completion ring. */
  complete(owner: number, slot: number): void {
    const ring = this.#shared.completion(owner);
    const one = this.#words;
    one[0] = slot;
    while (!ring.tryPush(one, 1, null)) {
      // the owner drains on its own thread; a full ring only waits for it
    }
  }

  /** Completes now whatever other threads queued in `ring` (this thread's completion ring). */
  drainCompletions(ring: Ring, onSlot: (offset: number) => void): void {
    ring.drain(onSlot);
  }

  /**
   * Serves this thread's completion ring from a microtask on, while isActive() (operations in
   * flight); a later call restarts it. onRecord gets each record's offset in the ring.
   */
  serveCompletions(ring: Ring, onRecord: (offset: number) => void, isActive: () => boolean): void {
    if (this.#completionArmed) return;
    this.#completionArmed = true;
    const loop = (): void => {
      for (;;) {
        const seen = ring.doorbell();
        ring.drain(onRecord);
        if (!isActive()) {
          this.#completionArmed = false;
          return;
        }
        const p = ring.waitAsync(seen);
        if (p !== null) {
          void p.then(loop);
          return;
        }
      }
    };
    queueMicrotask(loop);
  }
}
