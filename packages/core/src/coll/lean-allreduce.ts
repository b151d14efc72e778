/**
 * The lean small allreduce (docs/adr/0022-small-collectives-lean.md): the state a
 * communicator keeps so that a repeated small Allreduce or Iallreduce starts allreduce.ts's
 * algorithm without building anything per call.
 *
 * The API layer (api/coll-comm.ts) checks the arguments and resolves the op once per array kind;
 * this file owns what the call does after that: it takes the communicator's collective sequence
 * number straight from its shared cell (Atomics, so every thread of the process that calls on
 * the communicator draws from one counter, as Pt2ptComm._collSeq does) and runs the short
 * allreduce's step machine (short-allreduce.ts, the one AllreduceInit plans; docs/adr/0053) on
 * byte views of the caller's arrays through a point-to-point view made once. The result is the
 * same call the general path makes (same tag and signature, same recursive doubling, same errors),
 * minus its objects: a machine that has reported is kept for the next call, and a call whose
 * messages were already there finishes inside start() and returns LEAN_DONE, which Allreduce
 * returns as it is, entering no blocking wait. The byte views of the previous call's arrays are kept for the next call on the same
 * arrays (a loop of Allreduce calls on the same vectors makes no views), but only for arrays
 * whose whole buffer is at most LEAN_ALLREDUCE_MAX_BYTES: keeping a view keeps its buffer alive
 * until the next call, which for a small vector cut from a large buffer could be the whole buffer.
 *
 * State: one LeanAllreduce per communicator wrapper and thread, made on its first lean call; the
 * byte views of its previous call's arrays; an idle machine (LeanCall) of each form. Calls may
 * overlap (Iallreduces, Allreduces not yet awaited): each running call has a machine of its own.
 *
 * A blocking call that must wait tells the caller's BlockingWait (the roll-call and the poll loop of
 * a blocking call, runtime/blocked.ts) when its wait begins and ends, and its promise is the one the
 * API returns: no async frame around it, whose promise and extra microtask turn each waiting call
 * paid (docs/adr/0053, amended 2026-11-30). An error of a blocking call is rejected at the awaiting
 * call (rejectAtCallSite), so its stack names the user's frame as the async frame's did.
 */
import { collTag, rejectAtCallSite } from '../util/index.ts';
import type { RunTarget } from './plan.ts';
import type { ByteOp, CollPt2pt } from './pt2pt.ts';
import { ShortAllreduce } from './short-allreduce.ts';
import { DEFAULT_COLL_TUNING } from './select.ts';
import { signatureOf } from './signature.ts';

/** The signatures the tags of Allreduce and Iallreduce carry (signature.ts), as the general path's _collStart gives them. */
const ALLREDUCE = signatureOf('Allreduce');
const IALLREDUCE = signatureOf('Iallreduce');

/** The lean path takes vectors up to this many bytes: the short messages of the selection (select.ts). */
export const LEAN_ALLREDUCE_MAX_BYTES = DEFAULT_COLL_TUNING.allreduceShortBytes;

/** What a blocking call does while it waits (the API's record of blocked calls, which also polls): told once each way. */
export interface BlockingWait {
  /** The call's wait begins (its messages were not all there). */
  enter(): void;
  /** The wait has ended, before the call's promise settles. */
  leave(): void;
}

/** A communicator's state for the lean small allreduce. */
export class LeanAllreduce {
  readonly blocking: CollPt2pt;
  readonly nonblocking: CollPt2pt;
  readonly seqCells: Int32Array;
  readonly seqIndex: number;
  /** Told when a blocking call waits (null: nobody, as in the unit tests). */
  readonly wait: BlockingWait | null;
  /** The previous call's recv array and its byte view, kept while the array's buffer is small (see above); null: none. */
  #recv: ArrayBufferView | null = null;
  #recvBytes: Uint8Array = NO_BYTES;
  /** The same for the previous call's send array. */
  #send: ArrayBufferView | null = null;
  #sendBytes: Uint8Array = NO_BYTES;
  /** A machine of each form not running now, for the next call (LeanCall). */
  #idleBlocking: LeanCall | null = null;
  #idleNonblocking: LeanCall | null = null;

  /**
   * @param blocking the collective context's point-to-point for Allreduce (its errors name the call)
   * @param nonblocking the same for Iallreduce
   * @param seqCells where the communicator's collective sequence number lives
   * @param seqIndex its index in seqCells
   * @param wait told when a blocking call's wait begins and ends (default null: nobody)
   */
  constructor(blocking: CollPt2pt, nonblocking: CollPt2pt, seqCells: Int32Array, seqIndex: number, wait: BlockingWait | null = null) {
    this.blocking = blocking;
    this.nonblocking = nonblocking;
    this.seqCells = seqCells;
    this.seqIndex = seqIndex;
    this.wait = wait;
  }

