/**
 * The public Datatype: predefined types now; derived types wrap the datatype
 * engine (datatype/).
 */
import { ERR_TYPE, mpiError } from '../util/index.ts';

type ElementCtor =
  | Int8ArrayConstructor | Uint8ArrayConstructor | Int16ArrayConstructor | Uint16ArrayConstructor
  | Int32ArrayConstructor | Uint32ArrayConstructor | BigInt64ArrayConstructor | BigUint64ArrayConstructor
  | Float32ArrayConstructor | Float64ArrayConstructor;

export class Datatype {
  readonly name: string;
  /** stable code of a predefined type (0 for derived types) */
  readonly _code: number;
  /** bytes of data in one item */
  readonly _size: number;
  readonly _extent: number;
  readonly _lb: number;
  readonly _predefined: boolean;
  /** the typed array that views one element of a homogeneous type */
  readonly _element: ElementCtor | null;
  _committed: boolean;
  _freed = false;

  constructor(name: string, code: number, size: number, extent: number, lb: number, element: ElementCtor | null, predefined: boolean) {
    this.name = name;
    this._code = code;
    this._size = size;
    this._extent = extent;
    this._lb = lb;
    this._element = element;
    this._predefined = predefined;
    this._committed = predefined;
  }

  /** Bytes of data in one item (MPI_Type_size). */
  get size(): number {
    return this._size;
  }
  /** Span of one item in the buffer (MPI_Type_get_extent). */
  get extent(): number {
    return this._extent;
  }
  get lowerBound(): number {
    return this._lb;
  }

  /** Makes a derived type usable in communication. */
  commit(): Datatype {
    this._committed = true;
    return this;
  }

  /** User release; pending operations keep the type usable. Predefined types cannot be freed. */
  free(): void {
    if (this._predefined) throw mpiError(ERR_TYPE, 'Datatype.free', `${this.name} is predefined and cannot be freed`);
    this._freed = true;
  }

  /** @internal Whole items in `bytes`, or `undefinedValue`. */
  _countOf(bytes: number, undefinedValue: number): number {
    if (this._size === 0) return bytes === 0 ? 0 : undefinedValue;
    return bytes % this._size === 0 ? bytes / this._size : undefinedValue;
  }

  toString(): string {
    return `Datatype(${this.name})`;
  }
}

function predefined(name: string, code: number, size: number, element: ElementCtor): Datatype {
  return new Datatype(name, code, size, size, 0, element, true);
}

// Codes follow datatype/predefined.ts (TYPE_CODES).
export const INT8 = predefined('INT8', 1, 1, Int8Array);
export const UINT8 = predefined('UINT8', 2, 1, Uint8Array);
export const INT16 = predefined('INT16', 3, 2, Int16Array);
export const UINT16 = predefined('UINT16', 4, 2, Uint16Array);
export const INT32 = predefined('INT32', 5, 4, Int32Array);
export const UINT32 = predefined('UINT32', 6, 4, Uint32Array);
export const INT64 = predefined('INT64', 7, 8, BigInt64Array);
export const UINT64 = predefined('UINT64', 8, 8, BigUint64Array);
export const FLOAT32 = predefined('FLOAT32', 9, 4, Float32Array);
export const FLOAT64 = predefined('FLOAT64', 10, 8, Float64Array);
export const BYTE = predefined('BYTE', 11, 1, Uint8Array);

/** The predefined type of a typed array (DataView: BYTE). */
export function datatypeOfView(view: ArrayBufferView): Datatype {
  if (view instanceof Uint8Array || view instanceof Uint8ClampedArray) return UINT8;
  if (view instanceof Float64Array) return FLOAT64;
  if (view instanceof Int32Array) return INT32;
  if (view instanceof Float32Array) return FLOAT32;
  if (view instanceof Int8Array) return INT8;
  if (view instanceof Int16Array) return INT16;
  if (view instanceof Uint16Array) return UINT16;
  if (view instanceof Uint32Array) return UINT32;
  if (view instanceof BigInt64Array) return INT64;
  if (view instanceof BigUint64Array) return UINT64;
  return BYTE;
}
