/**
 * Attribute caching on communicators (API.md Part 2 "Attributes, info and
 * error handlers"; MPI 4.0 section 7.7): keyvals with copy and delete
 * callbacks, the attributes of each communicator, and the predefined
 * attributes of COMM_WORLD.
 *
 * State: this thread's keyvals (a counter from 1 and a table) and, per
 * communicator record (its object-table handle), the attributes set on it in
 * this thread, in the order they were set. Attribute values are JavaScript
 * values and callbacks are functions, which cannot cross threads: attributes
 * are per thread (each thread sees those it set), like a user Op.
 *
 * Callbacks (MPI 4.0 7.7.2 and 7.7.3):
 * - copy(oldComm, keyval, value), at the parent, when a communicator is
 *   duplicated (dup, idup, dupWithInfo, idupWithInfo; not split or create):
 *   its result is the new communicator's attribute, undefined (or no copy
 *   callback: MPI_COMM_NULL_COPY_FN) means "not copied";
 * - delete(comm, keyval, value) when the attribute goes: deleteAttr, setAttr
 *   over an existing value, and Comm.free (every attribute, in the reverse
 *   order they were set, as MPI 4.0 asks of COMM_SELF at finalize).
 * A callback that throws makes the call fail with that error, and the
 * attribute stays (MPI: the call returns the callback's error code).
 *
 * freeKeyval marks the keyval invalid for new set/get/delete; attributes
 * already set with it stay until deleted or their communicator is freed, and
 * their delete callback still runs then (MPI 4.0 7.7.2).
 *
 * Predefined keyvals (values as in MPICH's mpi.h, except TAG_UB, whose keyval
 * is its own value so that API.md's `MPI.TAG_UB` stays the largest tag): their
 * attributes exist on COMM_WORLD only, read-only (ERR_KEYVAL when set,
 * deleted or freed).
 */
import { universeOf } from '../config/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { ERR_ARG, ERR_KEYVAL, mpiError } from '../util/index.ts';
import { describe } from './buffer.ts';
import { ANY_SOURCE, PROC_NULL, TAG_UB } from './constants.ts';

/** The keyval of TAG_UB's attribute: the value itself (API.md Part 1 fixes MPI.TAG_UB as the largest tag). */
export const TAG_UB_KEYVAL = TAG_UB;
/** MPI_HOST (MPICH's value). */
export const HOST = 0x64400003;
/** MPI_IO (MPICH's value). */
export const IO = 0x64400005;
/** MPI_WTIME_IS_GLOBAL (MPICH's value). */
export const WTIME_IS_GLOBAL = 0x64400007;
/** MPI_UNIVERSE_SIZE (MPICH's value). */
export const UNIVERSE_SIZE = 0x64400009;
/** MPI_APPNUM (MPICH's value). */
export const APPNUM = 0x6440000d;

/** The predefined keyvals and what their attribute is on COMM_WORLD, given the job's size. */
const PREDEFINED: ReadonlyMap<number, (worldSize: number) => unknown> = new Map<number, (worldSize: number) => unknown>([
  [TAG_UB_KEYVAL, () => TAG_UB],
  // No process is a distinguished host (MPI 4.0 9.1.2: PROC_NULL when there is none).
  [HOST, () => PROC_NULL],
  // Every process may do I/O (node:fs).
  [IO, () => ANY_SOURCE],
  // MPI.wtime() is performance.now() of each process: not synchronized.
  [WTIME_IS_GLOBAL, () => false],
  // The job's process numbers, its slots (docs/adr/0040-dynamic-processes.md): what spawn can still use plus what it used.
  [UNIVERSE_SIZE, (worldSize) => Math.max(worldSize, universeOf(runtimeOrNull()?.job ?? null))],
  // spawnMultiple's command index in a spawned world; 0 otherwise (no MPMD launch yet).
  [APPNUM, () => runtimeOrNull()?.job?.appnum ?? 0],
]);

