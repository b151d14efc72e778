/**
 * The object codec: how the values of object messages (send, recv, bcast, gather, ... every
 * lower-case call, and a value relayed to another thread) become bytes and back. One codec for
 * every path, so a value arrives the same whichever call carried it.
 *
 * The rules are the structured-clone rules users know from postMessage / structuredClone()
 * (docs/API.md "Object messages" has the table): Map, Set, Date, RegExp, BigInt of any size,
 * typed arrays, DataView, ArrayBuffer and Error survive; so do undefined properties, shared
 * references (one object reached twice arrives as one object reached twice) and cycles.
 * Where structuredClone would change a value's shape silently, we refuse it instead: a function,
 * a symbol, a WeakMap / WeakSet / Promise, or an instance of a class that is not registered
 * (util/class-registry.ts) is an MPIError(ERR_ARG) naming the path of the bad value. An instance
 * of a registered class travels by name and arrives with its prototype.
 *
 * The bytes are msgpack (msgpackr) in records mode: a plain object is a record, so a msgpack map
 * is free to mean a Map (mapsAsObjects: false); structuredClone: true gives reference tracking
 * (an id before an object reached twice, a pointer where it recurs). Two msgpackr extensions,
 * added once when this module loads, do the rest:
 *   OTHER_OBJECT  matches, only while this module encodes, an object msgpackr would otherwise
 *                 write as a plain object although it is not one (a class instance, an Error,
 *                 a function, ...): it becomes an Envelope, or the encode is refused.
 *   Envelope      ext type 0x4d ('M'): [kind, ...] for a registered class instance or an Error
 *                 (msgpackr's own Error form drops the stack).
 * msgpackr's extension tables are global to the process: another msgpackr user in the same
 * process must not claim ext type 0x4d; every other user sees msgpackr's behaviour unchanged.
 *
 * Cost: a small value of plain objects, arrays, primitives and typed arrays with no object reached
 * twice takes the plain form (object-codec-plain.ts: plain msgpack, as before ADR 0033, found by a
 * bounded walk); every other value takes msgpackr's records form, which nothing walks. Only a
 * refused encode walks the value (findRefused) to name the bad path, and only a message holding a
 * registered instance that is part of a cycle walks the decoded value once, to restore that
 * instance's prototype.
 *
 * Differences from structuredClone (docs/API.md): -0 arrives as 0; an array's holes arrive as
 * undefined and its non-index properties are dropped; a typed array arrives over a buffer of just
 * its own bytes (structuredClone copies the whole underlying buffer, and keeps two views of one
 * buffer sharing it); an Error keeps a non-standard name; a property named "__proto__" arrives as
 * "__proto_" (msgpackr's guard).
 */
import type { Packr } from 'msgpackr';
import { ERR_ARG, ERR_OTHER, MPIError, mpiError } from './errors.ts';
import { registeredByName, registeredByPrototype, type RegisteredClass } from './class-registry.ts';
import { msgpackr } from './msgpackr-at-first-use.ts';
import { unpackMessage } from './decode-stage.ts';
import { decodePlain, encodePlain, isPlain, isPlainForm } from './object-codec-plain.ts';

/** Our msgpack ext type ('M'), and the kinds of value an Envelope carries. */
const EXT_TYPE = 0x4d;
const KIND_CLASS = 0;
const KIND_ERROR = 1;

/** What the encoder writes for a value msgpackr has no form of its own for: [kind, ...parts]. */
class Envelope {
  readonly parts: unknown[];
  constructor(parts: unknown[]) {
    this.parts = parts;
  }
}

/** A value the rules refuse, thrown out of msgpackr's encoder; encodeObject turns it into an MPIError. */
class Refused extends Error {}

/**
 * The codec's msgpackr instance, made with its extensions by the first encode or decode (codec()).
 * copyBuffers: decoded binaries never alias the input (a receive buffer or shared memory). The
 * output buffer is reused by the next encode (STYLE.md lesson 5).
 */
let packr: Packr | null = null;

/** Encodes in progress on this thread: OTHER_OBJECT matches only inside them. */
let encoding = 0;

