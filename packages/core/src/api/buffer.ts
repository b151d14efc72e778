/**
 * BufSpec: how buffer methods name their data (API.md "Buffer messages").
 *   typedArray                      the whole array, its element type
 *   [view, datatype]                as many whole items as fit
 *   [view, count, datatype]         `count` items
 * Resolution checks the buffer, count and datatype once, before any state
 * changes (datatype/buf-spec.ts does the checks).
 *
 * Wire form: a buffer message carries the packed items (count * size bytes,
 * type-map order, no gaps). A layout that is one gap-free run travels as a
 * view of the user's memory (no copy: the point-to-point hot path, where a
 * bare typed array costs at most one Uint8Array view). Other layouts are
 * packed into a temporary buffer on send, and received into a temporary
 * packed buffer that DevRequest.finish unpacks on completion; the closure
 * holds the type map, so a datatype freed while the request is pending still
 * unpacks correctly.
 */
import { MAX_MESSAGE_BYTES, type DevRequest } from '../device/index.ts';
import { bytesOfView, maxCount, packInto, packToNew, resolveBuffer, spanBytes, unpackFrom, type TypeMap } from '../datatype/index.ts';
import { ERR_ARG, ERR_BUFFER, ERR_COUNT, ERR_TRUNCATE, ERR_TYPE, mpiError, type MPIError } from '../util/index.ts';
import { Datatype, datatypeOfView } from './datatype.ts';

export type BufSpec = ArrayBufferView | [ArrayBufferView, Datatype] | [ArrayBufferView, number, Datatype];

/** A buffer argument, resolved and checked. */
export interface ResolvedBuf {
  /** the user's memory from displacement 0 */
  readonly user: Uint8Array;
  readonly count: number;
  readonly datatype: Datatype;
  readonly map: TypeMap;
  /** bytes of the packed items: count * size */
  readonly packedBytes: number;
  /** the packed items themselves when they are one gap-free run in the user's memory (an alias), else null */
  readonly contiguous: Uint8Array | null;
}

function isView(x: unknown): x is ArrayBufferView {
  return ArrayBuffer.isView(x);
}

/**
 * Checks that `dt` is a Datatype usable in a new call.
 * @throws MPIError(ERR_TYPE) when it is not a Datatype, is freed or is not committed.
 */
export function checkDatatype(dt: unknown, call: string, arg: string): asserts dt is Datatype {
  if (!(dt instanceof Datatype)) throw mpiError(ERR_TYPE, call, `${arg} is ${describe(dt)}: expected an MPI.Datatype`);
  if (dt._freed) throw mpiError(ERR_TYPE, call, `${arg} ${dt.name} has been freed`);
  if (!dt._committed) throw mpiError(ERR_TYPE, call, `${arg} ${dt.name} is not committed: call commit() first`);
}

/**
 * Resolves a BufSpec; `arg` names it in errors (buf, sendbuf, recvbuf).
 * @throws MPIError(ERR_BUFFER) when it is not a BufSpec; ERR_TYPE for a bad
 *   datatype; ERR_COUNT when the count is bad or the items do not fit.
 */
export function resolveBuf(spec: unknown, call: string, arg: string): ResolvedBuf {
  let view: unknown;
  let count: number | undefined;
  let dt: Datatype;
  if (isView(spec)) {
    view = spec;
    dt = datatypeOfView(spec);
  } else {
    if (!Array.isArray(spec) || spec.length < 2 || spec.length > 3) {
      throw mpiError(ERR_BUFFER, call, `${arg} is ${describe(spec)}: expected a typed array, a DataView, [buffer, datatype] or [buffer, count, datatype]`);
    }
    view = spec[0];
    if (!isView(view)) throw mpiError(ERR_BUFFER, call, `${arg}[0] is ${describe(view)}: expected a typed array or DataView`);
    const last: unknown = spec[spec.length - 1];
    checkDatatype(last, call, `${arg} datatype`);
    dt = last;
    if (spec.length === 3) count = spec[1] as number;
  }
  const r = resolveBuffer(call, view, count, dt._record, arg);
  const map = r.typeMap;
  const user = r.bytes;
  if (r.packedBytes > MAX_MESSAGE_BYTES) throw messageTooLong(call, arg, r.packedBytes);
  const contiguous = map.isContiguous ? user.subarray(map.trueLb, map.trueLb + r.packedBytes) : null;
  return { user, count: r.count, datatype: dt, map, packedBytes: r.packedBytes, contiguous };
}