  /**
   * Starts one allreduce of `bytes` bytes: `send` (null: IN_PLACE) and `recv` are plain typed
   * arrays of that many bytes, already checked, and `op` is the op on their element type.
   */
  start(isBlocking: boolean, send: ArrayBufferView | null, recv: ArrayBufferView, bytes: number, op: ByteOp): Promise<void> {
    const cells = this.seqCells;
    const seq = Atomics.load(cells, this.seqIndex);
    Atomics.store(cells, this.seqIndex, (seq + 1) | 0);
    // A kept view is the same array's bytes while its length is still `bytes` (an array's buffer and offset never change).
    let recvBytes = this.#recvBytes;
    if (recv !== this.#recv || recvBytes.length !== bytes) {
      recvBytes = new Uint8Array(recv.buffer, recv.byteOffset, bytes);
      const keep = recv.buffer.byteLength <= LEAN_ALLREDUCE_MAX_BYTES;
      this.#recv = keep ? recv : null;
      this.#recvBytes = keep ? recvBytes : NO_BYTES;
    }
    let sendBytes: Uint8Array | null = null;
    if (send !== null) {
      sendBytes = this.#sendBytes;
      if (send !== this.#send || sendBytes.length !== bytes) {
        sendBytes = new Uint8Array(send.buffer, send.byteOffset, bytes);
        const keep = send.buffer.byteLength <= LEAN_ALLREDUCE_MAX_BYTES;
        this.#send = keep ? send : null;
        this.#sendBytes = keep ? sendBytes : NO_BYTES;
      }
    }
    // A machine of this communicator's that is not running (calls may overlap: Iallreduces, unawaited Allreduces).
    let call = isBlocking ? this.#idleBlocking : this.#idleNonblocking;
    if (call === null) call = new LeanCall(this, isBlocking ? this.blocking : this.nonblocking, isBlocking);
    else if (isBlocking) this.#idleBlocking = null;
    else this.#idleNonblocking = null;
    return call.run(collTag(seq, isBlocking ? ALLREDUCE : IALLREDUCE), sendBytes, recvBytes, op);
  }

  /** A call's machine that has reported: kept for the next call of its form (one of each is enough for a loop). */
  idle(call: LeanCall, isBlocking: boolean): void {
    if (isBlocking) this.#idleBlocking ??= call;
    else this.#idleNonblocking ??= call;
  }
}

/**
 * One lean call's run of coll/short-allreduce.ts's machine, as the promise the API returns: LEAN_DONE
 * itself when the run ended before start() returned (its messages were there), so the blocking
 * form need not wait at all (coll-comm.ts), else a promise the run settles; a blocking call's
 * wait is told to the owner's BlockingWait around it.
 */
class LeanCall implements RunTarget {
  readonly #owner: LeanAllreduce;
  readonly #machine: ShortAllreduce;
  readonly #isBlocking: boolean;
  /** inside run(): a report then is the synchronous outcome */
  #inRun = false;
  #outcome: unknown = PENDING;
  #resolve: ((v: void | PromiseLike<void>) => void) | null = null;
  #reject: ((e: unknown) => void) | null = null;
  // Bound once: a call that does wait costs its promise and no closure of ours.
  readonly #executor = (resolve: (v: void | PromiseLike<void>) => void, reject: (e: unknown) => void): void => {
    this.#resolve = resolve;
    this.#reject = reject;
  };

  constructor(owner: LeanAllreduce, pt: CollPt2pt, isBlocking: boolean) {
    this.#owner = owner;
    this.#machine = new ShortAllreduce(pt);
    this.#isBlocking = isBlocking;
  }

  run(tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp): Promise<void> {
    this.#inRun = true;
    this.#outcome = PENDING;
    this.#machine.run(tag, send, recv, op, this);
    this.#inRun = false;
    const outcome = this.#outcome;
    if (outcome === PENDING) {
      if (this.#isBlocking) this.#owner.wait?.enter();
      return new Promise<void>(this.#executor);
    }
    this.#outcome = PENDING;
    this.#owner.idle(this, this.#isBlocking);
    if (outcome === null) return LEAN_DONE;
    return this.#isBlocking ? rejectAtCallSite(outcome) : Promise.reject(outcome);
  }

  finished(error: unknown): void {
    if (this.#inRun) {
      this.#outcome = error;
      return;
    }
    const resolve = this.#resolve!;
    const reject = this.#reject!;
    this.#resolve = null;
    this.#reject = null;
    const isBlocking = this.#isBlocking;
    this.#owner.idle(this, isBlocking);
    if (isBlocking) this.#owner.wait?.leave();
    if (error === null) resolve();
    // Made where a message completed the run: rejected at the awaiting call, its stack names the user's (pt2pt-comm.ts blocking()).
    else if (isBlocking) resolve(rejectAtCallSite(error));
    else reject(error);
  }
}

/** The outcome of a run not yet reported. */
const PENDING = Symbol('pending');

/** What a lean call that finished within start() returns: a settled promise the API may return as it is. */
export const LEAN_DONE: Promise<void> = Promise.resolve();

/** No kept view. */
const NO_BYTES = new Uint8Array(0);
