/**
 * The predefined (primitive) datatypes: their stable codes, sizes, names and
 * the typed-array kinds that hold them.
 *
 * Contract: a type code is a small integer that never changes between
 * releases; handles and wire headers carry it. Codes start at 1 so that 0 can
 * mean "no primitive type" (a mixed struct) in packed tables. Aliases (CHAR,
 * SHORT, INT, LONG, FLOAT, DOUBLE) are the same datatype as their target, so
 * they share its code. Pure data: safe in every thread.
 */

/** Stable code per predefined datatype. */
export const TYPE_CODES = {
  INT8: 1,
  UINT8: 2,
  INT16: 3,
  UINT16: 4,
  INT32: 5,
  UINT32: 6,
  INT64: 7,
  UINT64: 8,
  FLOAT32: 9,
  FLOAT64: 10,
  BYTE: 11,
} as const;

/** Name of a predefined datatype (without aliases). */
export type TypeName = keyof typeof TYPE_CODES;
/** Code of a predefined datatype. */
export type TypeCode = (typeof TYPE_CODES)[TypeName];

/** The aliases of API.md; each is the same datatype as its target. */
export const TYPE_ALIASES = {
  CHAR: 'INT8',
  SHORT: 'INT16',
  INT: 'INT32',
  LONG: 'INT64',
  FLOAT: 'FLOAT32',
  DOUBLE: 'FLOAT64',
} as const satisfies Record<string, TypeName>;

/** Every predefined name of API.md, aliases included, with its code. */
export const PREDEFINED_DATATYPES: Readonly<Record<TypeName | keyof typeof TYPE_ALIASES, TypeCode>> = Object.freeze({
  ...TYPE_CODES,
  CHAR: TYPE_CODES.INT8,
  SHORT: TYPE_CODES.INT16,
  INT: TYPE_CODES.INT32,
  LONG: TYPE_CODES.INT64,
  FLOAT: TYPE_CODES.FLOAT32,
  DOUBLE: TYPE_CODES.FLOAT64,
});

/** All codes in ascending order. */
export const ALL_TYPE_CODES: readonly TypeCode[] = Object.freeze(Object.values(TYPE_CODES).sort((a, b) => a - b));

/** A typed-array constructor able to view the elements of a predefined type. */
export type ElementArrayConstructor =
  | Int8ArrayConstructor
  | Uint8ArrayConstructor
  | Int16ArrayConstructor
  | Uint16ArrayConstructor
  | Int32ArrayConstructor
  | Uint32ArrayConstructor
  | BigInt64ArrayConstructor
  | BigUint64ArrayConstructor
  | Float32ArrayConstructor
  | Float64ArrayConstructor;

/** A typed array of one of the predefined element kinds. */
export type ElementArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

interface TypeInfo {
  readonly name: TypeName;
  readonly size: number;
  readonly array: ElementArrayConstructor;
  readonly isInteger: boolean;
  readonly isFloat: boolean;
  readonly isBigInt: boolean;
}

const INFO: readonly (TypeInfo | undefined)[] = (() => {
  const t: (TypeInfo | undefined)[] = [];
  const row = (name: TypeName, size: number, array: ElementArrayConstructor, kind: 'int' | 'float' | 'bigint' | 'byte'): void => {
    t[TYPE_CODES[name]] = Object.freeze({
      name,
      size,
      array,
      isInteger: kind === 'int' || kind === 'bigint',
      isFloat: kind === 'float',
      isBigInt: kind === 'bigint',
    });
  };
  row('INT8', 1, Int8Array, 'int');
  row('UINT8', 1, Uint8Array, 'int');
  row('INT16', 2, Int16Array, 'int');
  row('UINT16', 2, Uint16Array, 'int');
  row('INT32', 4, Int32Array, 'int');
  row('UINT32', 4, Uint32Array, 'int');
  row('INT64', 8, BigInt64Array, 'bigint');
  row('UINT64', 8, BigUint64Array, 'bigint');
  row('FLOAT32', 4, Float32Array, 'float');
  row('FLOAT64', 8, Float64Array, 'float');
  row('BYTE', 1, Uint8Array, 'byte');
  return t;
})();

function info(code: number): TypeInfo {
  const i = INFO[code];
  if (i === undefined) throw new RangeError(`not a predefined type code: ${code}`);
  return i;
}

/** True when `code` is one of TYPE_CODES. */
export function isTypeCode(code: unknown): code is TypeCode {
  return typeof code === 'number' && INFO[code] !== undefined;
}

/** Size in bytes of one element of a predefined type (also its alignment). */
export function typeSize(code: TypeCode): number {
  return info(code).size;
}

/** 'INT32' for TYPE_CODES.INT32. */
export function typeName(code: TypeCode): TypeName {
  return info(code).name;
}

/** The typed-array constructor that views elements of `code` (BYTE: Uint8Array). */
export function elementArrayOf(code: TypeCode): ElementArrayConstructor {
  return info(code).array;
}

/** True for the signed and unsigned integer types, 64-bit included (not BYTE). */
export function isIntegerType(code: TypeCode): boolean {
  return info(code).isInteger;
}

/** True for FLOAT32 and FLOAT64. */
export function isFloatType(code: TypeCode): boolean {
  return info(code).isFloat;
}

/** True for INT64 and UINT64, whose elements are bigints. */
export function isBigIntType(code: TypeCode): boolean {
  return info(code).isBigInt;
}

const CODE_BY_VIEW = new Map<unknown, TypeCode>([
  [Int8Array, TYPE_CODES.INT8],
  [Uint8Array, TYPE_CODES.UINT8],
  [Uint8ClampedArray, TYPE_CODES.UINT8],
  [Int16Array, TYPE_CODES.INT16],
  [Uint16Array, TYPE_CODES.UINT16],
  [Int32Array, TYPE_CODES.INT32],
  [Uint32Array, TYPE_CODES.UINT32],
  [BigInt64Array, TYPE_CODES.INT64],
  [BigUint64Array, TYPE_CODES.UINT64],
  [Float32Array, TYPE_CODES.FLOAT32],
  [Float64Array, TYPE_CODES.FLOAT64],
  [DataView, TYPE_CODES.BYTE],
]);

/**
 * The predefined type of a typed-array kind: Int8Array -> INT8, Uint8Array and
 * Uint8ClampedArray -> UINT8, ..., BigUint64Array -> UINT64, DataView -> BYTE.
 * Subclasses map like their nearest known ancestor.
 * @returns the code, or null for an unknown view kind (for example Float16Array).
 */
export function typeCodeOfView(view: ArrayBufferView): TypeCode | null {
  let proto: unknown = Object.getPrototypeOf(view);
  while (proto !== null && proto !== undefined) {
    const code = CODE_BY_VIEW.get((proto as { constructor: unknown }).constructor);
    if (code !== undefined) return code;
    proto = Object.getPrototypeOf(proto);
  }
  return null;
}
