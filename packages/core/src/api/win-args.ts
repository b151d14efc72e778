/**
 * The constants of one-sided communication (API.md "One-sided communication (Win)") and the
 * argument checks of Win's operations: an origin buffer, a target [disp, count, datatype] against
 * the target's window size, an accumulate op against the element type. Everything here throws an
 * MPIError naming the call, the argument and the allowed range, before anything is sent.
 */
import { ACC_OP, ELEM_SIZE } from '../device/index.ts';
import { ERR_ARG, ERR_COMM, ERR_COUNT, ERR_DISP, ERR_LOCKTYPE, ERR_OP, ERR_RANK, ERR_RMA_RANGE, ERR_SIZE, ERR_TYPE, mpiError } from '../util/index.ts';
import { runtime, type ThreadRuntime } from '../runtime/index.ts';
import { Comm } from './comm.ts';
import { Info } from './info.ts';
import { describe, packedOf, resolveBuf, type BufSpec, type ResolvedBuf } from './buffer.ts';
import { Datatype } from './datatype.ts';
import { BAND, BOR, BXOR, LAND, LOR, LXOR, MAX, MIN, Op, PROD, SUM } from './op.ts';

/** Lock types (MPICH's values). */
export const LOCK_EXCLUSIVE = 234;
export const LOCK_SHARED = 235;
/** Assertions (MPICH's values); accepted as hints, none changes behaviour yet. */
export const MODE_NOCHECK = 1024;
export const MODE_NOSTORE = 2048;
export const MODE_NOPUT = 4096;
export const MODE_NOPRECEDE = 8192;
export const MODE_NOSUCCEED = 16384;
const MODE_ALL = MODE_NOCHECK | MODE_NOSTORE | MODE_NOPUT | MODE_NOPRECEDE | MODE_NOSUCCEED;

/** MPI_REPLACE and MPI_NO_OP: accumulate-only ops (MPI 4.0 12.3.4); not for collectives. */
export const REPLACE = new Op('REPLACE', 13, true, null);
export const NO_OP = new Op('NO_OP', 14, true, null);

const ACC_OPS = new Map<Op, number>([
  [REPLACE, ACC_OP.REPLACE], [NO_OP, ACC_OP.NO_OP], [SUM, ACC_OP.SUM], [PROD, ACC_OP.PROD], [MIN, ACC_OP.MIN], [MAX, ACC_OP.MAX],
  [LAND, ACC_OP.LAND], [LOR, ACC_OP.LOR], [LXOR, ACC_OP.LXOR], [BAND, ACC_OP.BAND], [BOR, ACC_OP.BOR], [BXOR, ACC_OP.BXOR],
]);
const BITWISE = new Set<number>([ACC_OP.BAND, ACC_OP.BOR, ACC_OP.BXOR]);
/** FLOAT32 and FLOAT64's type codes (device ELEM values are the datatype engine's codes). */
const FLOAT_CODES = new Set([9, 10]);

/** Where an operation lands at its target, checked. */
export interface TargetSpec {
  /** byte displacement in the target's window */
  readonly byteDisp: number;
  readonly bytes: number;
  /** element kind (device ELEM, the datatype's type code) */
  readonly elem: number;
  readonly datatype: Datatype;
}

/** What a window's origin side checks a target against: its members' window sizes and units. */
export interface WinShape {
  readonly name: string;
  readonly size: number;
  /** bytes of each rank's window (Infinity: dynamic) */
  readonly sizes: readonly number[];
  readonly dispUnits: readonly number[];
}

export function checkTargetRank(rank: unknown, w: WinShape, call: string): asserts rank is number {
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 0 || rank >= w.size) {
    throw mpiError(ERR_RANK, call, `targetRank ${describe(rank)} is out of range for window ${w.name} (size ${w.size}: 0..${w.size - 1})`);
  }
}

export function checkAssert(a: unknown, call: string): void {
  if (typeof a !== 'number' || !Number.isInteger(a) || (a & ~MODE_ALL) !== 0) {
    throw mpiError(ERR_ARG, call, `assert ${describe(a)} is not 0 or a combination of MPI.MODE_NOCHECK, MODE_NOSTORE, MODE_NOPUT, MODE_NOPRECEDE, MODE_NOSUCCEED`);
  }
}

export function checkLockType(t: unknown, call: string): asserts t is number {
  if (t !== LOCK_EXCLUSIVE && t !== LOCK_SHARED) throw mpiError(ERR_LOCKTYPE, call, `lockType ${describe(t)}: expected MPI.LOCK_EXCLUSIVE or MPI.LOCK_SHARED`);
}

/** The origin buffer, resolved; its packed bytes. */
export function originOf(spec: unknown, call: string, arg: string): { rb: ResolvedBuf; bytes: Uint8Array } {
  const rb = resolveBuf(spec as BufSpec, call, arg);
  return { rb, bytes: packedOf(rb) };
}

/** The accumulate op's code, checked against the element type. */
export function accOpOf(op: unknown, elem: number, call: string): number {
  const code = op instanceof Op ? ACC_OPS.get(op) : undefined;
  if (code === undefined) {
    throw mpiError(ERR_OP, call, `op ${op instanceof Op ? op.name : describe(op)} cannot accumulate: expected a predefined op (SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR), MPI.REPLACE or MPI.NO_OP`);
  }
  if (BITWISE.has(code) && FLOAT_CODES.has(elem)) throw mpiError(ERR_OP, call, `op ${(op as Op).name} is not defined on floating-point elements`);
  return code;
}

