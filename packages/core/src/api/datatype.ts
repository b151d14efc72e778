/**
 * The public Datatype (API.md "Datatype and Op"): a thin wrapper over the
 * datatype engine's DatatypeRecord (datatype/record.ts), which holds the
 * descriptor and the committed / freed flags.
 *
 * Predefined types are committed records shared by every thread; derived
 * types are built by the static constructors (contiguous, vector, hvector,
 * indexed, struct, subarray, resized) and must be committed before they are
 * used in communication. free() is the user's release: an operation already
 * started with the type keeps its own reference (the request's closure holds
 * the type map, and the request references the DATATYPE record,
 * device/lifetime.ts), so it completes with the right layout; new calls get
 * ERR_TYPE. Every type made after init has its record from creation (its blob
 * is the encoded descriptor, which other threads revive the type from); the
 * predefined ones get theirs at init.
 */
import {
  DatatypeRecord, checkConstructible, countItems, createContiguous, createHvector, createIndexed, createResized,
  createStruct, createSubarray, createVector, decodeDescriptor, descriptorToString, encodeDescriptor, elementArrayOf, predefinedRecord, typeSize,
  TYPE_CODES, typeCodeOfView, type ElementArrayConstructor, type TypeCode, type TypeDescriptor, type TypeMap,
} from '../datatype/index.ts';
import { OBJECT_KIND, type ObjectTable } from '../device/index.ts';
import { ERR_TYPE, UNDEFINED, mpiError } from '../util/index.ts';
import { runtime, runtimeOrNull } from '../runtime/index.ts';

export class Datatype {
  readonly name: string;
  /** the engine's record: descriptor plus committed / freed flags */
  readonly _record: DatatypeRecord;
  /** stable code of a predefined type (0 for derived types) */
  readonly _code: number;
  /** bytes of data in one item */
  readonly _size: number;
  /** distance between consecutive items */
  readonly _extent: number;
  readonly _lb: number;
  readonly _predefined: boolean;
  /** the primitive type of every entry, or null (mixed struct, or no entries) */
  readonly _typeCode: TypeCode | null;
  /** its DATATYPE record in the shared object table (0: none, for a type made before init) */
  _handle = 0;
  #map: TypeMap | null = null;
  /**
   * @internal The type map when `count` items are one gap-free run of count * size bytes at
   * trueLb >= 0 (size > 0), set once committed, else null: a BufSpec with such a type is an alias of
   * the user's memory, resolved without building a ResolvedBuf (api/buffer.ts denseBytesOf, the
   * point-to-point hot path that a bare typed array takes).
   */
  _dense: TypeMap | null = null;

  /** @internal Use the static constructors. */
  constructor(record: DatatypeRecord, name?: string) {
    this._record = record;
    const d = record.descriptor;
    this._predefined = record.isPredefined;
    this._code = d.kind === 'predefined' ? d.code : 0;
    this.name = name ?? descriptorToString(d);
    const info = record.info;
    this._size = info.size;
    this._extent = info.extent;
    this._lb = info.lb;
    this._typeCode = info.typeCode;
    if (record.isCommitted) this.#setDense(record.typeMap);
  }

