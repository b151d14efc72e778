/**
 * The predefined reduction operations: stable codes, names, and which
 * (op, datatype) pairs MPI allows (MPI 3.1 §5.9.2):
 *
 *   SUM PROD MIN MAX   integer types (8..64-bit, signed and unsigned) and FLOAT32/64
 *   LAND LOR LXOR      integer types (C semantics: nonzero is true, result 0 or 1)
 *   BAND BOR BXOR      integer types and BYTE
 *   MINLOC MAXLOC      interleaved (value, index) pairs of FLOAT64 or INT32
 *
 * Everything else, and any op on a mixed struct (no single element type), is
 * MPIError(ERR_OP). Codes start at 1; user ops get codes from the API layer's
 * object table, above FIRST_USER_OP_CODE.
 */
import { ERR_OP, mpiError } from '../util/index.ts';
import { isFloatType, isIntegerType, TYPE_CODES, typeName, type TypeCode } from './predefined.ts';

/** Stable code per predefined op. */
export const OP_CODES = {
  SUM: 1,
  PROD: 2,
  MIN: 3,
  MAX: 4,
  LAND: 5,
  LOR: 6,
  LXOR: 7,
  BAND: 8,
  BOR: 9,
  BXOR: 10,
  MINLOC: 11,
  MAXLOC: 12,
} as const;

/** Name of a predefined op. */
export type OpName = keyof typeof OP_CODES;
/** Code of a predefined op. */
export type OpCode = (typeof OP_CODES)[OpName];

/** Codes below this are predefined ops; the API layer numbers user ops from here. */
export const FIRST_USER_OP_CODE = 64;

/** All predefined op codes in ascending order. */
export const ALL_OP_CODES: readonly OpCode[] = Object.freeze(Object.values(OP_CODES).sort((a, b) => a - b));

const NAMES: readonly (OpName | undefined)[] = (() => {
  const t: (OpName | undefined)[] = [];
  for (const [name, code] of Object.entries(OP_CODES)) t[code] = name as OpName;
  return t;
})();

/** True when `code` is one of OP_CODES. */
export function isOpCode(code: unknown): code is OpCode {
  return typeof code === 'number' && NAMES[code] !== undefined;
}

/** 'SUM' for OP_CODES.SUM. */
export function opName(code: OpCode): OpName {
  const n = NAMES[code];
  if (n === undefined) throw new RangeError(`not a predefined op code: ${code}`);
  return n;
}

/** True for MINLOC and MAXLOC, whose elements are (value, index) pairs. */
export function isLocOp(code: OpCode): boolean {
  return code === OP_CODES.MINLOC || code === OP_CODES.MAXLOC;
}

/** Whether MPI allows `op` on elements of type `type`; null type (mixed struct) is never allowed. */
export function isOpAllowed(op: OpCode, type: TypeCode | null): boolean {
  if (type === null || !isOpCode(op)) return false;
  switch (op) {
    case OP_CODES.SUM:
    case OP_CODES.PROD:
    case OP_CODES.MIN:
    case OP_CODES.MAX:
      return isIntegerType(type) || isFloatType(type);
    case OP_CODES.LAND:
    case OP_CODES.LOR:
    case OP_CODES.LXOR:
      return isIntegerType(type);
    case OP_CODES.BAND:
    case OP_CODES.BOR:
    case OP_CODES.BXOR:
      return isIntegerType(type) || type === TYPE_CODES.BYTE;
    case OP_CODES.MINLOC:
    case OP_CODES.MAXLOC:
      return type === TYPE_CODES.FLOAT64 || type === TYPE_CODES.INT32;
  }
}

const ALLOWED_TEXT: Readonly<Record<OpName, string>> = {
  SUM: 'integer and floating-point types',
  PROD: 'integer and floating-point types',
  MIN: 'integer and floating-point types',
  MAX: 'integer and floating-point types',
  LAND: 'integer types',
  LOR: 'integer types',
  LXOR: 'integer types',
  BAND: 'integer types and BYTE',
  BOR: 'integer types and BYTE',
  BXOR: 'integer types and BYTE',
  MINLOC: '(value, index) pairs of FLOAT64 or INT32',
  MAXLOC: '(value, index) pairs of FLOAT64 or INT32',
};

/**
 * Checks that `op` may reduce elements of `type`.
 * @param call the public call, for the message ('Allreduce').
 * @param type the datatype's element type; null for a mixed struct.
 * @throws MPIError(ERR_OP) when op is not a predefined op code, or MPI does not define it on the type.
 */
export function checkOp(call: string, op: number, type: TypeCode | null): void {
  if (!isOpCode(op)) throw mpiError(ERR_OP, call, `${op} is not a predefined op`);
  if (isOpAllowed(op, type)) return;
  const name = opName(op);
  const typeText = type === null ? 'a struct datatype with mixed element types' : typeName(type);
  throw mpiError(ERR_OP, call, `${name} is not defined on ${typeText}; it applies to ${ALLOWED_TEXT[name]}`);
}