/** A communicator as the callbacks see it (the public Comm). */
export type AttrComm = object;

/** Callbacks of a keyval (API.md: Comm.createKeyval). */
export interface KeyvalFns {
  copy?: (comm: any, keyval: number, value: unknown) => unknown | undefined;
  delete?: (comm: any, keyval: number, value: unknown) => void;
}

interface Keyval {
  readonly copy: NonNullable<KeyvalFns['copy']> | null;
  readonly delete: NonNullable<KeyvalFns['delete']> | null;
  isFreed: boolean;
}

const keyvals = new Map<number, Keyval>();
let nextKeyval = 1;
/** Attributes per communicator record handle, in the order they were set. */
const attrsByComm = new Map<number, Map<number, unknown>>();

/**
 * A new keyval (MPI_Comm_create_keyval).
 * @throws MPIError(ERR_ARG) when fns or one of its callbacks is not what it should be
 */
export function createKeyval(fns: KeyvalFns | undefined, call: string): number {
  if (fns !== undefined && (fns === null || typeof fns !== 'object')) {
    throw mpiError(ERR_ARG, call, `fns is ${describe(fns)}: expected { copy?, delete? } or nothing`);
  }
  const copy = fns?.copy ?? null;
  const del = fns?.delete ?? null;
  if (copy !== null && typeof copy !== 'function') throw mpiError(ERR_ARG, call, `fns.copy is ${describe(copy)}: expected a function (comm, keyval, value) => newValue | undefined`);
  if (del !== null && typeof del !== 'function') throw mpiError(ERR_ARG, call, `fns.delete is ${describe(del)}: expected a function (comm, keyval, value) => void`);
  // Skip the predefined values (TAG_UB is a small enough integer to be reached in principle).
  while (PREDEFINED.has(nextKeyval)) nextKeyval++;
  const k = nextKeyval++;
  keyvals.set(k, { copy, delete: del, isFreed: false });
  return k;
}

/** Marks a keyval freed (MPI_Comm_free_keyval). @throws MPIError(ERR_KEYVAL) for a predefined, unknown or freed keyval */
export function freeKeyval(keyval: number, call: string): void {
  liveKeyval(keyval, call, 'free');
  keyvals.get(keyval)!.isFreed = true;
  dropIfUnused(keyval);
}

/** The live user keyval `keyval`, or ERR_KEYVAL naming what was wrong. */
function liveKeyval(keyval: unknown, call: string, what: string): Keyval {
  if (typeof keyval === 'number' && PREDEFINED.has(keyval)) {
    throw mpiError(ERR_KEYVAL, call, `keyval ${keyval} is predefined: its attribute cannot be ${what === 'free' ? 'freed' : `${what === 'set' ? 'set' : 'deleted'}`}`);
  }
  const kv = typeof keyval === 'number' ? keyvals.get(keyval) : undefined;
  if (kv === undefined) throw mpiError(ERR_KEYVAL, call, `keyval ${describe(keyval)} is not a keyval of Comm.createKeyval (in this thread)`);
  if (kv.isFreed) throw mpiError(ERR_KEYVAL, call, `keyval ${keyval} has been freed`);
  return kv;
}

/** A freed keyval no attribute uses any more is forgotten. */
function dropIfUnused(keyval: number): void {
  const kv = keyvals.get(keyval);
  if (kv === undefined || !kv.isFreed) return;
  for (const attrs of attrsByComm.values()) if (attrs.has(keyval)) return;
  keyvals.delete(keyval);
}

/**
 * Sets the attribute (MPI_Comm_set_attr); an existing value's delete callback runs first.
 * @throws MPIError(ERR_KEYVAL) for a predefined, unknown or freed keyval; the delete callback's error
 */
