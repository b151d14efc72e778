/**
 * BufSpec: how buffer methods name their data.
 *   typedArray                      the whole array, its element type
 *   [view, datatype]                as many whole items as fit
 *   [view, count, datatype]         `count` items
 * Resolution checks the buffer, count and datatype once, before any state changes.
 */
import { ERR_BUFFER, ERR_COUNT, ERR_TYPE, mpiError } from '../util/index.ts';
import { Datatype, datatypeOfView } from './datatype.ts';

export type BufSpec = ArrayBufferView | [ArrayBufferView, Datatype] | [ArrayBufferView, number, Datatype];

export interface ResolvedBuf {
  /** the bytes of `count` items (contiguous types) */
  readonly bytes: Uint8Array;
  readonly count: number;
  readonly datatype: Datatype;
}

function isView(x: unknown): x is ArrayBufferView {
  return ArrayBuffer.isView(x);
}

function bytesOf(view: ArrayBufferView, length: number): Uint8Array {
  if (view instanceof Uint8Array && view.byteLength === length) return view;
  return new Uint8Array(view.buffer, view.byteOffset, length);
}

export function checkDatatype(dt: unknown, call: string, arg: string): asserts dt is Datatype {
  if (!(dt instanceof Datatype)) throw mpiError(ERR_TYPE, call, `${arg} is not a Datatype (got ${describe(dt)})`);
  if (dt._freed) throw mpiError(ERR_TYPE, call, `${arg} ${dt.name} has been freed`);
  if (!dt._committed) throw mpiError(ERR_TYPE, call, `${arg} ${dt.name} is not committed: call commit() first`);
}

/** The bytes a BufSpec names, for point-to-point (the hot path: no result object for a bare typed array). */
export function bytesOfBuf(spec: unknown, call: string, arg: string): Uint8Array {
  if (spec instanceof Uint8Array) return spec;
  return resolveBuf(spec, call, arg).bytes;
}

/** Resolves a BufSpec; `arg` names it in errors (buf, sendbuf, recvbuf). */
export function resolveBuf(spec: unknown, call: string, arg: string): ResolvedBuf {
  if (isView(spec)) {
    const dt = datatypeOfView(spec);
    const count = (spec.byteLength / dt._size) | 0;
    return { bytes: bytesOf(spec, spec.byteLength), count, datatype: dt };
  }
  if (!Array.isArray(spec) || spec.length < 2 || spec.length > 3 || !isView(spec[0])) {
    throw mpiError(ERR_BUFFER, call, `${arg} is ${describe(spec)}: expected a typed array, a DataView, [buffer, datatype] or [buffer, count, datatype]`);
  }
  const view = spec[0];
  const dt = spec[spec.length - 1];
  checkDatatype(dt, call, `${arg} datatype`);
  let count: number;
  if (spec.length === 3) {
    count = spec[1] as number;
    if (!Number.isInteger(count) || count < 0) throw mpiError(ERR_COUNT, call, `${arg} count ${String(count)} is invalid: expected an integer >= 0`);
  } else {
    count = dt._extent === 0 ? 0 : Math.floor(view.byteLength / dt._extent);
  }
  const span = count === 0 ? 0 : (count - 1) * dt._extent + dt._size;
  if (span > view.byteLength) {
    throw mpiError(
      ERR_COUNT, call,
      `${arg} count ${count} of ${dt.name} needs ${span} bytes but the buffer has ${view.byteLength} bytes`,
    );
  }
  return { bytes: bytesOf(view, count * dt._size), count, datatype: dt };
}

export function describe(x: unknown): string {
  if (x === null) return 'null';
  if (x === undefined) return 'undefined';
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  if (typeof x === 'object') return `a ${(x as object).constructor?.name ?? 'object'}`;
  return `${typeof x} ${String(x)}`;
}
