/**
 * The MPI error catalog and the one error type users see.
 *
 * Every MPI error is an MPIError whose `errorClass` is one row of ERROR_CLASSES
 * and whose message reads "MPI_ERR_RANK: send: dest 7 is out of range for
 * COMM_WORLD (size 4)": the class name, the call, then what was wrong and what
 * is allowed. The catalog lives in util/ (not api/) because the datatype,
 * communicator and device layers raise some classes themselves (ERR_TYPE,
 * ERR_OTHER for exhausted context ids, ERR_TRUNCATE, ERR_PROC_FAILED).
 * docs/ERRORS.md lists every row; a test keeps the two in step.
 */
import { captureSite, userStack, type StackSite } from './user-stack.ts';

/** One row per error class: [constant value, name, default text]. Values follow MPICH where it has them. */
export const ERROR_CLASSES = [
  [0, 'SUCCESS', 'no error'],
  [1, 'ERR_BUFFER', 'invalid buffer pointer'],
  [2, 'ERR_COUNT', 'invalid count argument'],
  [3, 'ERR_TYPE', 'invalid datatype'],
  [4, 'ERR_TAG', 'invalid tag'],
  [5, 'ERR_COMM', 'invalid communicator'],
  [6, 'ERR_RANK', 'invalid rank'],
  [7, 'ERR_ROOT', 'invalid root'],
  [8, 'ERR_GROUP', 'invalid group'],
  [9, 'ERR_OP', 'invalid reduce operation'],
  [11, 'ERR_DIMS', 'invalid dimension argument'],
  [12, 'ERR_ARG', 'invalid argument of some other kind'],
  [15, 'ERR_TRUNCATE', 'message truncated'],
  [16, 'ERR_OTHER', 'known error not in this list'],
  [17, 'ERR_INTERN', 'internal error'],
  [18, 'ERR_IN_STATUS', 'error code is in status'],
  [19, 'ERR_PENDING', 'pending request'],
  [20, 'ERR_ACCESS', 'permission denied'],
  [21, 'ERR_AMODE', 'invalid file access mode'],
  [22, 'ERR_BAD_FILE', 'invalid file name'],
  [25, 'ERR_FILE_EXISTS', 'file exists'],
  [26, 'ERR_FILE_IN_USE', 'file operation could not be completed: the file is in use'],
  [27, 'ERR_FILE', 'invalid file handle'],
  [28, 'ERR_INFO', 'invalid info object'],
  [29, 'ERR_INFO_KEY', 'invalid info key'],
  [30, 'ERR_INFO_VALUE', 'invalid info value'],
  [31, 'ERR_INFO_NOKEY', 'info key not found'],
  [32, 'ERR_IO', 'I/O error'],
  [33, 'ERR_NAME', 'invalid service name'],
  [34, 'ERR_NO_MEM', 'out of memory'],
  [36, 'ERR_NO_SPACE', 'not enough space'],
  [37, 'ERR_NO_SUCH_FILE', 'file does not exist'],
  [38, 'ERR_PORT', 'invalid port name'],
  [40, 'ERR_READ_ONLY', 'read-only file or file system'],
  [41, 'ERR_SERVICE', 'invalid service name to unpublish'],
  [42, 'ERR_SPAWN', 'error in spawning processes'],
  [43, 'ERR_UNSUPPORTED_DATAREP', 'unsupported data representation'],
  [45, 'ERR_WIN', 'invalid window'],
  [46, 'ERR_BASE', 'invalid base address'],
  [47, 'ERR_LOCKTYPE', 'invalid lock type'],
  [48, 'ERR_KEYVAL', 'invalid attribute key'],
  [49, 'ERR_RMA_CONFLICT', 'conflicting accesses to a window'],
  [50, 'ERR_RMA_SYNC', 'wrong synchronization of RMA calls'],
  [51, 'ERR_SIZE', 'invalid size argument'],
  [52, 'ERR_DISP', 'invalid displacement argument'],
  [54, 'ERR_PROC_FAILED', 'process failed'],
  [55, 'ERR_RMA_RANGE', 'target memory is not part of the window'],
  [56, 'ERR_RMA_ATTACH', 'memory cannot be attached'],
  [57, 'ERR_RMA_SHARED', 'memory cannot be shared'],
  [60, 'ERR_ENDPOINTS', 'invalid endpoint'],
] as const;