/** The packed items of a resolved buffer: an alias when contiguous, else a fresh copy. */
export function packedOf(rb: ResolvedBuf): Uint8Array {
  return rb.contiguous ?? packToNew(rb.user, rb.count, rb.map);
}

/** Where a receive into `rb` lands: the user's memory when contiguous, else a fresh packed buffer (see unpackArea). */
export function recvAreaOf(rb: ResolvedBuf): Uint8Array {
  return rb.contiguous ?? new Uint8Array(rb.packedBytes);
}

/** Copies the first `byteLength` packed bytes of `area` (from recvAreaOf) into the user's layout; nothing to do when contiguous. */
export function unpackArea(rb: ResolvedBuf, area: Uint8Array, byteLength = rb.packedBytes): void {
  if (rb.contiguous !== null) return;
  unpackFrom(area, 0, byteLength, rb.map, rb.user);
}

/**
 * The datatype handle a request on a checked BufSpec references: a bare view's predefined
 * type only when the strategy counts predefined objects (naive), else 0 for a bare view; 0 for
 * no buffer (null, IN_PLACE: a collective's persistent form may have none).
 */
export function typeHandleOf(spec: unknown, countsPredefined: boolean): number {
  if (isView(spec)) return countsPredefined ? datatypeOfView(spec)._handle : 0;
  if (!Array.isArray(spec)) return 0;
  const list = spec as unknown[];
  return (list[list.length - 1] as Datatype)._handle;
}

/**
 * The packed items of `[view, datatype]` or `[view, count, datatype]` when the datatype is dense
 * (Datatype._dense: its items are one gap-free run, as a contiguous derived type's are) and the
 * spec passes every check resolveBuf makes: an alias of the user's memory, the view itself when
 * it is a Uint8Array holding exactly the items (no allocation), else one Uint8Array view.
 * Returns null for anything else, including a spec resolveBuf rejects, so that the caller falls
 * back to resolveBuf, which throws the error. This is the point-to-point path of derived types:
 * resolveBuf's two result objects, its type-map lookup and its subarray cost a derived-type
 * message about a third of the local-path rate (docs/notebook/performance-2026-11.md 4.10).
 */
export function denseBytesOf(spec: unknown): Uint8Array | null {
  if (!Array.isArray(spec)) return null;
  const n = spec.length;
  if (n !== 2 && n !== 3) return null;
  const dt: unknown = spec[n - 1];
  if (!(dt instanceof Datatype)) return null;
  const map = dt._dense;
  if (map === null || dt._freed) return null;
  const view: unknown = spec[0];
  if (!isView(view)) return null;
  const byteLength = view.byteLength;
  let count: number;
  if (n === 3) {
    const c: unknown = spec[1];
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0) return null;
    count = c;
  } else {
    // resolveBuffer's default: as many whole items as fit (a dense type has extent = size > 0, trueLb >= 0)
    count = Math.min(Math.floor(byteLength / map.extent), maxCount(byteLength, map));
  }
  const packedBytes = count * map.size;
  // count items span trueLb + count * size bytes (extent = size); an empty spec past the end goes the long way
  const end = map.trueLb + packedBytes;
  if (end > byteLength || packedBytes > MAX_MESSAGE_BYTES) return null;
  if (map.trueLb === 0 && packedBytes === byteLength && view.constructor === Uint8Array) return view as Uint8Array;
  return new Uint8Array(view.buffer, view.byteOffset + map.trueLb, packedBytes);
}

/**
 * The bytes to send for a BufSpec (point-to-point hot path: a bare Uint8Array
 * is returned as is, any other bare view or a dense datatype's spec costs at most one
 * Uint8Array view).
 */
