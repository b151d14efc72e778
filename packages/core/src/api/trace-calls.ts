/**
 * What the trace recorder (trace-recorder.ts) knows of the public calls it wraps: how each
 * point-to-point call's arguments are laid out (where the peer, the tag, the buffer and the Status
 * are), what it reads of a communicator, and the small readers of arguments it shares.
 */
import { Status } from './status.ts';

/** What the recorder reads of a communicator (Pt2ptComm's fields). */
export interface TracedComm {
  readonly name: string;
  readonly rank: number;
  readonly _ctx: number;
  readonly _sendCtx: number;
  readonly _endpoints: Int32Array;
  readonly _peers: Int32Array;
}

/** How a point-to-point call's arguments are laid out. */
export type Shape =
  | { kind: 'send'; dest: number; tag: number; buf: number }
  | { kind: 'recv'; source: number; tag: number; status: number }
  | { kind: 'irecv'; source: number; tag: number }
  | { kind: 'sendrecv'; dest: number; sendtag: number; source: number; recvtag: number; status: number; buf: number };

const SEND = (dest: number, tag: number, buf: number): Shape => ({ kind: 'send', dest, tag, buf });
/** Point-to-point calls by method name (a name not here is recorded as a call only). status -1: the result is the Status. */
export const SHAPES: ReadonlyMap<string, Shape> = new Map<string, Shape>([
  ...['send', 'ssend', 'isend', 'issend', 'bsend', 'rsend', 'ibsend', 'irsend'].map((n) => [n, SEND(1, 2, -1)] as [string, Shape]),
  ...['Send', 'Ssend', 'Isend', 'Issend', 'Bsend', 'Rsend', 'Ibsend', 'Irsend'].map((n) => [n, SEND(1, 2, 0)] as [string, Shape]),
  ['recv', { kind: 'recv', source: 0, tag: 1, status: 2 }],
  ['Recv', { kind: 'recv', source: 1, tag: 2, status: -1 }],
  ['irecv', { kind: 'irecv', source: 0, tag: 1 }],
  ['Irecv', { kind: 'irecv', source: 1, tag: 2 }],
  ['sendrecv', { kind: 'sendrecv', dest: 1, sendtag: 2, source: 3, recvtag: 4, status: 5, buf: -1 }],
  ['Sendrecv', { kind: 'sendrecv', dest: 1, sendtag: 2, source: 4, recvtag: 5, status: -1, buf: 0 }],
]);

/** What the recorder knows of a call name, made once per name. */
export interface CallInfo {
  /** index in the thread's names table */
  readonly id: number;
  readonly shape: Shape | undefined;
  readonly isIrecv: boolean;
  /** a Request.* call: it may complete irecv requests */
  readonly isRequest: boolean;
}

/** A receive's source or tag not given (ANY_SOURCE, ANY_TAG). */
export const ANY = -1;

/** A message's bytes when its buffer is a typed array (or a list of them), else -1 (an object: not known before it is encoded). */
export function bytesOf(buf: unknown): number {
  if (ArrayBuffer.isView(buf)) return buf.byteLength;
  if (Array.isArray(buf) && ArrayBuffer.isView(buf[0])) return (buf[0] as ArrayBufferView).byteLength;
  return -1;
}

export function isComm(target: unknown): target is TracedComm {
  return typeof target === 'object' && target !== null && '_ctx' in target && '_peers' in target;
}

export function intArg(args: unknown[], i: number, dflt: number): number {
  const v = args[i];
  return typeof v === 'number' ? v : dflt;
}

/** The Status of a receive call: its result (statusArg -1) or the one in its arguments. */
export function statusOf(result: unknown, args: unknown[], statusArg: number): Status | null {
  if (statusArg < 0) return result instanceof Status ? result : null;
  const st = args[statusArg];
  return st instanceof Status ? st : null;
}
