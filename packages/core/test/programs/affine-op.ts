// A non-commutative user op for the collective test programs: the affine-map composition
// (a1, b1) op (a2, b2) = (a1 a2, a2 b1 + b2), associative but not commutative, so a result
// combined in any order but rank order is wrong. Items are pairs: contiguous(2, FLOAT64).
import * as MPI from '@tsmpi/core';

/** The pair datatype and the op; made after MPI.init, as every MPI object. */
export function affineOp(): { PAIR: MPI.Datatype; affine: MPI.Op } {
  const PAIR = MPI.Datatype.contiguous(2, MPI.FLOAT64).commit();
  const affine = MPI.Op.create((invec: Float64Array, inout: Float64Array) => {
    for (let i = 0; i < invec.length; i += 2) {
      const a1 = invec[i]!, b1 = invec[i + 1]!, a2 = inout[i]!, b2 = inout[i + 1]!;
      inout[i] = a1 * a2;
      inout[i + 1] = a2 * b1 + b2;
    }
  }, false);
  return { PAIR, affine };
}

/** Rank r's deterministic pair for item k. */
export const affineOf = (r: number, k: number): [number, number] => [(r + k) % 3 + 1, (r * 2 + k) % 5];

/** Item k combined over ranks from..to-1 in rank order: what a rank-ordered reduction must give. */
export function affineSeq(from: number, to: number, k: number): [number, number] {
  let acc = affineOf(from, k);
  for (let r = from + 1; r < to; r++) {
    const [a2, b2] = affineOf(r, k);
    acc = [acc[0] * a2, a2 * acc[1] + b2];
  }
  return acc;
}