export function bytesOfBuf(spec: unknown, call: string, arg: string): Uint8Array {
  const bytes = spec instanceof Uint8Array ? spec : isView(spec) ? bytesOfView(spec) : (denseBytesOf(spec) ?? packedOf(resolveBuf(spec, call, arg)));
  if (bytes.length > MAX_MESSAGE_BYTES) throw messageTooLong(call, arg, bytes.length);
  return bytes;
}

/**
 * The error for a buffer or value of more than MAX_MESSAGE_BYTES (4 GiB - 1) bytes.
 * @returns MPIError(ERR_COUNT) naming the call, the argument and both sizes
 */
export function messageTooLong(call: string, arg: string, bytes: number): MPIError {
  return mpiError(ERR_COUNT, call, `${arg} is ${bytes} bytes; one message carries at most ${MAX_MESSAGE_BYTES} bytes (4 GiB - 1): split it`);
}

/**
 * Sets up receive request `r` for a BufSpec: r.buf is the user's memory, or
 * a packed buffer that r.finish unpacks on completion.
 */
export function setRecvBuf(r: DevRequest, spec: unknown, call: string, arg: string): void {
  if (spec instanceof Uint8Array) {
    r.buf = spec;
    return;
  }
  if (isView(spec)) {
    r.buf = bytesOfView(spec);
    return;
  }
  const dense = denseBytesOf(spec);
  if (dense !== null) {
    r.buf = dense;
    return;
  }
  const t = recvTargetOf(spec, call, arg);
  r.buf = t.buf;
  r.finish = t.finish;
}

/** A receive target that can be reused by every start of a persistent receive. */
export interface RecvTarget {
  readonly buf: Uint8Array;
  readonly finish: ((r: DevRequest) => void) | null;
}

/** Resolves a receive BufSpec once (RecvInit): the buffer to fill and the unpack step, if any. */
export function recvTargetOf(spec: unknown, call: string, arg: string): RecvTarget {
  const rb = resolveBuf(spec, call, arg);
  if (rb.contiguous !== null) return { buf: rb.contiguous, finish: null };
  const area = new Uint8Array(rb.packedBytes);
  // The closure keeps the type map: a datatype freed while the receive is pending still unpacks.
  return { buf: area, finish: (d) => unpackArea(rb, area, Math.min(d.count, area.length)) };
}

/**
 * Resolves a send BufSpec once (SendInit): a function that returns the bytes
 * to send now (for a non-contiguous layout it packs the current contents
 * again, into one buffer reused by every start).
 */
export function sendSourceOf(spec: unknown, call: string, arg: string): () => Uint8Array {
  if (isView(spec)) {
    const bytes = bytesOfBuf(spec, call, arg);
    return () => bytes;
  }
  const rb = resolveBuf(spec, call, arg);
  const fixed = rb.contiguous;
  if (fixed !== null) return () => fixed;
  const area = new Uint8Array(rb.packedBytes);
  return () => {
    packInto(rb.user, rb.count, rb.map, area, 0);
    return area;
  };
}

/**
 * MPI.pack: the packed items of a BufSpec (count * size bytes, type-map order), in a new array.
 * @throws MPIError(ERR_BUFFER | ERR_TYPE | ERR_COUNT) for a bad BufSpec.
 * @example const bytes = MPI.pack([matrix, 1, column]);
 */
export function pack(buf: BufSpec): Uint8Array {
  const rb = resolveBuf(buf, 'pack', 'buf');
  return packToNew(rb.user, rb.count, rb.map);
}

/**
 * MPI.unpack: copies packed bytes into the layout of a BufSpec. Fewer bytes
 * than the BufSpec holds fill a prefix, as a short receive does.
 * @throws MPIError(ERR_TRUNCATE) when `bytes` holds more than the BufSpec; ERR_BUFFER | ERR_TYPE | ERR_COUNT for a bad BufSpec.
 * @example MPI.unpack(bytes, [matrix, 1, column]);
 */
