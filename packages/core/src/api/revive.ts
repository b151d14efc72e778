/**
 * MPI objects across threads. JavaScript objects cannot be shared between
 * threads; MPI objects are thin wrappers over records in the shared object
 * table, so a value crossing a thread carries handles, and the receiving
 * thread makes the wrappers live again: the same handle gives the same object
 * in one thread.
 *
 *   dehydrate(value)  Comm -> { __tsmpi: 'Comm', handle } (an Intercomm adds its remote endpoints and
 *                     send context, which live in its wrapper), Group -> { __tsmpi: 'Group', handle },
 *                     predefined Datatype / Op -> { __tsmpi, code },
 *                     derived Datatype -> { __tsmpi: 'Datatype', handle, committed } (its record
 *                     holds the encoded descriptor), Request -> { __tsmpi: 'Request', cell }
 *                     (request-relay.ts), PartitionedRequest -> { __tsmpi: 'PartitionedRequest', cells, ... }
 *                     (partitioned.ts: a view for pready / parrived)
 *   revive(value)     the reverse; also accepts the structured clone of a Comm
 *                     (own fields survive postMessage, the class does not)
 *
 * A revived Group is a view of the same record (it holds its own reference:
 * free it when done). A revived derived Datatype is this thread's copy of the
 * layout over the same record: requests in any thread reference that record,
 * and free() in any thread is the object's one user release, as for a
 * communicator (device/lifetime.ts). User ops hold a function and cannot cross.
 */
import { OBJECT_KIND, handleKind } from '../device/index.ts';
import { decodeTopology } from '../comm/index.ts';
import { ERR_ARG, mpiError } from '../util/index.ts';
import { Comm } from './comm.ts';
import { Intercomm } from './intercomm.ts';
import { topologyCommOf } from './topology-comm.ts';
import { Group } from './group.ts';
import { Request } from './request.ts';
import { RelayedRequest, relayOut, type RelayMark } from './request-relay.ts';
import { PartitionedRequest, type PartitionedMark } from './partitioned.ts';
import { Datatype, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64, BYTE } from './datatype.ts';
import { Op, SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC } from './op.ts';
import { COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE } from './predefined-comms.ts';
import { runtime, workerBoot } from '../runtime/index.ts';

const MARK = '__tsmpi';
const PREDEFINED_TYPES = [INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT32, FLOAT64, BYTE];
const PREDEFINED_OPS = [SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, MINLOC, MAXLOC];

/** This thread's wrappers of communicators, groups and derived datatypes made elsewhere, by handle. */
const comms = new Map<number, Comm>();
const groups = new Map<number, Group>();
const datatypes = new Map<number, Datatype>();

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

/**
 * A copy of `value` in which every MPI object (Comm, Group, Datatype, Op,
 * Request) is replaced by a reference postMessage can carry; the receiving
 * thread calls MPI.revive. MPI.Worker's postMessage and workerData do it for you.
 * @throws MPIError(ERR_ARG) for a user op or a freed datatype
 * @example parentPort.postMessage(MPI.dehydrate({ req: comm.irecv(0, 1) }));
 */
export function dehydrate(value: unknown): unknown {
  return copyWith(value, dehydrateLeaf);
}