type Row = (typeof ERROR_CLASSES)[number];
export type ErrorClassName = Row[1];

function classValue<N extends ErrorClassName>(name: N): Extract<Row, readonly [number, N, string]>[0] {
  const row = ERROR_CLASSES.find((r) => r[1] === name);
  return row![0] as Extract<Row, readonly [number, N, string]>[0];
}

export const SUCCESS = classValue('SUCCESS');
export const ERR_BUFFER = classValue('ERR_BUFFER');
export const ERR_COUNT = classValue('ERR_COUNT');
export const ERR_TYPE = classValue('ERR_TYPE');
export const ERR_TAG = classValue('ERR_TAG');
export const ERR_COMM = classValue('ERR_COMM');
export const ERR_RANK = classValue('ERR_RANK');
export const ERR_ROOT = classValue('ERR_ROOT');
export const ERR_GROUP = classValue('ERR_GROUP');
export const ERR_OP = classValue('ERR_OP');
export const ERR_DIMS = classValue('ERR_DIMS');
export const ERR_ARG = classValue('ERR_ARG');
export const ERR_TRUNCATE = classValue('ERR_TRUNCATE');
export const ERR_OTHER = classValue('ERR_OTHER');
export const ERR_INTERN = classValue('ERR_INTERN');
export const ERR_IN_STATUS = classValue('ERR_IN_STATUS');
export const ERR_PENDING = classValue('ERR_PENDING');
export const ERR_NO_MEM = classValue('ERR_NO_MEM');
export const ERR_INFO = classValue('ERR_INFO');
export const ERR_INFO_KEY = classValue('ERR_INFO_KEY');
export const ERR_INFO_VALUE = classValue('ERR_INFO_VALUE');
export const ERR_INFO_NOKEY = classValue('ERR_INFO_NOKEY');
export const ERR_KEYVAL = classValue('ERR_KEYVAL');
export const ERR_PROC_FAILED = classValue('ERR_PROC_FAILED');
export const ERR_ENDPOINTS = classValue('ERR_ENDPOINTS');
// File classes (MPI 4.0 14.7; MPICH's values): raised by io/ and api/file*.ts.
export const ERR_FILE = classValue('ERR_FILE');
export const ERR_NO_SUCH_FILE = classValue('ERR_NO_SUCH_FILE');
export const ERR_FILE_EXISTS = classValue('ERR_FILE_EXISTS');
export const ERR_ACCESS = classValue('ERR_ACCESS');
export const ERR_AMODE = classValue('ERR_AMODE');
export const ERR_BAD_FILE = classValue('ERR_BAD_FILE');
export const ERR_READ_ONLY = classValue('ERR_READ_ONLY');
export const ERR_NO_SPACE = classValue('ERR_NO_SPACE');
export const ERR_IO = classValue('ERR_IO');
export const ERR_UNSUPPORTED_DATAREP = classValue('ERR_UNSUPPORTED_DATAREP');
export const ERR_FILE_IN_USE = classValue('ERR_FILE_IN_USE');
export const ERR_WIN = classValue('ERR_WIN');
export const ERR_BASE = classValue('ERR_BASE');
export const ERR_LOCKTYPE = classValue('ERR_LOCKTYPE');
export const ERR_RMA_CONFLICT = classValue('ERR_RMA_CONFLICT');
export const ERR_RMA_SYNC = classValue('ERR_RMA_SYNC');
export const ERR_SIZE = classValue('ERR_SIZE');
export const ERR_DISP = classValue('ERR_DISP');
export const ERR_RMA_RANGE = classValue('ERR_RMA_RANGE');
export const ERR_RMA_ATTACH = classValue('ERR_RMA_ATTACH');
export const ERR_RMA_SHARED = classValue('ERR_RMA_SHARED');
export const ERR_NAME = classValue('ERR_NAME');
export const ERR_PORT = classValue('ERR_PORT');
export const ERR_SERVICE = classValue('ERR_SERVICE');
export const ERR_SPAWN = classValue('ERR_SPAWN');

