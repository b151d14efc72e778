/**
 * MPI objects across threads. JavaScript objects cannot be shared between
 * threads; MPI objects are thin wrappers over records in the shared object
 * table, so a value crossing a thread carries handles, and the receiving
 * thread makes the wrappers live again: the same handle gives the same object
 * in one thread.
 *
 *   dehydrate(value)  Comm -> { __tsmpi: 'Comm', handle }, predefined Datatype / Op -> { __tsmpi, code }
 *   revive(value)     the reverse; also accepts the structured clone of a Comm
 *                     (own fields survive postMessage, the class does not)
 */
import { OBJECT_KIND } from '../device/index.ts';
import { ERR_ARG, mpiError } from '../util/index.ts';
import { Comm } from './comm.ts';
import { Datatype, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64, BYTE } from './datatype.ts';
import { Op, SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC } from './op.ts';
import { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE } from './predefined-comms.ts';
import { runtime } from './runtime.ts';
import { workerBoot } from './worker-boot.ts';

const MARK = '__tsmpi';
const PREDEFINED_TYPES = [INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64, BYTE];
const PREDEFINED_OPS = [SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC];

/** This thread's wrappers of communicators made elsewhere, by handle. */
const comms = new Map<number, Comm>();

/** What a leaf function returns for a value it does not replace. */
const KEEP = Symbol('keep');

/**
 * A copy of `value` through arrays and plain objects (cycles preserved) in
 * which `leaf` may replace any value; other values are kept as they are.
 */
function copyWith(value: unknown, leaf: (v: unknown) => unknown, seen = new Map<object, unknown>()): unknown {
  const replaced = leaf(value);
  if (replaced !== KEEP) return replaced;
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  if (seen.has(value)) return seen.get(value);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (const v of value) out.push(copyWith(v, leaf, seen));
    return out;
  }
  if (Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    seen.set(value, out);
    for (const [k, v] of Object.entries(value)) out[k] = copyWith(v, leaf, seen);
    return out;
  }
  return value;
}

/** A copy of `value` in which every MPI object is replaced by a transferable reference. */
export function dehydrate(value: unknown): unknown {
  return copyWith(value, dehydrateLeaf);
}

function dehydrateLeaf(value: unknown): unknown {
  if (value instanceof Comm) return { [MARK]: 'Comm', handle: value._handle, name: value.name };
  if (value instanceof Datatype) {
    if (!value._predefined) throw mpiError(ERR_ARG, 'Worker', `datatype ${value.name} is derived: send its handle-free description (rebuild it in the worker) instead`);
    return { [MARK]: 'Datatype', code: value._code };
  }
  if (value instanceof Op) {
    if (value._fn !== null) throw mpiError(ERR_ARG, 'Worker', 'user ops hold a function and cannot cross threads: create the op in the worker');
    return { [MARK]: 'Op', code: value._code };
  }
  return KEEP;
}

/**
 * A copy of `value` in which every MPI object is live in this thread.
 * @example const comm = MPI.revive(event.data.comm);
 */
export function revive<T>(value: T): T {
  return copyWith(value, reviveLeaf) as T;
}

function reviveLeaf(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Comm || value instanceof Datatype || value instanceof Op) return KEEP;
  const v = value as Record<string, unknown>;
  if (v[MARK] === 'Comm' || (typeof v._handle === 'number' && typeof v._ctx === 'number' && v._endpoints instanceof Int32Array)) {
    return commOf((v.handle ?? v._handle) as number, typeof v.name === 'string' ? v.name : null);
  }
  if (v[MARK] === 'Datatype') return PREDEFINED_TYPES.find((t) => t._code === v.code);
  if (v[MARK] === 'Op') return PREDEFINED_OPS.find((o) => o._code === v.code);
  return KEEP;
}

/** The communicator of `handle` in this thread. */
function commOf(handle: number, name: string | null): Comm {
  const rt = runtime('revive');
  const predefined = rt.predefined.indexOf(handle);
  if (predefined >= 0) return [COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE][predefined]!;
  let c = comms.get(handle);
  if (c !== undefined) return c;
  const objects = rt.device.objects;
  if (!objects.isLive(handle) || (handle >>> 26) !== OBJECT_KIND.COMM) {
    throw mpiError(ERR_ARG, 'revive', `handle ${handle} is not a live communicator (freed before it arrived?)`);
  }
  const group = objects.data(handle, 1);
  const members = new Int32Array(objects.blob(group).slice().buffer);
  c = new Comm(name ?? `comm#${handle & 0xffffff}`, objects.data(handle, 0), members, false);
  c._setEndpoints(members, handle);
  comms.set(handle, c);
  return c;
}

/** The user's workerData of an MPI.Worker, live after init (MPI.workerData). */
export let workerData: unknown = undefined;

/** Called by init in a worker thread. */
export function reviveWorkerData(): void {
  workerData = revive(workerBoot()?.userData);
}
