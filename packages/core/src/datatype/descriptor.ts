/**
 * Type descriptors: the plain, serializable description of a datatype, and
 * the validating constructors that build them (MPI 3.1 §4.1.2-4.1.7).
 *
 * Contract: a TypeDescriptor is the constructor kind plus its arguments, with
 * the base types embedded as nested descriptors. It holds no functions, maps
 * or caches, so it can be encoded (descriptor-codec.ts) into a
 * SharedArrayBuffer object table and rebuilt in another thread, where
 * type-map.ts derives the flattened layout again. Descriptors are frozen.
 *
 * The create* functions check their arguments and throw MPIError naming the
 * public call ('Datatype.vector'), the argument and the allowed range. They
 * do not check that a base datatype is still alive (not freed): the API layer
 * does that with record.ts before it passes `record.descriptor` here.
 */
import { ERR_ARG, ERR_COUNT, ERR_TYPE, mpiError } from '../util/index.ts';
import { isTypeCode, typeName, type TypeCode } from './predefined.ts';

/** A predefined type, by code. */
export interface PredefinedDescriptor {
  readonly kind: 'predefined';
  readonly code: TypeCode;
}
/** MPI_Type_contiguous. */
export interface ContiguousDescriptor {
  readonly kind: 'contiguous';
  readonly count: number;
  readonly base: TypeDescriptor;
}
/** MPI_Type_vector: stride in multiples of the base extent. */
export interface VectorDescriptor {
  readonly kind: 'vector';
  readonly count: number;
  readonly blocklength: number;
  readonly stride: number;
  readonly base: TypeDescriptor;
}
/** MPI_Type_create_hvector: stride in bytes. */
export interface HvectorDescriptor {
  readonly kind: 'hvector';
  readonly count: number;
  readonly blocklength: number;
  readonly strideBytes: number;
  readonly base: TypeDescriptor;
}
/** MPI_Type_indexed: displacements in multiples of the base extent. */
export interface IndexedDescriptor {
  readonly kind: 'indexed';
  readonly blocklengths: readonly number[];
  readonly displacements: readonly number[];
  readonly base: TypeDescriptor;
}
/** MPI_Type_create_struct: displacements in bytes. */
export interface StructDescriptor {
  readonly kind: 'struct';
  readonly blocklengths: readonly number[];
  readonly byteDisplacements: readonly number[];
  readonly types: readonly TypeDescriptor[];
}
/** MPI_Type_create_subarray. */
export interface SubarrayDescriptor {
  readonly kind: 'subarray';
  readonly sizes: readonly number[];
  readonly subsizes: readonly number[];
  readonly starts: readonly number[];
  readonly order: 'C' | 'F';
  readonly base: TypeDescriptor;
}
/** MPI_Type_create_resized. */
export interface ResizedDescriptor {
  readonly kind: 'resized';
  readonly base: TypeDescriptor;
  readonly lowerBound: number;
  readonly extent: number;
}

/** The plain-data description of any datatype. */
export type TypeDescriptor =
  | PredefinedDescriptor
  | ContiguousDescriptor
  | VectorDescriptor
  | HvectorDescriptor
  | IndexedDescriptor
  | StructDescriptor
  | SubarrayDescriptor
  | ResizedDescriptor;

/** The constructor kinds. */
export type DescriptorKind = TypeDescriptor['kind'];

const PREDEFINED: PredefinedDescriptor[] = [];

/**
 * The (shared, frozen) descriptor of a predefined type.
 * @throws MPIError(ERR_TYPE) when `code` is not a predefined type code.
 */
export function predefinedDescriptor(code: number): PredefinedDescriptor {
  if (!isTypeCode(code)) throw mpiError(ERR_TYPE, 'Datatype', `${String(code)} is not a predefined datatype code`);
  let d = PREDEFINED[code];
  if (d === undefined) {
    d = Object.freeze({ kind: 'predefined', code });
    PREDEFINED[code] = d;
  }
  return d;
}

// ---------------------------------------------------------------- argument checks

function checkNonNegative(call: string, errorClass: number, what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw mpiError(errorClass, call, `${what} must be an integer >= 0, got ${describeValue(value)}`);
  }
  return value;
}

function checkInteger(call: string, what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw mpiError(ERR_ARG, call, `${what} must be an integer, got ${describeValue(value)}`);
  }
  return value;
}

function checkArray(call: string, what: string, value: unknown): readonly unknown[] {
  if (!Array.isArray(value)) throw mpiError(ERR_ARG, call, `${what} must be an array, got ${describeValue(value)}`);
  return value;
}

function checkSameLength(call: string, names: readonly string[], arrays: readonly (readonly unknown[])[]): void {
  const n = arrays[0]!.length;
  for (let i = 1; i < arrays.length; i++) {
    if (arrays[i]!.length !== n) {
      throw mpiError(
        ERR_ARG,
        call,
        `${names[i]} has ${arrays[i]!.length} entries but ${names[0]} has ${n}; they must have the same length`,
      );
    }
  }
}

