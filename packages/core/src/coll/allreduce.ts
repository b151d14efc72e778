/**
 * Allreduce: recursive doubling (short, any op), Rabenseifner (long,
 * commutative; rabenseifner.ts), binomial reduce + bcast (long,
 * non-commutative). The choice is SELECTION_TABLE's (select.ts).
 *
 * Source: MPICH src/mpi/coll/allreduce/allreduce_intra_recursive_doubling.c;
 * Thakur, Rabenseifner, Gropp, "Optimization of collective communication
 * operations in MPICH" (IJHPCA 2005), section 4.4.
 *
 * Recursive doubling with p = pof2 + rem (pof2 the largest power of two <= p):
 *   fix-up in:  among ranks 0 .. 2rem-1, even r sends its value to r + 1,
 *               which merges it as the lower operand and takes newrank r/2;
 *               even ranks sit out. Ranks >= 2rem take newrank r - rem.
 *   doubling:   for mask = 1, 2, .. < pof2 exchange with newrank ^ mask and
 *               merge (the partner's value is the lower operand iff its rank
 *               is lower).
 *   fix-up out: odd r < 2rem sends the result to r - 1.
 * Invariant: after the step with mask m, each participant holds the
 * reduction of the 2m-aligned group of newranks containing it, and newranks
 * keep rank order, each covering a contiguous range of ranks; so merging
 * "lower op higher" keeps rank order, which makes the scheme valid for
 * non-commutative ops too (MPICH does the same).
 *
 *     p = 6, rem = 2:   0→1  2→3     (in)      newranks: 1→0 3→1 4→2 5→3
 *                       0↔1 2↔3 on newranks, then 0↔2 1↔3, then 1→0 3→2 (out)
 *
 * Tag invariant: the partners of the doubling steps are distinct, and the
 * fix-up pairs (even r, r + 1) use opposite directions in and out.
 */
import { bcast } from './bcast.ts';
import { sendrecv } from './exchange.ts';
import { byteFold, objectFold, type Fold } from './fold.ts';
import { promisePlan, type CollPlanner } from './plan.ts';
import type { ByteOp, Codec, CollPt2pt, ObjectOp } from './pt2pt.ts';
import { rabenseifner } from './rabenseifner.ts';
import { reduce } from './reduce.ts';
import { choose, DEFAULT_COLL_TUNING, type AlgorithmOf, type CollOptions } from './select.ts';
import { ShortAllreduce, ShortAllreducePlan } from './short-allreduce.ts';
import { floorPowerOfTwo } from './tree.ts';

/** The recursive-doubling skeleton over any Fold; `mine` must be owned. Resolves the result on every rank. */
export async function recursiveDoublingAllreduce<V>(pt: CollPt2pt, tag: number, fold: Fold<V>, mine: V): Promise<V> {
  const { rank, size } = pt;
  if (size === 1) return mine;
  const pof2 = floorPowerOfTwo(size);
  const rem = size - pof2;
  let acc = mine;
  let newrank: number;
  if (rank < 2 * rem) {
    if (rank % 2 === 0) {
      await pt.send(rank + 1, tag, fold.encode(acc));
      newrank = -1;
    } else {
      acc = fold.merge(acc, fold.decode(await pt.recv(rank - 1, tag)), true);
      newrank = rank >> 1;
    }
  } else {
    newrank = rank - rem;
  }
  if (newrank >= 0) {
    for (let mask = 1; mask < pof2; mask <<= 1) {
      const peerNew = newrank ^ mask;
      const peer = peerNew < rem ? peerNew * 2 + 1 : peerNew + rem;
      const got = await sendrecv(pt, tag, peer, fold.encode(acc), peer);
      acc = fold.merge(acc, fold.decode(got), peer < rank);
    }
  }
  if (rank < 2 * rem) {
    if (rank % 2 === 1) await pt.send(rank - 1, tag, fold.encode(acc));
    else acc = fold.decode(await pt.recv(rank + 1, tag));
  }
  return acc;
}

/**
 * allreduce() of a short vector (at most DEFAULT_COLL_TUNING.allreduceShortBytes) at the default
 * tuning: SELECTION_TABLE's choice for every short vector, whatever the op (select.ts;
 * allreduce.test.ts checks it), recursive doubling on bytes, taken without choose(), by the step
 * machine that the lean path and AllreduceInit run too (short-allreduce.ts): one implementation
 * of the short allreduce, whichever form calls it.
 */