  #setDense(map: TypeMap): void {
    this._dense = map.isContiguous && map.size > 0 && map.trueLb >= 0 ? map : null;
  }

  /** @internal The flattened layout (built once; commit builds it). */
  get _map(): TypeMap {
    return (this.#map ??= this._record.typeMap);
  }

  /** @internal */
  get _committed(): boolean {
    return this._record.isCommitted;
  }

  /** @internal */
  /** Freed through this wrapper, or (a type shared with other threads) through another thread's (object-table.ts isUsable). */
  get _freed(): boolean {
    return this._record.isFreed || (this._handle !== 0 && !this._predefined && !(runtimeOrNull()?.device.objects.isUsable(this._handle) ?? true));
  }

  /** @internal The typed array that views one element, or null for a mixed struct. */
  get _element(): ElementArrayConstructor | null {
    return this._typeCode === null ? null : elementArrayOf(this._typeCode);
  }

  /** @internal Bytes of one primitive element (1 for a mixed struct: the packed stream is then bytes). */
  get _elementBytes(): number {
    return this._typeCode === null ? 1 : typeSize(this._typeCode);
  }

  /** Bytes of data in one item (MPI_Type_size). */
  get size(): number {
    return this._size;
  }
  /** Span of one item in the buffer, upper bound minus lower bound (MPI_Type_get_extent). */
  get extent(): number {
    return this._extent;
  }
  /** The lower bound (MPI_Type_get_extent). */
  get lowerBound(): number {
    return this._lb;
  }

  /**
   * Makes the type usable in communication; returns it, so `Datatype.vector(...).commit()` reads well.
   * @throws MPIError(ERR_TYPE) when the type has been freed.
   */
  commit(): Datatype {
    this._record.commit();
    this.#map = this._record.typeMap;
    this.#setDense(this.#map);
    return this;
  }

  /**
   * User release: new calls with the type fail with ERR_TYPE; operations
   * already started with it still complete with its layout.
   * @throws MPIError(ERR_TYPE) for a predefined type, or one already freed.
   */
  free(): void {
    if (this._predefined) throw mpiError(ERR_TYPE, 'Datatype.free', `${this.name} is predefined and cannot be freed`);
    if (!this._record.isFreed && this._freed) throw mpiError(ERR_TYPE, 'Datatype.free', `${this.name} has already been freed (in another thread)`);
    this._record.free();
    if (this._handle !== 0) runtime('Datatype.free').device.lifetime.userFree(this._handle);
  }

  /**
   * @internal The handle other threads revive this derived type from: a DATATYPE
   * record whose blob is the encoded descriptor (made at creation, or here for a type made before init;
   * released by free()).
   */
  _share(call: string): number {
    if (this._handle === 0) this._handle = runtime(call).device.lifetime.create(OBJECT_KIND.DATATYPE, [], encodeDescriptor(this._record.descriptor), call);
    return this._handle;
  }

  /** @internal True when the shared record `handle` describes this type's layout. */
  _sameLayoutAs(handle: number): boolean {
    const a = runtime('revive').device.objects.blob(handle);
    const b = encodeDescriptor(this._record.descriptor);
    return a.length === b.length && a.every((x, i) => x === b[i]);
  }

  /** @internal This thread's Datatype of a record `_share` made in another thread. */
  static _ofShared(handle: number, committed: boolean, name: string): Datatype {
    const dt = new Datatype(new DatatypeRecord(decodeDescriptor(runtime('revive').device.objects.blob(handle).slice())), name);
    if (committed) dt.commit();
    // The same object as in the thread that made it: requests reference its record, and free() is its user release.
    dt._handle = handle;
    return dt;
  }

  /** @internal Whole items in `bytes` received bytes, or `undefinedValue`. */
  _countOf(bytes: number, undefinedValue: number): number {
    const n = countItems(bytes, this._record.info);
    return n === UNDEFINED ? undefinedValue : n;
  }

  toString(): string {
    return `Datatype(${this.name})`;
  }

  // --- constructors (MPI 3.1 §4.1.2-4.1.7) -----------------------------------

  /**
   * `count` copies of base, one base extent apart (MPI_Type_contiguous).
   * @throws MPIError(ERR_COUNT) for a bad count; ERR_TYPE when base is not a live Datatype.
   * @example const triple = MPI.Datatype.contiguous(3, MPI.FLOAT64).commit();
   */
  static contiguous(count: number, base: Datatype): Datatype {
    const call = 'Datatype.contiguous';
    return derived(createContiguous(count, baseOf(call, base, 'base')));
  }

  /**
   * `count` blocks of `blocklength` base items, block starts `stride` base extents apart (MPI_Type_vector).
   * @throws MPIError(ERR_COUNT | ERR_ARG) for bad numbers; ERR_TYPE when base is not a live Datatype.
   * @example const column = MPI.Datatype.vector(rows, 1, cols, MPI.FLOAT64).commit();
   */
  static vector(count: number, blocklength: number, stride: number, base: Datatype): Datatype {
    const call = 'Datatype.vector';
    return derived(createVector(count, blocklength, stride, baseOf(call, base, 'base')));
  }

  /**
   * Like vector, with the stride in bytes (MPI_Type_create_hvector).
   * @throws MPIError(ERR_COUNT | ERR_ARG) for bad numbers; ERR_TYPE when base is not a live Datatype.
   * @example const t = MPI.Datatype.hvector(4, 1, 12, MPI.INT32).commit();
   */
  static hvector(count: number, blocklength: number, strideBytes: number, base: Datatype): Datatype {
    const call = 'Datatype.hvector';
    return derived(createHvector(count, blocklength, strideBytes, baseOf(call, base, 'base')));
  }

  /**
   * Block i holds blocklengths[i] base items at displacements[i] base extents (MPI_Type_indexed).
   * @throws MPIError(ERR_ARG) for bad arrays; ERR_TYPE when base is not a live Datatype.
   * @example const t = MPI.Datatype.indexed([2, 1], [0, 5], MPI.INT32).commit();
   */
  static indexed(blocklengths: number[], displacements: number[], base: Datatype): Datatype {
    const call = 'Datatype.indexed';
    return derived(createIndexed(blocklengths, displacements, baseOf(call, base, 'base')));
  }

  /**
   * Block i holds blocklengths[i] items of types[i] at byteDisplacements[i] bytes (MPI_Type_create_struct).
   * @throws MPIError(ERR_ARG) for bad arrays; ERR_TYPE when an entry of types is not a live Datatype.
   * @example const rec = MPI.Datatype.struct([1, 2], [0, 8], [MPI.FLOAT64, MPI.INT32]).commit();
   */
  static struct(blocklengths: number[], byteDisplacements: number[], types: Datatype[]): Datatype {
    const call = 'Datatype.struct';
    const list = Array.isArray(types) ? types.map((t, i) => baseOf(call, t, `types[${i}]`)) : (types as never);
    return derived(createStruct(blocklengths, byteDisplacements, list));
  }

  /**
   * The block subsizes at starts of an array of sizes base items, 'C' or 'F' order (MPI_Type_create_subarray).
   * @throws MPIError(ERR_ARG) for bad arrays or order; ERR_TYPE when base is not a live Datatype.
   * @example const tile = MPI.Datatype.subarray([8, 8], [4, 4], [2, 2], 'C', MPI.FLOAT32).commit();
   */
  static subarray(sizes: number[], subsizes: number[], starts: number[], order: 'C' | 'F', base: Datatype): Datatype {
    const call = 'Datatype.subarray';
    return derived(createSubarray(sizes, subsizes, starts, order, baseOf(call, base, 'base')));
  }

  /**
   * base with a new lower bound and extent (MPI_Type_create_resized).
   * @throws MPIError(ERR_ARG) for bad bounds; ERR_TYPE when base is not a live Datatype.
   * @example const strided = MPI.Datatype.resized(MPI.FLOAT64, 0, 24).commit();
   */
  static resized(base: Datatype, lowerBound: number, extent: number): Datatype {
    const call = 'Datatype.resized';
    return derived(createResized(baseOf(call, base, 'base'), lowerBound, extent));
  }
}

