/**
 * The persistent short allreduce (AllreduceInit of at most DEFAULT_COLL_TUNING.allreduceShortBytes):
 * allreduce.ts's recursive doubling on bytes, planned at init and run as a step machine that the
 * receives' completions drive.
 *
 * Everything a start would otherwise repeat is computed once, here: the schedule (which peer, in
 * which step, sending, receiving or both, and how the received operand combines: allreduce.ts's
 * fix-up in, doubling and fix-up out), the tag (with its signature, fixed at init), the buffers and
 * the op. A start copies the send vector, then posts each step's receive and send on the
 * point-to-point view's callback entries (pt2pt.ts recvThen/sendThen: no promise, no closure) and
 * combines when both have reported; a start whose messages were already there (the peer is ahead,
 * the common case of a loop of starts) finishes before start() returns, so the request's wait()
 * finds it complete. The arithmetic, the operand order (the lower ranks' value on the left, so a
 * non-commutative op stays in rank order) and the errors (operandMismatch, a message of another
 * call by its tag) are recursiveDoublingBytes' in allreduce.ts; reductions.test.ts runs both on the
 * same inputs.
 *
 * State: the step index, the step's outstanding receive/send count (plus one while posting, so a
 * completion that comes during posting does not advance), the received operand, the first error,
 * and the accumulator (the recv vector, or the last received array for a non-commutative op whose
 * peer is higher). Invariant: at most one step is outstanding; done.finished is called once per
 * start, after every operation of the failing step has reported (a late completion can never reach
 * the next start).
 */
import { operandMismatch } from './mismatch.ts';
import type { CollPlan, RunTarget } from './plan.ts';
import type { ByteOp, CollPt2pt, ReceiveTarget, SendTarget } from './pt2pt.ts';
import { floorPowerOfTwo } from './tree.ts';
import type { MPIError } from '../util/index.ts';

/** What a step does: bits of sending and receiving, and how the received operand is used. */
const STEP = {
  /** send the accumulator (fix-up in on an even rank, fix-up out on an odd one) */
  SEND: 1,
  /** receive the lower neighbour's value and combine it as the left operand (fix-up in, odd rank) */
  RECV_LOWER: 2,
  /** send and receive with a doubling partner, combine by rank order */
  EXCHANGE: 3,
  /** receive the result (fix-up out, even rank) */
  RECV_RESULT: 4,
} as const;

/** The schedule of recursive doubling for `rank` of `size` (allreduce.ts's header): pairs of (step, peer). */
export function doublingSchedule(rank: number, size: number): Int32Array {
  const steps: number[] = [];
  if (size > 1) {
    const pof2 = floorPowerOfTwo(size);
    const rem = size - pof2;
    let newrank = rank - rem;
    if (rank < 2 * rem) {
      if (rank % 2 === 0) {
        steps.push(STEP.SEND, rank + 1);
        newrank = -1;
      } else {
        steps.push(STEP.RECV_LOWER, rank - 1);
        newrank = rank >> 1;
      }
    }
    if (newrank >= 0) {
      for (let mask = 1; mask < pof2; mask <<= 1) {
        const peerNew = newrank ^ mask;
        steps.push(STEP.EXCHANGE, peerNew < rem ? peerNew * 2 + 1 : peerNew + rem);
      }
    }
    if (rank < 2 * rem) {
      if (rank % 2 === 1) steps.push(STEP.SEND, rank - 1);
      else steps.push(STEP.RECV_RESULT, rank + 1);
    }
  }
  return Int32Array.from(steps);
}

/** A persistent short allreduce: its plan, made at init, and its run's state. */
export class ShortAllreducePlan implements CollPlan, ReceiveTarget, SendTarget {
  readonly #pt: CollPt2pt;
  readonly #tag: number;
  readonly #send: Uint8Array | null;
  readonly #recv: Uint8Array;
  readonly #op: ByteOp;
  readonly #steps: Int32Array;
  #step = 0;
  #pending = 0;
  #acc: Uint8Array;
  #got: Uint8Array | null = null;
  #error: MPIError | null = null;
  #done: RunTarget | null = null;

