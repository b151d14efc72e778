/**
 * Predefined ops on JavaScript values: the object forms of reduce, allreduce,
 * scan and exscan (API.md: numbers, bigints or typed arrays element-wise;
 * MINLOC / MAXLOC on [value, index] pairs or arrays of pairs).
 *
 * Order convention: reduceValues(op, a, b) computes `a op b` where `a` comes
 * from the lower rank, the same as reduceLocal's `inout = in op inout` with
 * in = a. For the predefined ops order matters only for ties of MINLOC /
 * MAXLOC, which keep the lower index whichever side it is on.
 *
 * Results: numbers and bigints give a new value (bigints do not wrap; numbers
 * follow JS arithmetic); booleans are accepted by the logical ops and give a
 * boolean; typed arrays are combined in place into `b`, which is returned
 * (same wrap rules as buffers); pairs give new pairs.
 */
import { ERR_ARG, ERR_COUNT, ERR_OP, mpiError } from '../util/index.ts';
import { checkOp, isOpCode, OP_CODES, opName, type OpCode } from './ops.ts';
import { typeCodeOfView } from './predefined.ts';
import { reduceLocal } from './reduce-local.ts';
import { describeKind } from './user-op.ts';

/** A MINLOC / MAXLOC operand: [value, index]. */
export type LocPair = readonly [value: number | bigint, index: number];

function isPair(v: unknown): v is LocPair {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    (typeof v[0] === 'number' || typeof v[0] === 'bigint') &&
    typeof v[1] === 'number'
  );
}

function locPair(op: OpCode, a: LocPair, b: LocPair): [number | bigint, number] {
  const u = a[0];
  const v = b[0];
  if (u === v) return [u, Math.min(a[1], b[1])];
  const isLeft = op === OP_CODES.MINLOC ? u < v : u > v;
  return isLeft ? [u, a[1]] : [v, b[1]];
}

function numberOp(call: string, op: OpCode, a: number, b: number): number {
  switch (op) {
    case OP_CODES.SUM:
      return a + b;
    case OP_CODES.PROD:
      return a * b;
    case OP_CODES.MIN:
      return a < b ? a : b;
    case OP_CODES.MAX:
      return a > b ? a : b;
    case OP_CODES.LAND:
      return a !== 0 && b !== 0 ? 1 : 0;
    case OP_CODES.LOR:
      return a !== 0 || b !== 0 ? 1 : 0;
    case OP_CODES.LXOR:
      return (a !== 0) !== (b !== 0) ? 1 : 0;
    case OP_CODES.BAND:
    case OP_CODES.BOR:
    case OP_CODES.BXOR: {
      if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) {
        throw mpiError(ERR_OP, call, `${opName(op)} needs integer values, got ${a} and ${b}`);
      }
      if ((a | 0) === a && (b | 0) === b) {
        return op === OP_CODES.BAND ? a & b : op === OP_CODES.BOR ? a | b : a ^ b;
      }
      return Number(bigintOp(call, op, BigInt(a), BigInt(b)));
    }
    default:
      throw mpiError(ERR_OP, call, `${opName(op)} needs [value, index] pairs, got numbers`);
  }
}

function bigintOp(call: string, op: OpCode, a: bigint, b: bigint): bigint {
  switch (op) {
    case OP_CODES.SUM:
      return a + b;
    case OP_CODES.PROD:
      return a * b;
    case OP_CODES.MIN:
      return a < b ? a : b;
    case OP_CODES.MAX:
      return a > b ? a : b;
    case OP_CODES.LAND:
      return a !== 0n && b !== 0n ? 1n : 0n;
    case OP_CODES.LOR:
      return a !== 0n || b !== 0n ? 1n : 0n;
    case OP_CODES.LXOR:
      return (a !== 0n) !== (b !== 0n) ? 1n : 0n;
    case OP_CODES.BAND:
      return a & b;
    case OP_CODES.BOR:
      return a | b;
    case OP_CODES.BXOR:
      return a ^ b;
    default:
      throw mpiError(ERR_OP, call, `${opName(op)} needs [value, index] pairs, got bigints`);
  }
}