/** Whether an object that msgpackr found neither a plain object, an array nor a Map needs an Envelope (or a refusal). */
function isOtherObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as object | null;
  // A plain object whose `constructor` property is its own data, or one without a prototype: plain.
  if (proto === Object.prototype || proto === null || v instanceof Envelope) return false;
  // msgpackr's own forms (tagged by moreTypes): they decode as what they were.
  return !(ArrayBuffer.isView(v) || v instanceof Date || v instanceof Set || v instanceof RegExp || v instanceof ArrayBuffer);
}

/** A pseudo-class for msgpackr's extension table (it tests `value instanceof Class`). */
const OTHER_OBJECT = { [Symbol.hasInstance]: (v: unknown): boolean => encoding > 0 && isOtherObject(v as object) };

/** An Error's parts: [name, message, stack, hasCause, cause]. */
function errorParts(e: Error): unknown[] {
  const hasCause = Object.hasOwn(e, 'cause');
  return [e.name, e.message, typeof e.stack === 'string' ? e.stack : undefined, hasCause, hasCause ? e.cause : undefined];
}

const ERROR_CLASSES: Record<string, ErrorConstructor | undefined> = {
  Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError,
};

/** Gives `e` the parts errorParts took (name, message and stack as an Error has them: not enumerable). */
function restoreErrorParts(e: object, parts: unknown[]): void {
  const [name, message, stack, hasCause, cause] = parts;
  const hidden = (value: unknown) => ({ value, writable: true, configurable: true, enumerable: false });
  if ((e as Error).name !== name) Object.defineProperty(e, 'name', hidden(name));
  Object.defineProperty(e, 'message', hidden(message));
  if (stack !== undefined) Object.defineProperty(e, 'stack', hidden(stack));
  if (hasCause === true) Object.defineProperty(e, 'cause', hidden(cause));
}

/** Envelope values made by the current decode, and how many of them a cycle copied (see markRevived). */
const revived: object[] = [];
let cycleCopies = 0;
/** Marks a revived value until its decode ends; a copy of it carries the original. */
const REVIVED = Symbol('tsmpi.revived');

/**
 * Marks `obj`, an Envelope's value, until the decode ends. msgpackr decodes an object that is part
 * of a cycle into a placeholder {} (the cycle's pointers point to it) and then copies the decoded
 * value's enumerable properties onto it, which loses a prototype and the non-enumerable parts of an
 * Error. The marker, an enumerable getter, is copied too: decodeObject finds such copies and makes
 * them whole (finishRevived).
 */
function markRevived(obj: object): object {
  Object.defineProperty(obj, REVIVED, { get: () => { cycleCopies++; return obj; }, enumerable: true, configurable: true });
  revived.push(obj);
  return obj;
}

/** An instance of a registered class, from its fields. The constructor is not called (as pickle does not call __init__). */
function reviveInstance(entry: RegisteredClass, fields: object, error: unknown[] | null): object {
  // Own data properties, as the sender's fields were: assigning them would run setters of the prototype.
  const obj = Object.create(entry.prototype, Object.getOwnPropertyDescriptors(fields)) as object;
  if (error !== null) restoreErrorParts(obj, error);
  return markRevived(obj);
}

/** Why decoding failed in a way the sender's rules did not catch (a class this process did not register). */
class DecodeRefused extends Error {}

function readEnvelope(parts: unknown[]): unknown {
  if (!Array.isArray(parts)) throw new DecodeRefused('a malformed object message');
  if (parts[0] === KIND_CLASS) {
    const name = String(parts[1]);
    const entry = registeredByName(name);
    if (entry === undefined) {
      throw new DecodeRefused(`the message holds an instance of class "${name}", which is not registered in this process: ` +
        `call MPI.registerClass with the same class and name on every rank (and in every thread that receives it)`);
    }
    return reviveInstance(entry, parts[2] as object, (parts[3] as unknown[] | null) ?? null);
  }
  if (parts[0] === KIND_ERROR) {
    const [, name, message, , hasCause, cause] = parts;
    const Ctor = ERROR_CLASSES[String(name)] ?? Error;
    const e = hasCause === true ? new Ctor(String(message), { cause }) : new Ctor(String(message));
    restoreErrorParts(e, parts.slice(1));
    return markRevived(e);
  }
  throw new DecodeRefused('a malformed object message');
}