function checkBase(call: string, what: string, value: unknown): TypeDescriptor {
  if (typeof value !== 'object' || value === null || typeof (value as { kind?: unknown }).kind !== 'string') {
    throw mpiError(ERR_TYPE, call, `${what} must be a datatype, got ${describeValue(value)}`);
  }
  return value as TypeDescriptor;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

function nonNegativeList(call: string, what: string, errorClass: number, list: readonly unknown[]): number[] {
  return list.map((v, i) => checkNonNegative(call, errorClass, `${what}[${i}]`, v));
}

function integerList(call: string, what: string, list: readonly unknown[]): number[] {
  return list.map((v, i) => checkInteger(call, `${what}[${i}]`, v));
}

// ---------------------------------------------------------------- constructors

/**
 * MPI_Type_contiguous: `count` copies of `base`, each one base extent after the last.
 * @throws MPIError(ERR_COUNT) when count is not an integer >= 0.
 * @throws MPIError(ERR_TYPE) when base is not a descriptor.
 */
export function createContiguous(count: number, base: TypeDescriptor): ContiguousDescriptor {
  const call = 'Datatype.contiguous';
  checkNonNegative(call, ERR_COUNT, 'count', count);
  return Object.freeze({ kind: 'contiguous', count, base: checkBase(call, 'base', base) });
}

/**
 * MPI_Type_vector: `count` blocks of `blocklength` base items, block starts
 * `stride` base extents apart (stride may be negative or zero).
 * @throws MPIError(ERR_COUNT) when count is not an integer >= 0.
 * @throws MPIError(ERR_ARG) when blocklength is not an integer >= 0 or stride is not an integer.
 * @throws MPIError(ERR_TYPE) when base is not a descriptor.
 */
export function createVector(count: number, blocklength: number, stride: number, base: TypeDescriptor): VectorDescriptor {
  const call = 'Datatype.vector';
  checkNonNegative(call, ERR_COUNT, 'count', count);
  checkNonNegative(call, ERR_ARG, 'blocklength', blocklength);
  checkInteger(call, 'stride', stride);
  return Object.freeze({ kind: 'vector', count, blocklength, stride, base: checkBase(call, 'base', base) });
}

/**
 * MPI_Type_create_hvector: like vector, with the stride in bytes.
 * @throws MPIError(ERR_COUNT) when count is not an integer >= 0.
 * @throws MPIError(ERR_ARG) when blocklength is not an integer >= 0 or strideBytes is not an integer.
 * @throws MPIError(ERR_TYPE) when base is not a descriptor.
 */
export function createHvector(count: number, blocklength: number, strideBytes: number, base: TypeDescriptor): HvectorDescriptor {
  const call = 'Datatype.hvector';
  checkNonNegative(call, ERR_COUNT, 'count', count);
  checkNonNegative(call, ERR_ARG, 'blocklength', blocklength);
  checkInteger(call, 'strideBytes', strideBytes);
  return Object.freeze({ kind: 'hvector', count, blocklength, strideBytes, base: checkBase(call, 'base', base) });
}

/**
 * MPI_Type_indexed: block i holds blocklengths[i] base items starting at
 * displacements[i] base extents (displacements may be negative, in any order).
 * @throws MPIError(ERR_ARG) when the arrays differ in length, a blocklength is
 *   not an integer >= 0 or a displacement is not an integer.
 * @throws MPIError(ERR_TYPE) when base is not a descriptor.
 */
export function createIndexed(
  blocklengths: readonly number[],
  displacements: readonly number[],
  base: TypeDescriptor,
): IndexedDescriptor {
  const call = 'Datatype.indexed';
  const bl = checkArray(call, 'blocklengths', blocklengths);
  const dl = checkArray(call, 'displacements', displacements);
  checkSameLength(call, ['blocklengths', 'displacements'], [bl, dl]);
  return Object.freeze({
    kind: 'indexed',
    blocklengths: Object.freeze(nonNegativeList(call, 'blocklengths', ERR_ARG, bl)),
    displacements: Object.freeze(integerList(call, 'displacements', dl)),
    base: checkBase(call, 'base', base),
  });
}

/**
 * MPI_Type_create_struct: block i holds blocklengths[i] items of types[i]
 * starting at byteDisplacements[i] bytes.
 * @throws MPIError(ERR_ARG) when the arrays differ in length, a blocklength is
 *   not an integer >= 0 or a displacement is not an integer.
 * @throws MPIError(ERR_TYPE) when an entry of types is not a descriptor.
 */
export function createStruct(
  blocklengths: readonly number[],
  byteDisplacements: readonly number[],
  types: readonly TypeDescriptor[],
): StructDescriptor {
  const call = 'Datatype.struct';
  const bl = checkArray(call, 'blocklengths', blocklengths);
  const dl = checkArray(call, 'byteDisplacements', byteDisplacements);
  const tl = checkArray(call, 'types', types);
  checkSameLength(call, ['blocklengths', 'byteDisplacements', 'types'], [bl, dl, tl]);
  return Object.freeze({
    kind: 'struct',
    blocklengths: Object.freeze(nonNegativeList(call, 'blocklengths', ERR_ARG, bl)),
    byteDisplacements: Object.freeze(integerList(call, 'byteDisplacements', dl)),
    types: Object.freeze(tl.map((t, i) => checkBase(call, `types[${i}]`, t))),
  });
}

/**
 * MPI_Type_create_subarray: the block subsizes[] at starts[] of an array of
 * sizes[] base items, in row-major ('C') or column-major ('F') order. The
 * result has lower bound 0 and extent product(sizes) * extent(base), so
 * consecutive items are consecutive whole arrays. A subsize of 0 is allowed
 * (an empty piece, as MPI 4.0 permits).
 * @throws MPIError(ERR_ARG) when the arrays are empty or differ in length, a
 *   size is < 1, a subsize is outside 0..size, a start is outside
 *   0..size-subsize, or order is not 'C' or 'F'.
 * @throws MPIError(ERR_TYPE) when base is not a descriptor.
 */
export function createSubarray(
  sizes: readonly number[],
  subsizes: readonly number[],
  starts: readonly number[],
  order: 'C' | 'F',
  base: TypeDescriptor,
): SubarrayDescriptor {
  const call = 'Datatype.subarray';
  const sl = checkArray(call, 'sizes', sizes);
  const ssl = checkArray(call, 'subsizes', subsizes);
  const stl = checkArray(call, 'starts', starts);
  if (sl.length === 0) throw mpiError(ERR_ARG, call, 'sizes must have at least one dimension');
  checkSameLength(call, ['sizes', 'subsizes', 'starts'], [sl, ssl, stl]);
  const sz = sl.map((v, i) => {
    const n = checkNonNegative(call, ERR_ARG, `sizes[${i}]`, v);
    if (n < 1) throw mpiError(ERR_ARG, call, `sizes[${i}] must be >= 1, got ${n}`);
    return n;
  });
  const sub = ssl.map((v, i) => {
    const n = checkNonNegative(call, ERR_ARG, `subsizes[${i}]`, v);
    if (n > sz[i]!) throw mpiError(ERR_ARG, call, `subsizes[${i}] must be in 0..${sz[i]} (sizes[${i}]), got ${n}`);
    return n;
  });
  const st = stl.map((v, i) => {
    const n = checkNonNegative(call, ERR_ARG, `starts[${i}]`, v);
    const max = sz[i]! - sub[i]!;
    if (n > max) throw mpiError(ERR_ARG, call, `starts[${i}] must be in 0..${max} (sizes[${i}] - subsizes[${i}]), got ${n}`);
    return n;
  });
  if (order !== 'C' && order !== 'F') throw mpiError(ERR_ARG, call, `order must be 'C' or 'F', got ${describeValue(order)}`);
  return Object.freeze({
    kind: 'subarray',
    sizes: Object.freeze(sz),
    subsizes: Object.freeze(sub),
    starts: Object.freeze(st),
    order,
    base: checkBase(call, 'base', base),
  });
}

/**
 * MPI_Type_create_resized: `base` with its lower bound set to lowerBound and
 * its extent to extent (the old bounds markers are erased).
 * @throws MPIError(ERR_ARG) when lowerBound is not an integer or extent is not an integer >= 0.
 * @throws MPIError(ERR_TYPE) when base is not a descriptor.
 */
export function createResized(base: TypeDescriptor, lowerBound: number, extent: number): ResizedDescriptor {
  const call = 'Datatype.resized';
  checkInteger(call, 'lowerBound', lowerBound);
  checkNonNegative(call, ERR_ARG, 'extent', extent);
  return Object.freeze({ kind: 'resized', base: checkBase(call, 'base', base), lowerBound, extent });
}

/**
 * A short readable form for messages: "vector(2, 3, 4, INT32)".
 * Long argument lists are cut after 8 entries.
 */
export function descriptorToString(d: TypeDescriptor): string {
  const list = (a: readonly number[]): string =>
    a.length <= 8 ? `[${a.join(', ')}]` : `[${a.slice(0, 8).join(', ')}, ... (${a.length})]`;
  switch (d.kind) {
    case 'predefined':
      return typeName(d.code);
    case 'contiguous':
      return `contiguous(${d.count}, ${descriptorToString(d.base)})`;
    case 'vector':
      return `vector(${d.count}, ${d.blocklength}, ${d.stride}, ${descriptorToString(d.base)})`;
    case 'hvector':
      return `hvector(${d.count}, ${d.blocklength}, ${d.strideBytes}, ${descriptorToString(d.base)})`;
    case 'indexed':
      return `indexed(${list(d.blocklengths)}, ${list(d.displacements)}, ${descriptorToString(d.base)})`;
    case 'struct': {
      const types = d.types.length <= 8 ? d.types.map(descriptorToString).join(', ') : `... (${d.types.length})`;
      return `struct(${list(d.blocklengths)}, ${list(d.byteDisplacements)}, [${types}])`;
    }
    case 'subarray':
      return `subarray(${list(d.sizes)}, ${list(d.subsizes)}, ${list(d.starts)}, '${d.order}', ${descriptorToString(d.base)})`;
    case 'resized':
      return `resized(${descriptorToString(d.base)}, ${d.lowerBound}, ${d.extent})`;
  }
}
