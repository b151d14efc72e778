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
 *
 * A lone number, boolean or null (a flag, a count, `sendrecv(0)` as a sync: the commonest object
 * messages) is written and read here byte for byte as msgpackr's plain encoder writes it (its
 * pack.js), without loading msgpackr. Its load at a thread's first other object message (ADR 0057)
 * costs that thread ~10 ms and ~2 MB of young heap (its source map under mpiexec's
 * --enable-source-maps, its native string extractor), which the next scavenges copy and promote:
 * after a sync by `sendrecv(0)` the `--endpoints 2` message rate's first timed iterations paid it.
 */
import type { Packr } from 'msgpackr';
import { unpackMessage } from './decode-stage.ts';
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

/**
 * The objects the current walk has seen: the first `seenCount` slots (reused: the walk does not
 * allocate). A count, not `seen.length = 0`: truncating an array frees its backing store, and the
 * next walk's first push allocated a new one (152 bytes per object message sent).
 */
const seen: (object | null)[] = new Array<object | null>(PLAIN_MAX_OBJECTS).fill(null);
let seenCount = 0;

function plainObject(v: object, depth: number): boolean {
  if (depth >= PLAIN_MAX_DEPTH || seenCount >= PLAIN_MAX_OBJECTS) return false;
  for (let i = 0; i < seenCount; i++) if (seen[i] === v) return false;
  seen[seenCount++] = v;
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
    if (a.length > PLAIN_MAX_ELEMENTS || (a.length > PLAIN_MAX_OBJECTS - seenCount && typeof a[0] === 'object' && a[0] !== null)) return false;
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
    // The slots are cleared so that the walk holds no user object after it.
    for (let i = 0; i < seenCount; i++) seen[i] = null;
    seenCount = 0;
  }
}

/** The scalar's bytes: the marker and one msgpack scalar of at most 9 bytes (reused, as msgpackr reuses its buffer). */
const scalarBytes = new Uint8Array(MARK_LENGTH + 9);
const scalarView = new DataView(scalarBytes.buffer);

/** A number, true, false or null in msgpackr's plain encoding (pack.js, `useRecords: false`: no float32). */
function encodeScalar(value: number | boolean | null): Uint8Array {
  const b = scalarBytes;
  let n = MARK_LENGTH;
  if (value === null) b[n++] = 0xc0;
  else if (value === true) b[n++] = 0xc3;
  else if (value === false) b[n++] = 0xc2;
  else if (value >>> 0 === value) { // an integer in 0..2^32-1 (and -0, as msgpackr: it arrives as 0)
    if (value < 0x80) b[n++] = value;
    else if (value < 0x100) { b[n++] = 0xcc; b[n++] = value; }
    else if (value < 0x10000) { b[n++] = 0xcd; scalarView.setUint16(n, value); n += 2; }
    else { b[n++] = 0xce; scalarView.setUint32(n, value); n += 4; }
  } else if (value >> 0 === value) { // a negative 32-bit integer
    if (value >= -0x20) b[n++] = 0x100 + value;
    else if (value >= -0x80) { b[n++] = 0xd0; b[n++] = value + 0x100; }
    else if (value >= -0x8000) { b[n++] = 0xd1; scalarView.setInt16(n, value); n += 2; }
    else { b[n++] = 0xd2; scalarView.setInt32(n, value); n += 4; }
  } else { b[n++] = 0xcb; scalarView.setFloat64(n, value); n += 8; }
  b[0] = MARK_0;
  b[1] = MARK_1;
  b[2] = 0;
  return b.subarray(0, n);
}

/** What decodeScalar returns for a body that is not one scalar of encodeScalar's forms. */
const NOT_SCALAR = Symbol('not a scalar');

/** The value of a plain form whose body is exactly one scalar as encodeScalar writes it, else NOT_SCALAR. */
function decodeScalar(b: Uint8Array): unknown {
  const t = b[MARK_LENGTH]!;
  const k = MARK_LENGTH + 1;
  switch (b.length - k) {
    case 0:
      if (t < 0x80) return t;
      if (t >= 0xe0) return t - 0x100;
      return t === 0xc0 ? null : t === 0xc3 ? true : t === 0xc2 ? false : NOT_SCALAR;
    case 1:
      return t === 0xcc ? b[k]! : t === 0xd0 ? (b[k]! << 24) >> 24 : NOT_SCALAR;
    case 2:
      return t === 0xcd ? (b[k]! << 8) | b[k + 1]! : t === 0xd1 ? (((b[k]! << 8) | b[k + 1]!) << 16) >> 16 : NOT_SCALAR;
    case 4: {
      if (t !== 0xce && t !== 0xd2) return NOT_SCALAR;
      const word = (b[k]! << 24) | (b[k + 1]! << 16) | (b[k + 2]! << 8) | b[k + 3]!;
      return t === 0xce ? word >>> 0 : word;
    }
    case 8:
      return t === 0xcb ? new DataView(b.buffer, b.byteOffset + k, 8).getFloat64(0) : NOT_SCALAR;
    default:
      return NOT_SCALAR;
  }
}

/** The plain form's bytes of a value isPlain accepted: a view of the encoder's buffer, valid until its next encode. */
export function encodePlain(value: unknown): Uint8Array {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return encodeScalar(value);
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

/** The value in the plain form's bytes (any view: of a Buffer, of shared memory). */
export function decodePlain(bytes: Uint8Array): unknown {
  const scalar = decodeScalar(bytes);
  if (scalar !== NOT_SCALAR) return scalar;
  return unpackMessage(plain(), bytes, MARK_LENGTH);
}