/** The codec's msgpackr instance: loads msgpackr and registers the two extensions at the first call. */
function codec(): Packr {
  if (packr !== null) return packr;
  const { Packr, addExtension } = msgpackr();
  packr = new Packr({
    useRecords: true,
    mapsAsObjects: false,
    structuredClone: true,
    moreTypes: true,
    copyBuffers: true,
    writeFunction: () => { throw new Refused('a function'); },
  });
  addExtension({
    Class: OTHER_OBJECT as unknown as new () => unknown,
    write(this: unknown, value: object): unknown {
      // Another Packr (nested in one of our encodes): msgpackr's own behaviour for a class instance.
      if (this !== packr) return typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
      const entry = registeredByPrototype(Object.getPrototypeOf(value) as object | null);
      if (entry !== undefined) return new Envelope([KIND_CLASS, entry.name, { ...value }, value instanceof Error ? errorParts(value) : null]);
      if (value instanceof Error) return new Envelope([KIND_ERROR, ...errorParts(value)]);
      throw new Refused('unsupported');
    },
  });
  // Added after OTHER_OBJECT: msgpackr tests the last added extension first, so an Envelope is never taken for another object.
  addExtension({
    Class: Envelope,
    type: EXT_TYPE,
    pack(env: Envelope, allocateForWrite: (n: number) => { target: Uint8Array; position: number }, pack: (v: unknown) => void) {
      const { target, position } = allocateForWrite(3);
      target[position] = 0xd4; // fixext 1: our type, a filler byte, then the parts as the next value
      target[position + 1] = EXT_TYPE;
      target[position + 2] = 0;
      pack(env.parts);
    },
    read: readEnvelope,
  } as unknown as Parameters<typeof addExtension>[0]);
  return packr;
}

/**
 * The bytes of `value` by the object-message rules. The result is a view of the codec's output
 * buffer, valid until the next encode on this thread: copy it if it must outlive that.
 * @throws MPIError(ERR_ARG) naming `call` and the path of a value the rules refuse
 */
export function encodeObject(value: unknown, call: string): Uint8Array {
  if (isPlain(value)) {
    try {
      return encodePlain(value);
    } catch (e) {
      // As the records form's: a value too large for the encoder (a 4 GiB typed array) is ERR_ARG, not msgpackr's error.
      throw refusal(value, call, e);
    }
  }
  encoding++;
  try {
    return codec().pack(value);
  } catch (e) {
    throw refusal(value, call, e);
  } finally {
    encoding--;
  }
}

/**
 * The value that encodeObject's bytes carry.
 * @throws MPIError(ERR_OTHER) naming `call` if the bytes hold a class this process did not register
 */
export function decodeObject(bytes: Uint8Array, call: string): unknown {
  if (isPlainForm(bytes)) return decodePlain(bytes);
  try {
    const value: unknown = unpackMessage(codec(), bytes, 0);
    if (revived.length > 0) finishRevived(value);
    return value;
  } catch (e) {
    if (e instanceof DecodeRefused) throw mpiError(ERR_OTHER, call, e.message);
    throw e;
  } finally {
    revived.length = 0;
    cycleCopies = 0;
  }
}

/** Ends a decode that revived Envelope values: makes cycle copies whole, removes the markers. */
function finishRevived(root: unknown): void {
  if (cycleCopies > 0) {
    const seen = new Set<object>();
    const visit = (v: unknown): void => {
      if (v === null || typeof v !== 'object' || seen.has(v) || ArrayBuffer.isView(v)) return;
      seen.add(v);
      if (Object.hasOwn(v, REVIVED) && Object.getPrototypeOf(v) === Object.prototype) {
        const original = (v as Record<symbol, object>)[REVIVED]!;
        delete (v as Record<symbol, unknown>)[REVIVED];
        Object.setPrototypeOf(v, Object.getPrototypeOf(original));
        for (const k of Reflect.ownKeys(original)) {
          if (k !== REVIVED && !Object.hasOwn(v, k)) Object.defineProperty(v, k, Object.getOwnPropertyDescriptor(original, k)!);
        }
      }
      if (v instanceof Map) for (const [k, x] of v) { visit(k); visit(x); }
      else if (v instanceof Set) for (const x of v) visit(x);
      else for (const k of Object.keys(v)) visit((v as Record<string, unknown>)[k]);
      if (v instanceof Error) visit(v.cause);
    };
    visit(root);
  }
  for (const obj of revived) delete (obj as Record<symbol, unknown>)[REVIVED];
}