const NAME_BY_CLASS = new Map<number, string>(ERROR_CLASSES.map((r) => [r[0], r[1]]));
const TEXT_BY_CLASS = new Map<number, string>(ERROR_CLASSES.map((r) => [r[0], r[2]]));

/** "MPI_ERR_RANK: invalid rank" for a known class; "MPI_ERR_UNKNOWN: error class N" otherwise. */
export function errorString(errorClass: number): string {
  const name = NAME_BY_CLASS.get(errorClass);
  if (name === undefined) return `MPI_ERR_UNKNOWN: error class ${errorClass}`;
  return `MPI_${name}: ${TEXT_BY_CLASS.get(errorClass)}`;
}

/** `MPI_ERR_RANK` for ERR_RANK. */
export function errorClassName(errorClass: number): string {
  const name = NAME_BY_CLASS.get(errorClass);
  return name === undefined ? 'MPI_ERR_UNKNOWN' : `MPI_${name}`;
}

const BRAND = Symbol.for('tsmpi.MPIError');

/** The stack of each error's awaiting call, where callSite() recorded one (the error path only). */
const CALL_SITES = new WeakMap<MPIError, StackSite>();

/**
 * The only error type users see. `instanceof` works across duplicate module copies (brand symbol).
 * Its `stack` starts at the user's code (util/user-stack.ts), formatted when first read.
 */
export class MPIError extends Error {
  readonly errorClass: number;
  readonly call: string;
  constructor(errorClass: number, call: string, detail: string, options?: { cause?: unknown }) {
    // super() captures no frames: the stack users see is `made`'s (below). Redefining `stack` reads
    // the one super() made, which formats it, and under source maps formatting frames parses the map
    // of every file on them (tens of ms at the first error, which device/dev-request.ts makes as it
    // loads). Without frames V8 also places an uncaught error where it was thrown, as before.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`${errorClassName(errorClass)}: ${call}: ${detail}`, options);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'MPIError';
    this.errorClass = errorClass;
    this.call = call;
    const made = captureSite(MPIError);
    // Built at each read (V8 formats each site once): a call site recorded after a first read still counts.
    let assigned: string | undefined;
    Object.defineProperty(this, 'stack', {
      configurable: true,
      enumerable: false,
      get: (): string => assigned ?? userStack(`${this.name}: ${this.message}`, made, CALL_SITES.get(this)),
      set: (value: string): void => {
        assigned = value;
      },
    });
  }
  get [BRAND](): true {
    return true;
  }
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
  /** Plain data for crossing a thread (structured clone drops the class). */
  toWire(): { errorClass: number; call: string; message: string } {
    return { errorClass: this.errorClass, call: this.call, message: this.message };
  }
  /** Rebuilds an error sent with toWire(). */
  static fromWire(w: { errorClass: number; call: string; message: string }): MPIError {
    const err = new MPIError(w.errorClass, w.call, '');
    err.message = w.message;
    return err;
  }
}

/**
 * Records where `err` is being awaited, for an error made where no frame of the user's was on the
 * stack (a request failed by a message or a lost peer): its stack then shows the user's call.
 * Call it on the error path only, in the continuation of the API call's own await.
 */
export function callSite(err: unknown, above: Function): void {
  if (err instanceof MPIError && !CALL_SITES.has(err)) CALL_SITES.set(err, captureSite(above));
}

/**
 * A promise rejected with `err` once it is awaited: pass it to the `resolve` of the promise an API
 * call returned, in place of `reject(err)`, and `err`'s stack shows the call that awaits it. Two
 * turns pass first, so that V8's async stack trace reaches the awaiting call (the returned promise
 * is chained to this one after one turn). Error path only.
 */
export async function rejectAtCallSite(err: unknown): Promise<never> {
  await null;
  await null;
  callSite(err, rejectAtCallSite);
  throw err;
}

/** mpiError(ERR_RANK, 'send', `dest ${dest} is out of range ...`). */
export function mpiError(errorClass: number, call: string, detail: string, cause?: unknown): MPIError {
  return cause === undefined ? new MPIError(errorClass, call, detail) : new MPIError(errorClass, call, detail, { cause });
}
