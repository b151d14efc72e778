/**
 * The object codec's plain form (issue 39): a small value made only of plain objects, arrays,
 * primitives and typed arrays, with no object reached twice, travels as plain msgpack (maps for
 * objects, as before ADR 0033) behind a 3-byte marker, instead of in records mode with reference
 * tracking. For such a value both forms decode to the same thing; the plain form skips what the
 * rules need only for other values: the record definition a message must carry and read back
 * (there are no shared structures) and the reference map. Anything else (a Map, a Set, a Date, a
 * class instance, a function, a shared reference or a cycle, a BigInt, a `__proto__` key, or a value
 * past the walk's limits) is not plain, and the caller takes the records form.
 *
 * The test is a walk of the value, bounded so that it stays small next to the encode it saves:
 * at most PLAIN_MAX_OBJECTS objects (each compared with those seen, which is how a shared
 * reference is found), PLAIN_MAX_DEPTH levels and PLAIN_MAX_ELEMENTS elements per array or keys
 * per object. The walk reads each property, and the encoder reads it again: a getter of a plain
 * object runs twice (structuredClone and the records form run it once).
 */
import type { Packr } from 'msgpackr';
import { msgpackr } from './msgpackr-at-first-use.ts';

/** The marker: a msgpack fixext 1 of our type 0x50 ('P'), which the records form never writes first. */
const MARK_0 = 0xd4;
const MARK_1 = 0x50;
const MARK_LENGTH = 3;

const PLAIN_MAX_OBJECTS = 16;
const PLAIN_MAX_DEPTH = 8;
const PLAIN_MAX_ELEMENTS = 1024;

/**
 * msgpackr with the flags tsmpi used before ADR 0033: objects as maps and back, no reference
 * tracking. moreTypes and copyBuffers as in the records form, so a typed array arrives the same.
 */
let plainPackr: Packr | null = null;
function plain(): Packr {
  return (plainPackr ??= new (msgpackr().Packr)({ useRecords: false, mapsAsObjects: true, structuredClone: false, moreTypes: true, copyBuffers: true }));
}

/** The typed arrays' prototypes: a view of one of these kinds (not a Buffer, not a subclass) is plain. */
const TYPED_ARRAY_PROTOTYPES: ReadonlySet<object> = new Set([
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
].map((c) => c.prototype));

/** The objects the current walk has seen (reused: the walk does not allocate). */
const seen: object[] = [];

function plainObject(v: object, depth: number): boolean {
  if (depth >= PLAIN_MAX_DEPTH || seen.length >= PLAIN_MAX_OBJECTS) return false;
  for (let i = 0; i < seen.length; i++) if (seen[i] === v) return false;
  seen.push(v);
  const proto = Object.getPrototypeOf(v) as object | null;
  if (proto === Object.prototype) {
    // msgpackr writes the keys for-in finds that hasOwnProperty accepts; an own `hasOwnProperty`
    // changes that test, and `__proto__` is renamed on decode: leave both to the records form.
    if (Object.hasOwn(v, 'hasOwnProperty') || Object.hasOwn(v, '__proto__')) return false;
    let keys = 0;
    for (const k in v) {
      // The key bound also keeps the plain encoder under its 16-bit map size.
      if (Object.hasOwn(v, k) && (++keys > PLAIN_MAX_ELEMENTS || !plainValue((v as Record<string, unknown>)[k], depth + 1))) return false;
    }
    return true;
  }
  if (proto === Array.prototype) {
    const a = v as unknown[];
    // An array of more objects than the walk may see is not plain: say so before walking them.
    if (a.length > PLAIN_MAX_ELEMENTS || (a.length > PLAIN_MAX_OBJECTS - seen.length && typeof a[0] === 'object' && a[0] !== null)) return false;
    for (let i = 0; i < a.length; i++) if (!plainValue(a[i], depth + 1)) return false;
    return true;
  }
  return TYPED_ARRAY_PROTOTYPES.has(proto!) && !((v as ArrayBufferView).buffer instanceof SharedArrayBuffer);
}

function plainValue(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'number': case 'string': case 'boolean': case 'undefined': return true;
    case 'object': return v === null || plainObject(v, depth);
    default: return false; // bigint, function, symbol
  }
}

/** Whether `value` may travel in the plain form (see the file's comment). */
export function isPlain(value: unknown): boolean {
  try {
    return plainValue(value, 0);
  } finally {
    seen.length = 0;
  }
}

/** The plain form's bytes of a value isPlain accepted: a view of the encoder's buffer, valid until its next encode. */
export function encodePlain(value: unknown): Uint8Array {
  const bytes = plain().pack(value, msgpackr().RESERVE_START_SPACE | MARK_LENGTH);
  bytes[0] = MARK_0;
  bytes[1] = MARK_1;
  bytes[2] = 0;
  return bytes;
}

/** Whether `bytes` hold the plain form. */
export function isPlainForm(bytes: Uint8Array): boolean {
  return bytes.length > MARK_LENGTH && bytes[0] === MARK_0 && bytes[1] === MARK_1;
}

const AFTER_MARK = Object.freeze({ start: MARK_LENGTH });

/** The value in the plain form's bytes. */
export function decodePlain(bytes: Uint8Array): unknown {
  return plain().unpack(bytes, AFTER_MARK);
}