/**
 * Resolves `target` ([disp, count?, datatype?], default [0]) for an operation on `rank` whose
 * origin is `originBytes` of `originType`; checks it lies in the target's window.
 */
export function targetOf(target: unknown, rank: number, originBytes: number, originType: Datatype, w: WinShape, call: string): TargetSpec {
  let disp: unknown = 0;
  let count: unknown;
  let dt: unknown = originType;
  if (target !== undefined) {
    if (!Array.isArray(target) || target.length < 1 || target.length > 3) {
      throw mpiError(ERR_ARG, call, `target is ${describe(target)}: expected [disp, count?, datatype?]`);
    }
    disp = target[0];
    count = target[1];
    if (target[2] !== undefined) dt = target[2];
  }
  if (!(dt instanceof Datatype)) throw mpiError(ERR_TYPE, call, `target datatype is ${describe(dt)}: expected an MPI.Datatype`);
  // A derived target datatype is taken when it is gap-free elements of one type from offset 0 (contiguous of a basic type).
  const gapFree = dt._predefined || (dt._dense !== null && dt._lb === 0 && dt._extent === dt._size);
  if (dt._typeCode === null || !gapFree) {
    throw mpiError(ERR_TYPE, call, `target datatype ${dt.name} is not contiguous elements of one basic type: only such target datatypes are supported yet (issue 37)`);
  }
  const BYTE_CODE = 11;
  if (originType._typeCode !== null && originType._typeCode !== dt._typeCode && originType._typeCode !== BYTE_CODE && dt._typeCode !== BYTE_CODE) {
    throw mpiError(ERR_TYPE, call, `origin elements are ${originType.name} but target datatype is ${dt.name}: the type signatures must match`);
  }
  const typeBytes = dt._size;
  const n = count === undefined ? originBytes / typeBytes : count;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw mpiError(ERR_COUNT, call, `target count ${describe(count)} is not a whole number of ${dt.name} items >= 0 (origin: ${originBytes} bytes)`);
  }
  if (n * typeBytes !== originBytes) {
    throw mpiError(ERR_COUNT, call, `target count ${n} of ${dt.name} is ${n * typeBytes} bytes but the origin holds ${originBytes}: the type signatures must match`);
  }
  if (typeof disp !== 'number' || !Number.isInteger(disp) || disp < 0) throw mpiError(ERR_DISP, call, `target disp ${describe(disp)} must be an integer >= 0`);
  const byteDisp = disp * w.dispUnits[rank]!;
  const size = w.sizes[rank]!;
  if (byteDisp + originBytes > size) {
    throw mpiError(ERR_RMA_RANGE, call, `target [disp ${disp}, ${n} x ${dt.name}] is bytes ${byteDisp}..${byteDisp + originBytes} of rank ${rank}'s window, which has ${size} bytes (dispUnit ${w.dispUnits[rank]})`);
  }
  return { byteDisp, bytes: originBytes, elem: dt._typeCode, datatype: dt };
}

/** The element of FetchAndOp / CompareAndSwap at `disp` for result's datatype: one element in range. */
export function elementTargetOf(disp: unknown, rank: number, dt: Datatype, w: WinShape, call: string): TargetSpec {
  if (dt._typeCode === null || !dt._predefined) throw mpiError(ERR_TYPE, call, `datatype ${dt.name} is derived: expected a predefined datatype (one element)`);
  return targetOf([disp, 1, dt], rank, ELEM_SIZE[dt._typeCode]!, dt, w, call);
}

export function checkBytes(bytes: unknown, call: string): asserts bytes is number {
  if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 0 || bytes > 0xffff_ffff) {
    throw mpiError(ERR_SIZE, call, `bytes ${describe(bytes)} must be an integer in 0..4294967295`);
  }
}

/** The checks every creation makes; the caller's runtime. */
export function checkCreation(call: string, comm: unknown, dispUnit: unknown, info: unknown): ThreadRuntime {
  if (!(comm instanceof Comm) || comm._freed) throw mpiError(ERR_COMM, call, `comm is ${comm instanceof Comm ? 'freed' : describe(comm)}: expected a live MPI.Comm`);
  if (comm.isInter) throw mpiError(ERR_COMM, call, `comm ${comm.name} is an intercommunicator: windows need an intracommunicator`);
  if (typeof dispUnit !== 'number' || !Number.isInteger(dispUnit) || dispUnit < 1) throw mpiError(ERR_DISP, call, `dispUnit ${describe(dispUnit)} must be an integer >= 1`);
  if (info !== undefined && !(info instanceof Info)) throw mpiError(ERR_ARG, call, `info is ${describe(info)}: expected an MPI.Info`);
  const rt = runtime(call);
  if (comm.rank < 0) throw mpiError(ERR_COMM, call, `the calling thread is not a member of ${comm.name}`);
  return rt;
}

/** Runs a creation's checks and body; a check's error becomes the promise's rejection. */
export function settle<T>(_call: string, body: () => Promise<T>): Promise<T> {
  try {
    return body();
  } catch (e) {
    return Promise.reject(e);
  }
}
