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
 *
 * A full ring (its consumer busy running user code, or simply behind) makes
 * the producer spin briefly, then sleep in Atomics.wait until the consumer
 * drains (it notifies sleepers), re-checking every WAIT_SLICE_MS whether it
 * can still progress: a ring whose consumer has stopped (closed), or a process
 * whose device has failed, ends the wait with an MPIError instead of a spin
 * forever. A closed injection ring refuses a frame even when it has room
 * (its host will never send it: a channel engine that died, a device
 * destroyed), so no frame is lost silently. A frame larger than maxInjectBytes never enters a ring: the device
 * sends such a message by rendezvous (through the big arena) instead.
 * The sleep stops the producer's event loop, as the spin it replaces did:
 * producers are user threads, and the thread that owns a channel's sockets is
 * its consumer (the main thread in inline progress never injects); completion
 * rings are sized so that they cannot fill (shared-state.ts).
 *
 * Doorbells of a channel engine (batchDoorbells, docs/adr/0054-engine-doorbells.md): an engine
 * completes most of a frame batch's receives for other threads, often several for the same owner
 * in one socket read. It pushes each slot at once but rings each owner's doorbell once, in a
 * microtask after the synchronous delivery of the batch: one Atomics.notify (and one wake-up of
 * a sleeping owner) per owner and batch instead of per message. Only engines batch: an engine's
 * microtasks run as soon as its delivery returns, since it runs no user code, whereas a user
 * thread that completed another thread's receive and then computed would hold the wake-up back.
 * Before it sleeps on a full ring, an engine rings what it owes (the owner may be asleep on it).
 */
import { newFrameHeader, type FrameHeader } from '../transport/index.ts';
import type { Ring } from '../shm/index.ts';
import { ERR_OTHER, mpiError } from '../util/index.ts';
import { MAX_THREADS, type SharedState } from './shared-state.ts';

/** Words of an injected frame: the header fields, the destination process. */
const INJ = { KIND: 0, FLAGS: 1, CTX: 2, SRC: 3, DST: 4, TAG: 5, SEQ: 6, AUX: 7, AUX2: 8, LEN: 9, PROC: 10, WORDS: 11 } as const;
/** tryPush attempts before a producer sleeps: a consumer that is draining frees space within microseconds. */
const PUSH_SPINS = 64;
/** A sleeping producer wakes at least this often to check that the consumer and the process are still alive. */
const WAIT_SLICE_MS = 50;

export class ThreadBridge {
  readonly #shared: SharedState;
  /** scratch words of one injected frame or one completion record */
  readonly #words = new Int32Array(INJ.WORDS);
  /** scratch header of a frame taken from an injection ring */
  readonly #hdr: FrameHeader = newFrameHeader();
  readonly #served: [Ring, (offset: number, length: number) => void][] = [];
  #closing = false;
  #completionArmed = false;
  /** complete() rings each owner's doorbell once per batch, in a microtask (see the header) */
  readonly #batchDoorbells: boolean;
  /** the owners whose completion rings hold records this thread has not rung for, and a mark per owner */
  readonly #owed: number[] = [];
  readonly #isOwed: Uint8Array;
  #ringScheduled = false;

  /** @param batchDoorbells true in a channel engine: completions ring their owners once per delivery batch */
  constructor(shared: SharedState, batchDoorbells = false) {
    this.#shared = shared;
    this.#batchDoorbells = batchDoorbells;
    this.#isOwed = new Uint8Array(batchDoorbells ? MAX_THREADS : 0);
  }

  /**
   * The largest payload inject() takes: a quarter of the ring, so several such frames are in
   * flight at once (the ring's own limit, half of it, would serialize them).
   */
  get maxInjectBytes(): number {
    return this.#shared.injectionRingBytes / 4 - INJ.WORDS * 4;
  }

  /**
   * Queues frame (h, payload) for process `proc` on channel c, whose host sends it. Waits only
   * while the ring is full. `payload` is at most maxInjectBytes.
   * @param call the API call the error names: the user's send, or 'progress' for a protocol's answer
   * @throws MPIError(failure class or ERR_OTHER) when the ring's host has stopped, or the ring
   *   stays full while the process is failing
   */
  inject(c: number, proc: number, h: FrameHeader, payload: Uint8Array | null, call = 'progress'): void {
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
    if (ring.isClosed()) this.#closedError(`the injection ring of channel ${c}`, call);
    if (!ring.tryPush(w, INJ.WORDS, payload)) this.#pushWaiting(ring, INJ.WORDS, payload, `the injection ring of channel ${c}`, call);
  }

  /** A producer found `what` closed: its consumer will never drain it again. */
  #closedError(what: string, call: string): never {
    const failed = this.#shared.failedClass();
    if (failed !== 0) throw mpiError(failed, call, `${what} is closed: the thread that drains it has stopped and the process is failing (see the job output)`);
    throw mpiError(ERR_OTHER, call, `${what} is closed: the thread that drains it has stopped (the process is closing or one of its threads failed)`);
  }

  /** tryPush until it succeeds: spin, then sleep until the consumer drains; give up if it never will. */
  #pushWaiting(ring: Ring, wordCount: number, payload: Uint8Array | null, what: string, call: string): void {
    const w = this.#words;
    for (let i = 0; i < PUSH_SPINS; i++) if (ring.tryPush(w, wordCount, payload)) return;
    for (;;) {
      const seen = ring.head();
      if (ring.tryPush(w, wordCount, payload)) return;
      if (ring.isClosed()) this.#closedError(what, call);
      const failed = this.#shared.failedClass();
      if (failed !== 0) throw mpiError(failed, call, `${what} is full and the process is failing (see the job output)`);
      ring.waitForSpace(seen, WAIT_SLICE_MS);
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
        if (this.#closing && ring.isEmpty()) {
          ring.close(); // a producer that comes after this would wait for nobody
          return;
        }
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

  /** Lets the serve loops end without sending anything more (the device is destroyed); producers stop waiting on them. */
  stop(): void {
    this.#closing = true;
    for (const [ring] of this.#served) ring.close();
  }

  /** Hands completed slot `slot` to thread `owner` through its completion ring. */
  complete(owner: number, slot: number): void {
    const ring = this.#shared.completion(owner);
    const one = this.#words;
    one[0] = slot;
    if (this.#batchDoorbells) {
      if (ring.tryPush(one, 1, null, false)) {
        this.#owe(owner);
        return;
      }
      this.#ringOwed(); // the owner may sleep until the records already pushed are rung
    }
    // Sized so it cannot fill with the default request slots (shared-state.ts); a busy owner only delays it.
    if (!ring.tryPush(one, 1, null)) this.#pushWaiting(ring, 1, null, `the completion ring of thread ${owner}`, 'progress');
  }

  /** Notes that `owner`'s doorbell is owed, and schedules the ringing after the current batch. */
  #owe(owner: number): void {
    if (this.#isOwed[owner] === 0) {
      this.#isOwed[owner] = 1;
      this.#owed.push(owner);
    }
    if (!this.#ringScheduled) {
      this.#ringScheduled = true;
      queueMicrotask(this.#ringOwed);
    }
  }

  /** Rings the doorbell of every owner owed one. */
  readonly #ringOwed = (): void => {
    this.#ringScheduled = false;
    const owed = this.#owed;
    for (let i = 0; i < owed.length; i++) {
      const owner = owed[i]!;
      this.#isOwed[owner] = 0;
      this.#shared.completion(owner).ringDoorbell();
    }
    owed.length = 0;
  };

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