export function unpack(bytes: Uint8Array, buf: BufSpec): void {
  if (!(bytes instanceof Uint8Array)) throw mpiError(ERR_BUFFER, 'unpack', `bytes is ${describe(bytes)}: expected a Uint8Array`);
  const rb = resolveBuf(buf, 'unpack', 'buf');
  if (bytes.length > rb.packedBytes) {
    throw mpiError(ERR_TRUNCATE, 'unpack', `bytes holds ${bytes.length} bytes but buf takes ${rb.packedBytes} (${rb.count} items of ${rb.datatype.name})`);
  }
  unpackFrom(bytes, 0, bytes.length, rb.map, rb.user);
}

export function describe(x: unknown): string {
  if (x === null) return 'null';
  if (x === undefined) return 'undefined';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (typeof x === 'object') return `a ${(x as object).constructor?.name ?? 'object'}`;
  return `${typeof x} ${String(x)}`;
}

/**
 * A `[buf, counts, displs]` argument of the v-collectives, resolved: counts and
 * displacements in items of buf's datatype, checked against the buffer.
 * `v` is what coll/ sees (counts and displacements in BYTES): the user's
 * memory itself when the type is contiguous, else a packed staging buffer
 * with the blocks back to back, which pack() fills from and unpack() copies
 * back to the user's layout.
 */
export interface VPlan {
  readonly rb: ResolvedBuf;
  readonly counts: readonly number[];
  readonly displs: readonly number[];
  readonly v: { readonly buf: Uint8Array; readonly counts: number[]; readonly displs: number[] };
  /** true: v.buf is the user's memory (nothing to pack or unpack) */
  readonly isDirect: boolean;
}

/**
 * Resolves `[buf, counts, displs]` for a communicator of `size` ranks.
 * @throws MPIError(ERR_BUFFER) when it is not such a triple; ERR_COUNT for bad
 *   counts or a block outside the buffer; ERR_ARG for bad displacements.
 */
export function resolveV(spec: unknown, size: number, call: string, arg: string): VPlan {
  if (!Array.isArray(spec) || spec.length !== 3) {
    throw mpiError(ERR_BUFFER, call, `${arg} is ${describe(spec)}: expected [buffer, counts, displs]`);
  }
  const rb = resolveBuf(spec[0], call, `${arg}[0]`);
  const counts = intList(spec[1], size, call, `${arg} counts`, ERR_COUNT);
  const displs = intList(spec[2], size, call, `${arg} displs`, ERR_ARG);
  const { map, user } = rb;
  const extent = map.extent;
  for (let i = 0; i < size; i++) {
    const end = displs[i]! * extent + spanBytes(counts[i]!, map);
    if (counts[i]! > 0 && end > user.length) {
      throw mpiError(ERR_COUNT, call, `${arg} block ${i} (displs ${displs[i]}, counts ${counts[i]} of ${rb.datatype.name}) ends at byte ${end} but the buffer has ${user.length} bytes`);
    }
  }
  const byteCounts = counts.map((c) => c * map.size);
  const isDirect = map.isContiguous && map.trueLb === 0 && extent === map.size;
  let v: VPlan['v'];
  if (isDirect) {
    v = { buf: user, counts: byteCounts, displs: displs.map((d) => d * extent) };
  } else {
    const packedDispls: number[] = [];
    let at = 0;
    for (const c of byteCounts) {
      packedDispls.push(at);
      at += c;
    }
    v = { buf: new Uint8Array(at), counts: byteCounts, displs: packedDispls };
  }
  return { rb, counts, displs, v, isDirect };
}

/** Copies block i (or every block) of the user's layout into the staging buffer. */
export function packV(p: VPlan, only?: number): void {
  if (p.isDirect) return;
  const { map, user } = p.rb;
  for (let i = only ?? 0; i < (only === undefined ? p.counts.length : only + 1); i++) {
    packInto(user.subarray(p.displs[i]! * map.extent), p.counts[i]!, map, p.v.buf, p.v.displs[i]!);
  }
}

/** Copies every block of the staging buffer back into the user's layout. */
export function unpackV(p: VPlan): void {
  if (p.isDirect) return;
  const { map, user } = p.rb;
  for (let i = 0; i < p.counts.length; i++) {
    unpackFrom(p.v.buf, p.v.displs[i]!, p.v.counts[i]!, map, user.subarray(p.displs[i]! * map.extent));
  }
}