  /**
   * @param pt the request's point-to-point view; @param tag its tag (taken at init)
   * @param send this rank's vector, null for IN_PLACE; @param recv the result (same length, at most the short limit)
   */
  constructor(pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp) {
    this.#pt = pt;
    this.#tag = tag;
    this.#send = send;
    this.#recv = recv;
    this.#op = op;
    // An empty vector sends nothing (shortAllreduce's rule): its schedule is empty.
    this.#steps = recv.length > 0 ? doublingSchedule(pt.rank, pt.size) : new Int32Array(0);
    this.#acc = recv;
  }

  start(done: RunTarget): void {
    if (this.#send !== null) this.#recv.set(this.#send);
    this.#done = done;
    this.#step = 0;
    this.#error = null;
    this.#acc = this.#recv;
    this.#run();
  }

  /** Posts steps until one is left outstanding or the schedule ends. */
  #run(): void {
    const steps = this.#steps;
    while (this.#step < steps.length) {
      const kind = steps[this.#step]!;
      const peer = steps[this.#step + 1]!;
      const pt = this.#pt;
      this.#pending = 1;
      // The receive is posted before the send (a rendezvous send completes only once matched).
      if (kind !== STEP.SEND) {
        this.#pending++;
        if (pt.recvThen !== undefined) pt.recvThen(peer, this.#tag, this);
        else pt.recv(peer, this.#tag).then((d) => this.received(d, this.#tag, null), (e: MPIError) => this.received(null, -1, e));
      }
      if (kind === STEP.SEND || kind === STEP.EXCHANGE) {
        this.#pending++;
        if (pt.sendThen !== undefined) pt.sendThen(peer, this.#tag, this.#acc, this);
        else pt.send(peer, this.#tag, this.#acc).then(() => this.sent(null), (e: MPIError) => this.sent(e));
      }
      if (--this.#pending !== 0) return;
      if (!this.#apply()) return;
    }
    this.#finish();
  }

  received(data: Uint8Array | null, tag: number, error: MPIError | null): void {
    let e = error;
    if (e === null && tag !== this.#tag && tag >= 0 && this.#pt.mismatch !== undefined) {
      e = this.#pt.mismatch(tag, this.#tag, this.#steps[this.#step + 1]!);
    }
    if (e !== null) this.#error ??= e;
    else this.#got = data;
    if (--this.#pending === 0 && this.#apply()) this.#run();
  }

  sent(error: MPIError | null): void {
    if (error !== null) this.#error ??= error;
    if (--this.#pending === 0 && this.#apply()) this.#run();
  }

  /** The step's operations have all reported: combines, and moves on (true) or finishes with its error (false). */
  #apply(): boolean {
    const kind = this.#steps[this.#step]!;
    const peer = this.#steps[this.#step + 1]!;
    const got = this.#got;
    this.#got = null;
    if (this.#error === null && kind !== STEP.SEND) {
      const acc = this.#acc;
      const want = kind === STEP.RECV_RESULT ? this.#recv.length : acc.length;
      if (got!.length !== want) this.#error = operandMismatch(this.#pt, got!.length, want, peer);
      else if (kind === STEP.RECV_RESULT) this.#acc = got!;
      else if (kind === STEP.RECV_LOWER || peer < this.#pt.rank || this.#op.commute) this.#op.combine(got!, acc);
      else {
        // A non-commutative op with the higher peer: acc op got lands in got (ByteFold.merge's order).
        this.#op.combine(acc, got!);
        this.#acc = got!;
      }
    }
    if (this.#error !== null) {
      this.#finish();
      return false;
    }
    this.#step += 2;
    return true;
  }

  #finish(): void {
    const error = this.#error;
    if (error === null && this.#acc !== this.#recv) this.#recv.set(this.#acc);
    this.#acc = this.#recv;
    this.#error = null;
    const done = this.#done!;
    this.#done = null;
    done.finished(error);
  }
}