// --- refusals: the slow walk, only after the encoder refused --------------------------------

/** The MPIError for a failed encode of `value`: the path of the first value the rules refuse. */
function refusal(value: unknown, call: string, cause: unknown): MPIError {
  if (cause instanceof MPIError) return cause;
  const found = findRefused(value, 'message', new Set());
  if (found !== null) {
    return mpiError(ERR_ARG, call, `${found.path} is ${found.what}; objects are sent by the structured-clone rules ` +
      `(docs/API.md "Object messages"); register a class with MPI.registerClass`);
  }
  return mpiError(ERR_ARG, call, `message cannot be encoded: ${(cause as Error)?.message ?? String(cause)}`, cause);
}

interface Found { readonly path: string; readonly what: string }

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const keyPath = (path: string, key: string): string => (IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`);

/** What a refused value is, in words; null if the rules accept it at this level. */
function refusedWhat(v: unknown): string | null {
  if (typeof v === 'function') return `a function${v.name ? ` (${v.name})` : ''}`;
  if (typeof v === 'symbol') return `a symbol (${String(v.description)})`;
  if (v === null || typeof v !== 'object') return null;
  // What msgpackr writes before asking its extensions (pack.js): plain objects, arrays and Maps by constructor.
  const ctor = (v as { constructor?: unknown }).constructor;
  if (ctor === Object || ctor === Array || ctor === Map || !isOtherObject(v)) return null;
  if (v instanceof Error || registeredByPrototype(Object.getPrototypeOf(v) as object | null) !== undefined) return null;
  if (v instanceof SharedArrayBuffer) return 'a SharedArrayBuffer, which no other process can share (send a typed array over it)';
  if (v instanceof WeakMap || v instanceof WeakSet || v instanceof WeakRef || v instanceof Promise) return `a ${v.constructor.name}, which cannot be cloned`;
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return `a ${v.constructor.name} object (send the primitive)`;
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  return `an instance of class ${typeof name === 'string' && name !== '' ? name : '(anonymous)'}, which is not registered`;
}

/** The first refused value under `v` in the encoder's order, or null. */
function findRefused(v: unknown, path: string, seen: Set<object>): Found | null {
  const what = refusedWhat(v);
  if (what !== null) return { path, what: typeof v === 'function' && path.endsWith(`.${v.name}`) ? 'a function' : what };
  if (v === null || typeof v !== 'object' || seen.has(v) || ArrayBuffer.isView(v)) return null;
  seen.add(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = findRefused(v[i], `${path}[${i}]`, seen);
      if (f !== null) return f;
    }
    return null;
  }
  if (v instanceof Map) {
    let i = 0;
    for (const [k, x] of v) {
      const fk = findRefused(k, `${path}.keys()[${i}]`, seen);
      if (fk !== null) return fk;
      const fx = findRefused(x, `${path}.get(${typeof k === 'string' ? JSON.stringify(k) : typeof k === 'object' ? `keys()[${i}]` : String(k)})`, seen);
      if (fx !== null) return fx;
      i++;
    }
    return null;
  }
  if (v instanceof Set) {
    let i = 0;
    for (const x of v) {
      const f = findRefused(x, `${path}.values()[${i++}]`, seen);
      if (f !== null) return f;
    }
    return null;
  }
  if (v instanceof Error) return Object.hasOwn(v, 'cause') ? findRefused(v.cause, `${path}.cause`, seen) : null;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const f = findRefused((v as Record<string, unknown>)[k], keyPath(path, k), seen);
    if (f !== null) return f;
  }
  return null;
}