/** The descriptor of a constructor argument, checked: a Datatype that is not freed (it need not be committed). */
function baseOf(call: string, dt: unknown, what: string): TypeDescriptor {
  if (!(dt instanceof Datatype)) {
    throw mpiError(ERR_TYPE, call, `${what} is ${dt === null ? 'null' : typeof dt === 'object' ? 'an object' : `${typeof dt} ${String(dt)}`}: expected an MPI.Datatype`);
  }
  checkConstructible(call, dt._record, what);
  return dt._record.descriptor;
}

function derived(d: TypeDescriptor): Datatype {
  const dt = new Datatype(new DatatypeRecord(d));
  const rt = runtimeOrNull();
  if (rt !== null) dt._handle = rt.device.lifetime.create(OBJECT_KIND.DATATYPE, [], encodeDescriptor(d), 'Datatype');
  return dt;
}

function predefined(name: string, code: TypeCode): Datatype {
  return new Datatype(predefinedRecord(code), name);
}

export const INT8 = predefined('INT8', TYPE_CODES.INT8);
export const UINT8 = predefined('UINT8', TYPE_CODES.UINT8);
export const INT16 = predefined('INT16', TYPE_CODES.INT16);
export const UINT16 = predefined('UINT16', TYPE_CODES.UINT16);
export const INT32 = predefined('INT32', TYPE_CODES.INT32);
export const UINT32 = predefined('UINT32', TYPE_CODES.UINT32);
export const INT64 = predefined('INT64', TYPE_CODES.INT64);
export const UINT64 = predefined('UINT64', TYPE_CODES.UINT64);
export const FLOAT32 = predefined('FLOAT32', TYPE_CODES.FLOAT32);
export const FLOAT64 = predefined('FLOAT64', TYPE_CODES.FLOAT64);
export const BYTE = predefined('BYTE', TYPE_CODES.BYTE);

const PREDEFINED_TYPES = [INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64, BYTE];

const BY_CODE: readonly Datatype[] = (() => {
  const t: Datatype[] = [];
  for (const d of PREDEFINED_TYPES) t[d._code] = d;
  return t;
})();

/**
 * The predefined types' records (predefined bit set; blob: the encoded descriptor): made by init in
 * the main thread (`objects`), attached in worker threads (`handles`, as the main thread returned them).
 */
export function setupPredefinedTypes(objects: ObjectTable | null, handles: readonly number[] = []): number[] {
  return PREDEFINED_TYPES.map((t, i) => (t._handle = objects === null
    ? handles[i]!
    : objects.create(OBJECT_KIND.DATATYPE, true, [t._code], encodeDescriptor(t._record.descriptor), 'init')));
}

/** The predefined Datatype of a type code. */
export function datatypeOfCode(code: TypeCode): Datatype {
  return BY_CODE[code]!;
}

/** The predefined type of a typed array (DataView and unknown kinds: BYTE). */
export function datatypeOfView(view: ArrayBufferView): Datatype {
  return datatypeOfCode(typeCodeOfView(view) ?? TYPE_CODES.BYTE);
}