function booleanOp(call: string, op: OpCode, a: boolean, b: boolean): boolean {
  switch (op) {
    case OP_CODES.LAND:
      return a && b;
    case OP_CODES.LOR:
      return a || b;
    case OP_CODES.LXOR:
      return a !== b;
    default:
      throw mpiError(ERR_OP, call, `${opName(op)} is not defined on booleans; LAND, LOR and LXOR are`);
  }
}

function viewOp(call: string, op: OpCode, a: ArrayBufferView, b: ArrayBufferView): void {
  const code = typeCodeOfView(a);
  if (code === null || a.constructor !== b.constructor || a.byteLength !== b.byteLength) {
    throw mpiError(
      ERR_ARG,
      call,
      `values differ: ${a.constructor.name} of ${a.byteLength} bytes and ${b.constructor.name} of ${b.byteLength} bytes; every rank must contribute the same kind and length`,
    );
  }
  checkOp(call, op, code);
  const aBytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const bBytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  const elemBytes = 'BYTES_PER_ELEMENT' in a ? (a.BYTES_PER_ELEMENT as number) : 1;
  let count = a.byteLength / elemBytes;
  if (op === OP_CODES.MINLOC || op === OP_CODES.MAXLOC) {
    if (count % 2 !== 0) {
      throw mpiError(ERR_COUNT, call, `${opName(op)} needs interleaved (value, index) pairs, but the array has odd length ${count}`);
    }
    count /= 2;
  }
  reduceLocal(op, code, aBytes, bBytes, count);
}

/**
 * `a op b` for a predefined op on object values (a from the lower rank).
 * @param call the public call, for messages; default 'reduce'.
 * @returns a new number, bigint, boolean or pair (array of pairs); for typed
 *   arrays and DataViews, `b` after combining in place.
 * @throws MPIError(ERR_OP) when op is not a predefined op or not defined on the values.
 * @throws MPIError(ERR_ARG) when typed arrays or pair arrays differ in kind or length.
 * @throws MPIError(ERR_COUNT) for MINLOC / MAXLOC on a typed array of odd length.
 */
export function reduceValues<T>(op: number, a: T, b: T, call = 'reduce'): T {
  if (!isOpCode(op)) throw mpiError(ERR_OP, call, `${op} is not a predefined op`);
  const isLoc = op === OP_CODES.MINLOC || op === OP_CODES.MAXLOC;
  if (typeof a === 'number' && typeof b === 'number') return numberOp(call, op, a, b) as T;
  if (typeof a === 'bigint' && typeof b === 'bigint') return bigintOp(call, op, a, b) as T;
  if (typeof a === 'boolean' && typeof b === 'boolean') return booleanOp(call, op, a, b) as T;
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    viewOp(call, op, a, b);
    return b;
  }
  if (isLoc) {
    if (isPair(a) && isPair(b)) return locPair(op, a, b) as T;
    if (Array.isArray(a) && Array.isArray(b) && a.every(isPair) && b.every(isPair)) {
      if (a.length !== b.length) {
        throw mpiError(ERR_ARG, call, `arrays of pairs differ in length: ${a.length} and ${b.length}`);
      }
      return a.map((p: LocPair, i) => locPair(op, p, b[i] as LocPair)) as T;
    }
    throw mpiError(ERR_OP, call, `${opName(op)} needs [value, index] pairs or arrays of them, got ${describeKind(a)} and ${describeKind(b)}`);
  }
  throw mpiError(
    ERR_OP,
    call,
    `${opName(op)} applies to numbers, bigints or typed arrays of one kind, got ${describeKind(a)} and ${describeKind(b)}`,
  );
}
