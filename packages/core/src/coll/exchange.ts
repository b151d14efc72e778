/**
 * Small point-to-point building blocks for the algorithms: a deadlock-free
 * send-receive pair and the bounded copy that turns an over-long message into
 * ERR_TRUNCATE instead of a RangeError.
 */
import { ERR_TRUNCATE, mpiError } from '../util/index.ts';
import type { CollPt2pt } from './pt2pt.ts';

/** A zero-length payload (barrier tokens). Never written to. */
export const EMPTY = new Uint8Array(0);

/**
 * Sends `data` to `dest` and receives one message from `source`, both posted
 * before either is awaited (safe under rendezvous). Resolves the received bytes.
 */
export async function sendrecv(pt: CollPt2pt, tag: number, dest: number, data: Uint8Array, source: number): Promise<Uint8Array> {
  const [, got] = await Promise.all([pt.send(dest, tag, data), pt.recv(source, tag)]);
  return got;
}

/**
 * Copies `src` into `dst` at `offset`; `capacity` is the size of the block it
 * must fit in.
 * @throws MPIError(ERR_TRUNCATE) when src is longer than capacity.
 */
export function copyIn(dst: Uint8Array, offset: number, capacity: number, src: Uint8Array, call: string): void {
  if (src.length > capacity) {
    throw mpiError(ERR_TRUNCATE, call, `received ${src.length} bytes for a block of ${capacity} bytes`);
  }
  dst.set(src, offset);
}

/**
 * Receives one message into `buf` (pt.recvInto when the layer below has it,
 * else recv plus a bounded copy); resolves its length.
 * @throws MPIError(ERR_TRUNCATE) when the message is longer than buf.
 */
export function recvInto(pt: CollPt2pt, source: number, tag: number, buf: Uint8Array, call: string): Promise<number> {
  if (pt.recvInto !== undefined) return pt.recvInto(source, tag, buf);
  return pt.recv(source, tag).then((got) => {
    copyIn(buf, 0, buf.length, got, call);
    return got.length;
  });
}

/** sendrecv into a caller's buffer: both posted before either is awaited; resolves the received length. */
export async function sendrecvInto(pt: CollPt2pt, tag: number, dest: number, data: Uint8Array, source: number, into: Uint8Array, call: string): Promise<number> {
  const [, n] = await Promise.all([pt.send(dest, tag, data), recvInto(pt, source, tag, into, call)]);
  return n;
}
