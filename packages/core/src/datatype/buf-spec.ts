/**
 * Turns the parts of a BufSpec (API.md "Buffer messages") into what the
 * device needs: the bytes of the user's memory, a count and a type map, and
 * the checks that go with them.
 *
 * Contract: the API layer splits `BufSpec = view | [view, datatype] |
 * [view, count, datatype]` and calls resolveBuffer(call, view, count?,
 * record?) once per call, before any state changes. The returned `bytes`
 * alias the user's memory (no copy). Layout rule: displacement 0 is the first
 * byte of the view, and every byte the `count` items touch must lie inside
 * the view, so a datatype with a negative true lower bound needs a view that
 * starts later (or a resized / subarray type).
 *
 * Also here: getCount-style helpers for Status.getCount (whole items in N
 * bytes, or UNDEFINED).
 */
import { ERR_BUFFER, ERR_COUNT, ERR_TYPE, UNDEFINED, mpiError } from '../util/index.ts';
import { typeCodeOfView, typeSize, type TypeCode } from './predefined.ts';
import { checkUsable, predefinedRecord, type DatatypeRecord } from './record.ts';
import type { TypeInfo, TypeMap } from './type-map.ts';

/** MPI.UNDEFINED: what a count is when the bytes are not a whole number of items (util/sentinels.ts). */
export { UNDEFINED };

/** A buffer argument, resolved and checked. */
export interface ResolvedBuffer {
  /** The user's view, as passed. */
  readonly view: ArrayBufferView;
  /** The view's bytes (aliases the user's memory). */
  readonly bytes: Uint8Array;
  readonly count: number;
  readonly record: DatatypeRecord;
  readonly typeMap: TypeMap;
  /** Packed bytes of the message: count * size. */
  readonly packedBytes: number;
}

/** The bytes of any ArrayBufferView, without copying. */
export function bytesOfView(view: ArrayBufferView): Uint8Array {
  if (view instanceof Uint8Array && view.constructor === Uint8Array) return view;
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** The number of bytes `count` items of `info` touch from displacement 0: (count - 1) * extent + trueUb. */
export function spanBytes(count: number, info: TypeInfo): number {
  if (count === 0 || info.size === 0) return 0;
  return (count - 1) * info.extent + info.trueUb;
}

/**
 * Resolves one buffer argument.
 * @param call the public call, for messages ('Send').
 * @param view the typed array or DataView.
 * @param count items; default: as many whole items as fit, floor(byteLength / extent)
 *   or fewer when an item reaches past its extent (for a bare typed array, its length).
 * @param record the datatype; default: the view's element type (DataView: BYTE).
 * @param what the argument's name in messages; default 'buf'.
 * @throws MPIError(ERR_BUFFER) when view is missing or not an ArrayBufferView,
 *   or the type reaches below the start of the view.
 * @throws MPIError(ERR_TYPE) when no datatype is given for a view kind with no
 *   predefined type, or the datatype is freed or not committed.
 * @throws MPIError(ERR_COUNT) when count is not an integer >= 0, the items do
 *   not fit in the view, or count is omitted for a type of extent 0.
 */
export function resolveBuffer(call: string, view: unknown, count?: number, record?: DatatypeRecord, what = 'buf'): ResolvedBuffer {
  if (view === null || view === undefined) throw mpiError(ERR_BUFFER, call, `${what} is missing`);
  if (!ArrayBuffer.isView(view)) {
    throw mpiError(ERR_BUFFER, call, `${what} must be a typed array or DataView, got ${typeof view === 'object' ? 'an object' : typeof view}`);
  }
  let rec: DatatypeRecord;
  if (record === undefined) {
    const code = typeCodeOfView(view);
    if (code === null) {
      throw mpiError(ERR_TYPE, call, `${what} is a ${view.constructor.name}, which has no predefined datatype; pass [${what}, datatype]`);
    }
    rec = predefinedRecord(code);
  } else {
    rec = record;
    checkUsable(call, rec);
  }
  const map = rec.typeMap;
  const byteLength = view.byteLength;
  let n: number;
  if (count === undefined) {
    if (map.extent === 0) {
      if (map.size !== 0) throw mpiError(ERR_COUNT, call, `a count is required with ${rec.toString()}, whose extent is 0`);
      n = 0;
    } else {
      // As many whole items as fit: floor(byteLength / extent), fewer when an item reaches past its extent.
      n = Math.min(Math.floor(byteLength / map.extent), map.trueLb < 0 ? Number.POSITIVE_INFINITY : maxCount(byteLength, map));
    }
  } else {
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
      throw mpiError(ERR_COUNT, call, `count must be an integer >= 0, got ${String(count)}`);
    }
    n = count;
  }
  if (n > 0 && map.size > 0) {
    if (map.trueLb < 0) {
      throw mpiError(
        ERR_BUFFER,
        call,
        `${rec.toString()} reaches ${-map.trueLb} bytes before the start of ${what}; pass a view that starts at the lowest byte, or use a resized type`,
      );
    }
    const need = spanBytes(n, map);
    if (need > byteLength) {
      throw mpiError(
        ERR_COUNT,
        call,
        `count ${n} of ${rec.toString()} needs ${need} bytes but ${what} has ${byteLength} bytes (at most ${maxCount(byteLength, map)} items fit)`,
      );
    }
  }
  return { view, bytes: bytesOfView(view), count: n, record: rec, typeMap: map, packedBytes: n * map.size };
}

/** How many items of `info` fit in `byteLength` bytes from displacement 0. */
export function maxCount(byteLength: number, info: TypeInfo): number {
  if (info.size === 0) return Number.POSITIVE_INFINITY;
  if (info.trueLb < 0 || info.trueUb > byteLength) return 0;
  if (info.extent === 0) return Number.POSITIVE_INFINITY;
  return Math.floor((byteLength - info.trueUb) / info.extent) + 1;
}

/**
 * Status.getCount(datatype): whole items in `byteCount` received bytes, or
 * UNDEFINED when the bytes are not a whole number of items. A type of size 0
 * counts 0 items.
 */
export function countItems(byteCount: number, info: TypeInfo): number {
  if (info.size === 0) return 0;
  const n = byteCount / info.size;
  return Number.isInteger(n) ? n : UNDEFINED;
}

/**
 * MPI_Get_elements: primitive elements in `byteCount` received bytes (whole
 * items plus the entries of a partial last item), or UNDEFINED when the bytes
 * end inside a primitive element.
 */
export function countElements(byteCount: number, map: TypeMap): number {
  if (map.size === 0) return 0;
  const whole = Math.floor(byteCount / map.size);
  let rest = byteCount - whole * map.size;
  let n = whole * map.elementCount;
  for (let j = 0; j < map.blockCount && rest > 0; j++) {
    const elem = typeSize(map.blockTypes[j] as TypeCode);
    const len = Math.min(rest, map.blockLengths[j]!);
    if (len % elem !== 0) return UNDEFINED;
    n += len / elem;
    rest -= len;
  }
  return n;
}
