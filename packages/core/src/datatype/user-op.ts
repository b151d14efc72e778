/**
 * User-defined reduction ops (Op.create): the engine-level representation and
 * how the user function is called on packed buffers and on object values.
 *
 * Contract (API.md "Datatype and Op"): the function receives (invec,
 * inoutvec, datatype), two typed arrays of the datatype's element type and
 * equal length, and must leave `invec op inoutvec` in inoutvec. `invec` is
 * the left operand (lower ranks). Views alias the packed buffers when their
 * offset is aligned; otherwise the function gets fresh copies and inoutvec is
 * copied back. A user op on a struct with mixed element types is ERR_OP.
 * Exceptions thrown by the function propagate to the caller unchanged.
 */
import { ERR_ARG, ERR_OP, mpiError } from '../util/index.ts';
import { TYPE_CODES, typeCodeOfView, typeSize, type ElementArray, type TypeCode } from './predefined.ts';
import { alignedView, copyElements } from './reduce-local.ts';

/** The user's combining function: inoutvec[i] = invec[i] op inoutvec[i]. */
export type UserFunction = (invec: ElementArray, inoutvec: ElementArray, datatype: unknown) => void;

/** An op created with Op.create. */
export interface UserOp {
  readonly fn: UserFunction;
  /** False: the op is applied strictly in rank order. */
  readonly commute: boolean;
}

/**
 * Builds the engine record of a user op.
 * @param commute default true.
 * @throws MPIError(ERR_ARG) when fn is not a function or commute not a boolean.
 */
export function createUserOp(fn: UserFunction, commute = true): UserOp {
  if (typeof fn !== 'function') throw mpiError(ERR_ARG, 'Op.create', `the op must be a function, got ${typeof fn}`);
  if (typeof commute !== 'boolean') throw mpiError(ERR_ARG, 'Op.create', `commute must be a boolean, got ${typeof commute}`);
  return Object.freeze({ fn, commute });
}

/**
 * Checks that a user op can be applied to elements of `type`.
 * @throws MPIError(ERR_OP) when type is null (a struct with mixed element types).
 */
export function checkUserOp(call: string, type: TypeCode | null): asserts type is TypeCode {
  if (type === null) {
    throw mpiError(ERR_OP, call, 'a user-defined op cannot be applied to a struct datatype with mixed element types');
  }
}

/**
 * inout = in op inout with a user function, over `count` packed elements of `type`.
 * @param datatype what the function gets as its third argument (the API
 *   layer passes its Datatype); default: the type code.
 * @throws MPIError(ERR_OP) when type is null (call 'Op').
 */
export function applyUserOp(
  fn: UserFunction,
  type: TypeCode | null,
  inBytes: Uint8Array,
  inoutBytes: Uint8Array,
  count: number,
  datatype: unknown = type,
): void {
  checkUserOp('Op', type);
  const invec = alignedView(type, inBytes, count) ?? copyElements(type, inBytes, count);
  const aligned = alignedView(type, inoutBytes, count);
  const inoutvec = aligned ?? copyElements(type, inoutBytes, count);
  fn(invec, inoutvec, datatype);
  if (aligned === null) inoutBytes.set(new Uint8Array(inoutvec.buffer, 0, count * typeSize(type)));
}

/**
 * The object form: a op b with a user function (a from the lower rank).
 * Numbers go in as Float64Arrays of length 1, bigints as BigInt64Arrays of
 * length 1 (so values wrap to signed 64 bits); typed arrays of the same kind
 * and length are passed as they are and `b` is updated in place and returned.
 * @param datatype the function's third argument; default: the element type code.
 * @throws MPIError(ERR_OP) for other values, ERR_ARG for arrays that differ in kind or length.
 */
export function applyUserOpValues<T>(fn: UserFunction, a: T, b: T, call = 'reduce', datatype?: unknown): T {
  if (typeof a === 'number' && typeof b === 'number') {
    const out = Float64Array.of(b);
    fn(Float64Array.of(a), out, datatype === undefined ? TYPE_CODES.FLOAT64 : datatype);
    return out[0] as T;
  }
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    const out = BigInt64Array.of(b);
    fn(BigInt64Array.of(a), out, datatype === undefined ? TYPE_CODES.INT64 : datatype);
    return out[0] as T;
  }
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b) && !(a instanceof DataView) && !(b instanceof DataView)) {
    const ta = a as unknown as ElementArray;
    const tb = b as unknown as ElementArray;
    if (ta.constructor !== tb.constructor || ta.length !== tb.length) {
      throw mpiError(
        ERR_ARG,
        call,
        `values differ: ${ta.constructor.name}(${ta.length}) and ${tb.constructor.name}(${tb.length}); every rank must contribute the same kind and length`,
      );
    }
    fn(ta, tb, datatype === undefined ? typeCodeOfView(ta) : datatype);
    return b;
  }
  throw mpiError(ERR_OP, call, `a user-defined op applies to numbers, bigints or typed arrays, got ${describeKind(a)} and ${describeKind(b)}`);
}

/** 'number', 'Float64Array', 'array', 'null', ... for messages. */
export function describeKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (ArrayBuffer.isView(v)) return v.constructor.name;
  return typeof v;
}