function intList(x: unknown, size: number, call: string, what: string, errorClass: number): number[] {
  if (!Array.isArray(x) && !(ArrayBuffer.isView(x) && !(x instanceof DataView))) {
    throw mpiError(errorClass, call, `${what} is ${describe(x)}: expected an array of ${size} integers >= 0`);
  }
  const list = Array.from(x as ArrayLike<number>, Number);
  if (list.length !== size) throw mpiError(errorClass, call, `${what} has ${list.length} entries: expected one per rank (${size})`);
  for (let i = 0; i < size; i++) {
    if (!Number.isSafeInteger(list[i]) || list[i]! < 0) throw mpiError(errorClass, call, `${what}[${i}] is ${String(list[i])}: expected an integer >= 0`);
  }
  return list;
}

/** A `[buf, counts, byteDispls, types]` argument of Alltoallw and NeighborAlltoallw: block i is counts[i] items of types[i] at byte byteDispls[i]. */
export type WBufSpec = [ArrayBufferView, number[], number[], Datatype[]];

/** A WBufSpec, resolved: its blocks, and a staging buffer that holds them packed back to back (what coll/ sees). */
export interface WPlan {
  readonly blocks: ResolvedBuf[];
  /** the packed blocks back to back (a staging buffer) */
  readonly v: { buf: Uint8Array; counts: number[]; displs: number[] };
}

/**
 * Resolves `[buf, counts, byteDispls, types]` with one entry per `peer` (rank, in-neighbour, ...).
 * @throws MPIError(ERR_BUFFER) when it is not such a quadruple; ERR_COUNT for lists of the wrong length; ERR_ARG for a bad displacement; ERR_TYPE for a bad datatype
 */
export function resolveW(spec: unknown, n: number, call: string, arg: string, peer: string): WPlan {
  if (!Array.isArray(spec) || spec.length !== 4 || !ArrayBuffer.isView(spec[0])) {
    throw mpiError(ERR_BUFFER, call, `${arg} is ${describe(spec)}: expected [buffer, counts, byteDispls, types]`);
  }
  const [view, counts, displs, types] = spec as [ArrayBufferView, unknown, unknown, unknown];
  for (const [list, what] of [[counts, 'counts'], [displs, 'byteDispls'], [types, 'types']] as const) {
    if (!Array.isArray(list) || list.length !== n) throw mpiError(ERR_COUNT, call, `${arg} ${what} is ${describe(list)}: expected one entry per ${peer} (${n})`);
  }
  const blocks: ResolvedBuf[] = [];
  const byteCounts: number[] = [];
  const byteDispls: number[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const d = (displs as unknown[])[i];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0 || d > view.byteLength) {
      throw mpiError(ERR_ARG, call, `${arg} byteDispls[${i}] is ${String(d)}: expected an integer 0..${view.byteLength} (the buffer's bytes)`);
    }
    const region = new Uint8Array(view.buffer, view.byteOffset + d, view.byteLength - d);
    const rb = resolveBuf([region, (counts as unknown[])[i] as number, (types as unknown[])[i] as Datatype], call, `${arg} block ${i}`);
    blocks.push(rb);
    byteCounts.push(rb.packedBytes);
    byteDispls.push(at);
    at += rb.packedBytes;
  }
  return { blocks, v: { buf: new Uint8Array(at), counts: byteCounts, displs: byteDispls } };
}

/** Copies every block's current contents into the staging buffer. */
export function stageW(w: WPlan): void {
  w.blocks.forEach((rb, i) => w.v.buf.set(packedOf(rb), w.v.displs[i]!));
}

/** Copies every block of the staging buffer back into the user's layout. */
export function unstageW(w: WPlan): void {
  w.blocks.forEach((rb, i) => {
    const block = w.v.buf.subarray(w.v.displs[i]!, w.v.displs[i]! + w.v.counts[i]!);
    if (rb.contiguous !== null) rb.contiguous.set(block);
    else unpackArea(rb, block);
  });
}