export function setAttr(comm: AttrComm, handle: number, keyval: number, value: unknown, call: string): void {
  const kv = liveKeyval(keyval, call, 'set');
  let attrs = attrsByComm.get(handle);
  if (attrs !== undefined && attrs.has(keyval)) {
    kv.delete?.(comm, keyval, attrs.get(keyval));
    // A new value is a new insertion: it moves to the end of the order.
    attrs.delete(keyval);
  }
  if (attrs === undefined) {
    attrs = new Map();
    attrsByComm.set(handle, attrs);
  }
  attrs.set(keyval, value);
}

/**
 * The attribute, or undefined when none is set (MPI_Comm_get_attr's flag false).
 * @param isWorld whether the communicator is COMM_WORLD (the predefined attributes)
 * @throws MPIError(ERR_KEYVAL) for an unknown or freed keyval
 */
export function getAttr(handle: number, keyval: number, isWorld: boolean, worldSize: number, call: string): unknown {
  const predefined = PREDEFINED.get(keyval);
  if (predefined !== undefined) return isWorld ? predefined(worldSize) : undefined;
  liveKeyval(keyval, call, 'get');
  return attrsByComm.get(handle)?.get(keyval);
}

/**
 * Deletes the attribute, running its delete callback (MPI_Comm_delete_attr). Deleting one that is
 * not set does nothing (MPICH).
 * @throws MPIError(ERR_KEYVAL) for a predefined, unknown or freed keyval; the callback's error
 */
export function deleteAttr(comm: AttrComm, handle: number, keyval: number, call: string): void {
  const kv = liveKeyval(keyval, call, 'delete');
  const attrs = attrsByComm.get(handle);
  if (attrs === undefined || !attrs.has(keyval)) return;
  kv.delete?.(comm, keyval, attrs.get(keyval));
  attrs.delete(keyval);
}

/**
 * Deletes every attribute of a communicator being freed, last set first, running the delete
 * callbacks (also of freed keyvals). Stops at the first callback that throws (that attribute and the
 * ones set before it stay) and rethrows its error.
 */
export function deleteAllAttrs(comm: AttrComm, handle: number): void {
  const attrs = attrsByComm.get(handle);
  if (attrs === undefined) return;
  for (const [k, v] of [...attrs].reverse()) {
    keyvals.get(k)?.delete?.(comm, k, v);
    attrs.delete(k);
    dropIfUnused(k);
  }
  attrsByComm.delete(handle);
}

/**
 * dup's last step (Comm's and Intercomm's): `copy` gets `old`'s attributes through copyAttrs; if a
 * copy callback throws, `copy` is freed and the error rethrown (the dup fails, nothing leaks).
 */
export function inheritAttrs(old: AttrComm & { readonly _handle: number }, copy: AttrComm & { readonly _handle: number; free(): void }): void {
  try {
    copyAttrs(old, old._handle, copy, copy._handle);
  } catch (e) {
    copy.free();
    throw e;
  }
}

/**
 * Copies the attributes of a communicator being duplicated (in the order they were set) onto the
 * new one through the copy callbacks. On a callback's error, what was copied is deleted again
 * (with the delete callbacks) and the error is rethrown.
 */
export function copyAttrs(oldComm: AttrComm, oldHandle: number, newComm: AttrComm, newHandle: number): void {
  const attrs = attrsByComm.get(oldHandle);
  if (attrs === undefined) return;
  const copied = new Map<number, unknown>();
  attrsByComm.set(newHandle, copied);
  try {
    for (const [k, v] of [...attrs]) {
      const kv = keyvals.get(k);
      if (kv === undefined || kv.isFreed || kv.copy === null) continue;
      const out = kv.copy(oldComm, k, v);
      if (out !== undefined) copied.set(k, out);
    }
  } catch (e) {
    deleteAllAttrs(newComm, newHandle);
    throw e;
  }
}

/** Forgets the attributes of a record without callbacks (a communicator whose creation failed). */
export function forgetAttrs(handle: number): void {
  attrsByComm.delete(handle);
}