export function shortAllreduce(pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp): Promise<void> {
  if (pt.size === 1 || recv.length === 0) {
    if (send !== null) recv.set(send);
    return DONE;
  }
  return new Promise<void>((resolve, reject) => {
    new ShortAllreduce(pt).run(tag, send, recv, op, { finished: (e: unknown) => (e === null ? resolve() : reject(e)) });
  });
}

const DONE: Promise<void> = Promise.resolve();

/**
 * Reduces every rank's vector and leaves the result in every rank's `recv` (MPI_Allreduce).
 * @param send this rank's vector; null means IN_PLACE (it is already in `recv`)
 * @param recv the result (same length as `send`)
 */
export async function allreduce(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp, opts?: CollOptions,
): Promise<void> {
  if (opts === undefined && recv.length <= DEFAULT_COLL_TUNING.allreduceShortBytes) {
    await shortAllreduce(pt, tag, send, recv, op);
    return;
  }
  await runAllreduce(chooseAllreduce(pt.size, recv, op, opts), pt, tag, send, recv, op, opts);
}

/**
 * The allreduce of a persistent request (AllreduceInit), planned once at init: every input of
 * the selection (size, vector, op) is fixed for the request's life, so the algorithm is chosen
 * here rather than at every start (MPI 4.0 section 6.13 lets init do this work). A short vector's
 * plan is ShortAllreducePlan (short-allreduce.ts): recursive doubling's schedule computed once and
 * run by the receives' completions, so a start costs the exchange and the reduction and nothing
 * else; a long one runs runAllreduce with the chosen algorithm at every start (plan.ts promisePlan).
 * @param size the communicator's size (pt.size of the plan)
 * @param send this rank's vector; null means IN_PLACE
 * @param recv the result
 */
export function planAllreduce(size: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp, opts?: CollOptions): CollPlanner {
  if (opts === undefined && recv.length <= DEFAULT_COLL_TUNING.allreduceShortBytes) {
    return (pt, tag) => new ShortAllreducePlan(pt, tag, send, recv, op);
  }
  const algorithm = chooseAllreduce(size, recv, op, opts);
  return (pt, tag) => promisePlan(() => runAllreduce(algorithm, pt, tag, send, recv, op, opts));
}

function chooseAllreduce(size: number, recv: Uint8Array, op: ByteOp, opts: CollOptions | undefined): AlgorithmOf<'allreduce'> {
  return choose('allreduce', { size, bytes: recv.length, items: recv.length / op.itemBytes, commute: op.commute }, opts);
}

/** allreduce() with its algorithm chosen. */
async function runAllreduce(
  algorithm: AlgorithmOf<'allreduce'>, pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp, opts: CollOptions | undefined,
): Promise<void> {
  const { rank, size } = pt;
  if (size === 1 || recv.length === 0) {
    if (send !== null) recv.set(send);
    return;
  }
  switch (algorithm) {
    case 'rabenseifner':
      // It reads `send` where it lies: no copy of the whole vector into recv first.
      await rabenseifner(pt, tag, send, recv, op);
      return;
    case 'recursive-doubling': {
      if (send !== null) recv.set(send);
      const result = await recursiveDoublingAllreduce(pt, tag, byteFold(op, pt), recv);
      if (result !== recv) recv.set(result);
      return;
    }
    case 'reduce-bcast':
      if (send !== null) recv.set(send);
      // Rank 0 reduces in place; the others' vectors stay intact in recv until bcast overwrites them.
      await reduce(pt, tag, rank === 0 ? null : recv, rank === 0 ? recv : null, op, 0, opts);
      await bcast(pt, tag, recv, 0, opts);
      return;
  }
}

/**
 * Reduces values and returns the result on every rank (object allreduce), in rank order.
 * @param codec serializes values for the wire
 */
export async function allreduceObjects<T>(
  pt: CollPt2pt, tag: number, value: T, op: ObjectOp<T>, codec: Codec<T>, opts?: CollOptions,
): Promise<T> {
  choose('allreduceObjects', { size: pt.size, bytes: 0, items: 0, commute: op.commute }, opts);
  return recursiveDoublingAllreduce(pt, tag, objectFold(op, codec), value);
}
