/**
 * The short allreduce (at most DEFAULT_COLL_TUNING.allreduceShortBytes; every form: Allreduce and
 * Iallreduce on the lean path, lean-allreduce.ts; AllreduceInit, planned at init; the general
 * path's allreduce.ts shortAllreduce): recursive doubling on bytes (allreduce.ts's header: fix-up
 * in, doubling, fix-up out) run as a step machine that the receives' completions drive.
 *
 * Source: MPICH src/mpi/coll/allreduce/allreduce_intra_recursive_doubling.c; Thakur, Rabenseifner,
 * Gropp (IJHPCA 2005) section 4.4. The operand order keeps the lower ranks' value on the left, so a
 * non-commutative op stays in rank order (ByteFold.merge's rule; reductions.test.ts checks it
 * against the rank-ordered fold).
 *
 * The schedule (which peer in which step, sending, receiving or both, and how the received operand
 * combines) depends on the rank and size only, so it is made once per view (doublingSchedule). A
 * run posts each step's receive and send on the view's callback entries (pt2pt.ts recvThen and
 * sendThen: no promise, no closure, no async frame) and combines when both have reported; a run
 * whose messages were already there (the peer is ahead: in a loop of calls, one call in two on 2
 * processes) finishes before run() returns, so its caller need not wait at all. Views without the
 * entries (the unit tests' simulator) run through recv() and send().
 *
 * Errors: an operand of another length (operandMismatch, ERR_COUNT), a message of another
 * collective call (the view's mismatch(), by the message's tag: ERR_OTHER naming both calls), a
 * failed peer: the run reports the first one once every operation of its step has reported.
 *
 * State: the step index, the step's outstanding operations (plus one while posting, so a
 * completion that comes during posting does not advance), the received operand, the first error,
 * the accumulator (the recv vector, or the last received array for a non-commutative op whose peer
 * is higher). Invariant: at most one step is outstanding, and the caller reports once per run, after
 * every operation of the run has reported, so nothing late can reach the next run.
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

/**
 * Recursive doubling on bytes for one rank of a view, as a step machine: the schedule is made once
 * per view; run() runs one allreduce on it, and the machine can run again once it has reported.
 */
export class ShortAllreduce implements ReceiveTarget, SendTarget {
  readonly #pt: CollPt2pt;
  readonly #steps: Int32Array;
  #tag = 0;
  #recv: Uint8Array = NO_BYTES;
  #op: ByteOp | null = null;
  #step = 0;
  #pending = 0;
  #acc: Uint8Array = NO_BYTES;
  #got: Uint8Array | null = null;
  #error: MPIError | null = null;
  #done: RunTarget | null = null;

  constructor(pt: CollPt2pt) {
    this.#pt = pt;
    this.#steps = doublingSchedule(pt.rank, pt.size);
  }

  /**
   * Runs one allreduce with `tag`: `send` (null: IN_PLACE) and `recv` of the same length, the result
   * in `recv`; tells `done` once, possibly before run() returns. Only when the previous run has reported.
   */
  run(tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp, done: RunTarget): void {
    if (send !== null) recv.set(send);
    this.#tag = tag;
    this.#recv = recv;
    this.#op = op;
    this.#done = done;
    // An empty vector sends nothing (shortAllreduce's rule): no step.
    this.#step = recv.length > 0 ? 0 : this.#steps.length;
    this.#error = null;
    this.#acc = recv;
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
      else if (kind === STEP.RECV_LOWER || peer < this.#pt.rank || this.#op!.commute) this.#op!.combine(got!, acc);
      else {
        // A non-commutative op with the higher peer: acc op got lands in got (ByteFold.merge's order).
        this.#op!.combine(acc, got!);
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
    // Nothing of this run stays reachable from the machine (the caller's arrays, the op).
    this.#acc = NO_BYTES;
    this.#recv = NO_BYTES;
    this.#op = null;
    this.#error = null;
    const done = this.#done!;
    this.#done = null;
    done.finished(error);
  }
}

/** A persistent short allreduce (AllreduceInit): its machine and arguments, fixed at init. */
export class ShortAllreducePlan implements CollPlan {
  readonly #machine: ShortAllreduce;
  readonly #tag: number;
  readonly #send: Uint8Array | null;
  readonly #recv: Uint8Array;
  readonly #op: ByteOp;

  /**
   * @param pt the request's point-to-point view; @param tag its tag (taken at init)
   * @param send this rank's vector, null for IN_PLACE; @param recv the result (same length, at most the short limit)
   */
  constructor(pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp) {
    this.#machine = new ShortAllreduce(pt);
    this.#tag = tag;
    this.#send = send;
    this.#recv = recv;
    this.#op = op;
  }

  start(done: RunTarget): void {
    this.#machine.run(this.#tag, this.#send, this.#recv, this.#op, done);
  }
}

const NO_BYTES = new Uint8Array(0);
