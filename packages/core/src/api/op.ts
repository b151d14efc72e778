/**
 * Reduction operations. Predefined ops carry the engine's op code; user ops
 * (Op.create) carry their function. byteOpOf turns an (op, datatype) pair
 * into the ByteOp the buffer collectives of coll/ apply to packed bytes,
 * after checking that MPI defines the pair (ERR_OP otherwise).
 */
import type { ByteOp } from '../coll/index.ts';
import { applyUserOp, checkOp, checkUserOp, isLocOp, byteReducer, typeSize, type OpCode } from '../datatype/index.ts';
import { ERR_COUNT, ERR_OP, mpiError } from '../util/index.ts';
import type { Datatype } from './datatype.ts';
import { OBJECT_KIND, type ObjectTable } from '../device/index.ts';
import { runtime, runtimeOrNull } from '../runtime/index.ts';

export type UserFunction = (invec: any, inoutvec: any, datatype: unknown) => void;

export class Op {
  readonly name: string;
  readonly _code: number;
  readonly _commute: boolean;
  readonly _fn: UserFunction | null;
  _freed = false;
  /** its OP record in the object table: made at Op.create (after init), at init for the predefined ops */
  _handle = 0;

  /** @internal */
  constructor(name: string, code: number, commute: boolean, fn: UserFunction | null) {
    this.name = name;
    this._code = code;
    this._commute = commute;
    this._fn = fn;
  }

  /**
   * A user op: fn(invec, inoutvec, datatype) must set inoutvec[i] = invec[i] op inoutvec[i].
   * @example const maxAbs = MPI.Op.create((a, b) => { for (let i = 0; i < a.length; i++) b[i] = Math.max(Math.abs(a[i]), Math.abs(b[i])); });
   */
  static create(fn: UserFunction, commute = true): Op {
    if (typeof fn !== 'function') throw mpiError(ERR_OP, 'Op.create', `fn is ${typeof fn}: expected a function (invec, inoutvec, datatype) => void`);
    if (typeof commute !== 'boolean') throw mpiError(ERR_OP, 'Op.create', `commute is ${typeof commute}: expected a boolean`);
    const op = new Op('user', 0, commute, fn);
    // An op made before init has no record (and no request can use it before init).
    op._handle = runtimeOrNull()?.device.lifetime.create(OBJECT_KIND.OP, [0, commute ? 1 : 0], null, 'Op.create') ?? 0;
    return op;
  }

  /**
   * User release; operations already started with the op still complete.
   * @throws MPIError(ERR_OP) for a predefined op.
   */
  free(): void {
    if (this._fn === null) throw mpiError(ERR_OP, 'Op.free', `${this.name} is predefined and cannot be freed`);
    if (this._freed) throw mpiError(ERR_OP, 'Op.free', `op ${this.name} has already been freed`);
    this._freed = true;
    if (this._handle !== 0) runtime('Op.free').device.lifetime.userFree(this._handle);
  }

  toString(): string {
    return `Op(${this.name})`;
  }
}

// Codes follow the datatype engine's op table.
export const SUM = new Op('SUM', 1, true, null);
export const PROD = new Op('PROD', 2, true, null);
export const MIN = new Op('MIN', 3, true, null);
export const MAX = new Op('MAX', 4, true, null);
export const LAND = new Op('LAND', 5, true, null);
export const LOR = new Op('LOR', 6, true, null);
export const LXOR = new Op('LXOR', 7, true, null);
export const BAND = new Op('BAND', 8, true, null);
export const BOR = new Op('BOR', 9, true, null);
export const BXOR = new Op('BXOR', 10, true, null);
export const MINLOC = new Op('MINLOC', 11, true, null);
export const MAXLOC = new Op('MAXLOC', 12, true, null);

const PREDEFINED_OPS = [SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC];

/**
 * The predefined ops' records (predefined bit set): made by init in the main thread (`objects`),
 * attached in worker threads (`handles`, as the main thread returned them).
 */
export function setupPredefinedOps(objects: ObjectTable | null, handles: readonly number[] = []): number[] {
  return PREDEFINED_OPS.map((op, i) => (op._handle = objects === null ? handles[i]! : objects.create(OBJECT_KIND.OP, true, [op._code, 1], null, 'init')));
}

/** What an op argument that is not an Op is, for its error: a missing op says that tsmpi has no default (mpi4py's is SUM). */
function notAnOp(op: unknown): string {
  if (op === undefined) return 'op is missing (undefined); there is no default op (mpi4py\'s is SUM)';
  if (op === null) return 'op is null';
  if (typeof op === 'string') return `op is the string ${JSON.stringify(op.length > 40 ? `${op.slice(0, 40)}...` : op)}`;
  if (typeof op === 'function') return `op is a function${op.name === '' ? '' : ` (${op.name})`}; wrap it with MPI.Op.create(fn, commute)`;
  if (typeof op === 'object') return `op is ${Array.isArray(op) ? 'an array' : 'an object'}`;
  return `op is the ${typeof op} ${String(op)}`;
}

/**
 * Checks an op argument of a new call.
 * @throws MPIError(ERR_OP) when it is not an Op or has been freed.
 */
export function checkOpArg(op: unknown, call: string): asserts op is Op {
  if (!(op instanceof Op)) throw mpiError(ERR_OP, call, `${notAnOp(op)}: expected an MPI.Op such as MPI.SUM`);
  if (op._freed) throw mpiError(ERR_OP, call, `op ${op.name} has been freed`);
}

// ByteOps of predefined (op, element type) pairs, built once: the small-message
// reductions are latency-bound, so no closure per call.
const PREDEFINED_BYTE_OPS: (ByteOp | undefined)[] = [];

/**
 * The ByteOp that applies `op` to packed items of `dt` (API.md "Datatype and Op").
 * Predefined ops work element-wise (MINLOC / MAXLOC on (value, index) pairs);
 * user ops get typed arrays of the element type and the Datatype, and are never
 * split inside an item.
 * @param packedBytes the bytes of the vector, checked against the pair size of MINLOC / MAXLOC.
 * @throws MPIError(ERR_OP) when MPI does not define op on dt's elements, or a user op meets a mixed struct.
 * @throws MPIError(ERR_COUNT) when MINLOC / MAXLOC gets an odd number of elements.
 */
export function byteOpOf(op: Op, dt: Datatype, packedBytes: number, call: string): ByteOp {
  checkOpArg(op, call);
  const type = dt._typeCode;
  const fn = op._fn;
  if (fn !== null) {
    checkUserOp(call, type);
    const elem = typeSize(type);
    return {
      combine: (a, b) => applyUserOp(fn, type, a, b, a.length / elem, dt),
      commute: op._commute,
      itemBytes: Math.max(dt._size, elem),
    };
  }
  const code = op._code as OpCode;
  checkOp(call, code, type);
  const elem = typeSize(type!);
  const loc = isLocOp(code);
  const unit = loc ? 2 * elem : elem;
  if (packedBytes % unit !== 0) {
    throw mpiError(ERR_COUNT, call, `${op.name} takes (value, index) pairs: the buffer holds ${packedBytes / elem} ${dt.name} elements, an odd number`);
  }
  const key = code * 16 + type!;
  let b = PREDEFINED_BYTE_OPS[key];
  if (b === undefined) {
    const t = type!;
    b = { combine: byteReducer(code, t), commute: true, itemBytes: unit };
    PREDEFINED_BYTE_OPS[key] = b;
  }
  return b;
}
