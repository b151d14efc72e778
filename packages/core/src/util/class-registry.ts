/**
 * The class registry of object messages (MPI.registerClass): which classes a
 * process sends and receives as themselves rather than refusing them.
 *
 * Object messages follow the structured-clone rules (util/object-codec.ts),
 * which have no place for a class: structuredClone() turns an instance into a
 * plain object, silently. tsmpi refuses an instance of an unregistered class
 * instead, and sends an instance of a registered one by name: the receiver
 * makes an object with the class's prototype (its constructor is NOT called,
 * as pickle does not call __init__) and the sender's own enumerable fields.
 * The name is what travels, so every process (and every thread that sends or
 * receives such values) registers the same class under the same name.
 */
import { ERR_ARG, mpiError } from './errors.ts';

/** The options of MPI.registerClass. */
export interface RegisterClassOptions {
  /** the name the class travels under (default: the class's own name); the same on every rank */
  readonly name?: string;
}

/** One registered class. */
export interface RegisteredClass {
  readonly name: string;
  readonly prototype: object;
}

const byPrototype = new Map<object, RegisteredClass>();
const byName = new Map<string, RegisteredClass>();

/** Classes whose instances travel by the structured-clone rules already, or cannot travel at all. */
const BUILT_IN: readonly unknown[] = [
  Object, Array, Map, Set, Date, RegExp, ArrayBuffer, SharedArrayBuffer, DataView, Promise, WeakMap, WeakSet, Function,
  Number, String, Boolean, BigInt, Symbol, Buffer,
  Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError,
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array,
  BigInt64Array, BigUint64Array,
];

/**
 * Registers `cls` so that object messages carry its instances as instances of it.
 * Call it in every process (and every MPI.Worker thread) that sends or receives such values,
 * with the same name, before the first message that holds one; registering again is a no-op.
 * @example class Point { constructor(public x = 0, public y = 0) {} norm() { return Math.hypot(this.x, this.y); } }
 *          MPI.registerClass(Point);   // on every rank
 *          await comm.send(new Point(3, 4), 1);   // rank 1: (await comm.recv<Point>(0)).norm() === 5
 * @throws MPIError(ERR_ARG) if cls is not a class, is a built-in, or the name is taken by another class
 */
export function registerClass(cls: abstract new (...args: never[]) => unknown, options: RegisterClassOptions = {}): void {
  const call = 'registerClass';
  if (typeof cls !== 'function' || cls.prototype === null || typeof cls.prototype !== 'object') {
    throw mpiError(ERR_ARG, call, `cls is ${cls === null ? 'null' : typeof cls}: expected a class (a constructor function with a prototype)`);
  }
  if (BUILT_IN.includes(cls)) {
    throw mpiError(ERR_ARG, call, `cls is the built-in ${cls.name}: its values travel by the structured-clone rules already (docs/API.md "Object messages")`);
  }
  if (options === null || typeof options !== 'object') throw mpiError(ERR_ARG, call, `options is ${String(options)}: expected an object { name? }`);
  const name = options.name ?? cls.name;
  if (typeof name !== 'string' || name.length === 0) {
    throw mpiError(ERR_ARG, call, `name is ${JSON.stringify(name) ?? String(name)}: expected a non-empty string (an anonymous class needs options.name)`);
  }
  const mine = byPrototype.get(cls.prototype);
  if (mine !== undefined) {
    if (mine.name === name) return;
    throw mpiError(ERR_ARG, call, `class ${cls.name} is registered already, as "${mine.name}": a class travels under one name`);
  }
  const other = byName.get(name);
  if (other !== undefined) throw mpiError(ERR_ARG, call, `name "${name}" is taken by another class: each registered class needs its own name`);
  const entry: RegisteredClass = { name, prototype: cls.prototype };
  byPrototype.set(cls.prototype, entry);
  byName.set(name, entry);
}

/** The registration of the class whose prototype is `proto`, if any. */
export function registeredByPrototype(proto: object | null): RegisteredClass | undefined {
  return proto === null ? undefined : byPrototype.get(proto);
}

/** The registration under `name`, if any. */
export function registeredByName(name: string): RegisteredClass | undefined {
  return byName.get(name);
}
