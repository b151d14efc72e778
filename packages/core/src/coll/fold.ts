/**
 * Fold: how the reduction skeletons (binomial reduce, recursive-doubling
 * allreduce, scan, exscan) see values, so one implementation serves both the
 * buffer collectives (packed bytes + ByteOp) and the object collectives
 * (values + ObjectOp + Codec).
 *
 * Invariants
 * - merge(mine, other, otherIsLower) returns `other op mine` when otherIsLower
 *   (other holds the reduction of lower ranks), else `mine op other`. For a
 *   commutative op the byte fold always writes into `mine`.
 * - Bytes: `mine` is owned by the algorithm (never a caller's send buffer),
 *   and `other` comes fresh from decode(); merge may write into either.
 *   Objects: ObjectOp.combine is pure, so values may be shared freely.
 * - The byte fold never writes into `other` when otherIsLower, so scan/exscan
 *   may use one received message twice (the byte decode is the identity).
 */
import { operandMismatch } from './mismatch.ts';
import type { ByteOp, Codec, CollPt2pt, ObjectOp } from './pt2pt.ts';

/** A value algebra for the reduction skeletons. */
export interface Fold<V> {
  readonly commute: boolean;
  merge(mine: V, other: V, otherIsLower: boolean): V;
  encode(value: V): Uint8Array;
  decode(bytes: Uint8Array): V;
  /** An independent copy (scan keeps a partial and a result). */
  clone(value: V): V;
}

/**
 * The fold over packed bytes. A class, not an object of closures: it is made once per call of
 * every small reduction, and the ranks run from source through tsx, whose keepNames helper
 * (`__name`, an Object.defineProperty) ran for each of four closures per call (issue 15: about
 * 6 µs per 8-byte allreduce in a CPU profile).
 */
class ByteFold implements Fold<Uint8Array> {
  readonly commute: boolean;
  readonly #op: ByteOp;
  readonly #pt: CollPt2pt;

  constructor(op: ByteOp, pt: CollPt2pt) {
    this.#op = op;
    this.#pt = pt;
    this.commute = op.commute;
  }

  merge(mine: Uint8Array, other: Uint8Array, otherIsLower: boolean): Uint8Array {
    if (other.length !== mine.length) throw operandMismatch(this.#pt, other.length, mine.length);
    if (otherIsLower || this.commute) {
      this.#op.combine(other, mine);
      return mine;
    }
    this.#op.combine(mine, other);
    return other;
  }

  encode(v: Uint8Array): Uint8Array {
    return v;
  }

  decode(b: Uint8Array): Uint8Array {
    return b;
  }

  clone(v: Uint8Array): Uint8Array {
    return v.slice();
  }
}

/** The fold over packed bytes. */
export function byteFold(op: ByteOp, pt: CollPt2pt): Fold<Uint8Array> {
  return new ByteFold(op, pt);
}

/** The fold over values moved with a caller-given codec. */
export function objectFold<T>(op: ObjectOp<T>, codec: Codec<T>): Fold<T> {
  return {
    commute: op.commute,
    merge: (mine, other, otherIsLower) => (otherIsLower ? op.combine(other, mine) : op.combine(mine, other)),
    encode: codec.encode,
    decode: codec.decode,
    clone: (v) => v, // ObjectOp.combine never modifies its arguments
  };
}