function dehydrateLeaf(value: unknown): unknown {
  // The sender's own objects are what revive gives back in the sender's thread.
  if (value instanceof Comm) {
    if (!value._freed) comms.set(value._handle, value);
    const mark = { [MARK]: 'Comm', handle: value._freed ? -1 : value._handle, name: value.name };
    // An intercommunicator's remote group and send context live in its wrapper (api/intercomm.ts), not in
    // the record: they travel with the mark (both are fixed for the intercommunicator's life).
    return value.isInter ? { ...mark, remote: value._peers.slice(), remoteCtx: value._sendCtx } : mark;
  }
  if (value instanceof Group) {
    if (!value._freed && value._handle !== 0) groups.set(value._handle, value);
    return { [MARK]: 'Group', handle: value._freed ? -1 : value._handle };
  }
  if (value instanceof Datatype) {
    if (value._predefined) return { [MARK]: 'Datatype', code: value._code };
    if (value._freed) throw mpiError(ERR_ARG, 'dehydrate', `datatype ${value.name} has been freed`);
    const handle = value._share('dehydrate');
    datatypes.set(handle, value);
    return { [MARK]: 'Datatype', handle, committed: value._committed, name: value.name };
  }
  // A partitioned request crosses as a view of its shared marks: the other thread calls pready / parrived on it.
  if (value instanceof PartitionedRequest) return { [MARK]: 'PartitionedRequest', ...value._mark() };
  if (value instanceof Request) return { [MARK]: 'Request', ...relayOut(value, dehydrate) };
  if (value instanceof Op) {
    if (value._fn !== null) throw mpiError(ERR_ARG, 'dehydrate', 'user ops hold a function and cannot cross threads: create the op in the worker');
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
  if (value === null || typeof value !== 'object' || value instanceof Comm || value instanceof Datatype || value instanceof Op
    || value instanceof Group || value instanceof Request) return KEEP;
  const v = value as Record<string, unknown>;
  if (v[MARK] === 'Comm') return commOf(v.handle as number, typeof v.name === 'string' ? v.name : null, interOf(v.remote, v.remoteCtx));
  if (typeof v._handle === 'number' && typeof v._ctx === 'number' && v._endpoints instanceof Int32Array) {
    // The structured clone of an Intercomm keeps its remote group (_peers, disjoint from the local group) and send context.
    const isInter = v._peers instanceof Int32Array && v._peers.length > 0 && !v._endpoints.includes(v._peers[0]!);
    return commOf(v._handle, null, isInter ? interOf(v._peers, v._sendCtx) : null);
  }
  if (v[MARK] === 'Group') return groupOf(v.handle as number);
  // the structured clone of a Group posted as it is
  if (typeof v._handle === 'number' && typeof v._freed === 'boolean' && typeof v._logic === 'object') return groupOf(v._freed ? -1 : v._handle);
  if (v[MARK] === 'Datatype') {
    return typeof v.code === 'number' ? PREDEFINED_TYPES.find((t) => t._code === v.code) : datatypeOf(v.handle as number, v.committed === true, String(v.name));
  }
  // the structured clone of a Datatype posted as it is: predefined ones are known by code
  if (typeof v._code === 'number' && typeof v._predefined === 'boolean' && typeof v._extent === 'number') {
    if (v._predefined) return PREDEFINED_TYPES.find((t) => t._code === v._code);
    throw mpiError(ERR_ARG, 'revive', `derived datatype ${String(v.name)} was posted as it is: post MPI.dehydrate(value) (MPI.Worker's postMessage does it for you)`);
  }
  if (v[MARK] === 'Op') return PREDEFINED_OPS.find((o) => o._code === v.code);
  if (v[MARK] === 'Request') return new RelayedRequest(v as unknown as RelayMark, revive);
  if (v[MARK] === 'PartitionedRequest') return PartitionedRequest._revive(v as unknown as PartitionedMark);
  return KEEP;
}

/** A live record of `kind` behind `handle`, or an ERR_ARG that says what happened. */
function checkLive(handle: number, kind: number, what: string): void {
  if (handle === -1) throw mpiError(ERR_ARG, 'revive', `the ${what} had been freed before it was sent`);
  const objects = runtime('revive').device.objects;
  // Under --refcount gc a freed object may wait for the collector: freed is gone for the user.
  if (!objects.isLive(handle) || handleKind(handle) !== kind || objects.isUserFreed(handle)) {
    throw mpiError(ERR_ARG, 'revive', `handle ${handle} is not a live ${what} (freed before it arrived?)`);
  }
}

/** This thread's view of the group of `handle` (0: Group.EMPTY). */
function groupOf(handle: number): Group {
  if (handle === 0) return Group.EMPTY;
  const known = groups.get(handle);
  if (known !== undefined && !known._freed) return known;
  checkLive(handle, OBJECT_KIND.GROUP, 'group');
  const objects = runtime('revive').device.objects;
  const g = Group._view(new Int32Array(objects.blob(handle).slice().buffer), handle, 'revive');
  groups.set(handle, g);
  return g;
}

/** This thread's copy of the derived datatype of `handle`. */
function datatypeOf(handle: number, committed: boolean, name: string): Datatype {
  checkLive(handle, OBJECT_KIND.DATATYPE, 'datatype');
  const known = datatypes.get(handle);
  // A freed record's handle can come back for another type: the layout must match too.
  if (known !== undefined && !known._freed && known._sameLayoutAs(handle)) {
    if (committed && !known._committed) known.commit();
    return known;
  }
  const dt = Datatype._ofShared(handle, committed, name);
  datatypes.set(handle, dt);
  return dt;
}

/** The remote side of an intercommunicator as it crossed (remote endpoints, the context sends go out on); null: none. */
interface InterSide { readonly remote: Int32Array; readonly remoteCtx: number }
function interOf(remote: unknown, remoteCtx: unknown): InterSide | null {
  if (remote === undefined) return null;
  if (!(remote instanceof Int32Array) || remote.length === 0 || !Number.isInteger(remoteCtx)) {
    throw mpiError(ERR_ARG, 'revive', 'the intercommunicator arrived without its remote group or send context: post MPI.dehydrate(value) (MPI.Worker\'s postMessage does it for you)');
  }
  return { remote, remoteCtx: remoteCtx as number };
}

/** The communicator of `handle` in this thread (an Intercomm when `inter` gives its remote side). */
function commOf(handle: number, name: string | null, inter: InterSide | null = null): Comm {
  const rt = runtime('revive');
  const predefined = rt.predefined.indexOf(handle);
  if (predefined >= 0) return [COMM_WORLD, COMM_SELF, COMM_ENDPOINTS, COMM_CLIQUE][predefined]!;
  const objects = rt.device.objects;
  checkLive(handle, OBJECT_KIND.COMM, 'communicator');
  let c = comms.get(handle);
  // A freed record's handle can come back for another communicator: the context id must match too.
  if (c !== undefined && !c._freed && c._ctx === objects.data(handle, 0)) return c;
  const group = objects.data(handle, 1);
  const members = new Int32Array(objects.blob(group).slice().buffer);
  // A topology communicator's record keeps its topology: the same class, the same topology here.
  const topology = decodeTopology(objects.blob(handle));
  const commName = name ?? `comm#${handle & 0xffffff}`;
  if (inter !== null) {
    c = new Intercomm(commName, objects.data(handle, 0), members, inter.remote, inter.remoteCtx);
    c._handle = handle;
  } else {
    c = topology === null ? new Comm(commName, objects.data(handle, 0), members, false) : topologyCommOf(topology, commName, objects.data(handle, 0), members);
    c._setEndpoints(members, handle);
  }
  comms.set(handle, c);
  return c;
}

/** The user's workerData of an MPI.Worker, live after init (MPI.workerData). */
export let workerData: unknown = undefined;

/** Called by init in a worker thread. */
export function reviveWorkerData(): void {
  workerData = revive(workerBoot()?.userData);
}
