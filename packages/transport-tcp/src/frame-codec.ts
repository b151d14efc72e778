/**
 * The frame header on the wire: 32 bytes, little-endian, written and read by
 * hand (byte shifts, no DataView object per call) into buffers the caller
 * reuses.
 *
 *   offset  size  field
 *        0    u8  kind            FRAME_KIND value, or KIND_GOODBYE (transport-internal)
 *        1    u8  flags           FRAME_FLAG bits
 *        2   u16  contextId
 *        4   u32  srcEndpoint
 *        8   u32  dstEndpoint
 *       12   i32  tag
 *       16   u32  seq
 *       20   u32  aux
 *       24   u32  aux2
 *       28   u32  payloadLength   bytes of payload that follow the header
 *
 * This file is the one place that knows the layout: the connections write
 * headers through encodeHeader / encodeEagerHeader and the parser reads them
 * through decodeHeader / offerPlainEager; core sees FrameHeader objects or the
 * numbers of the typed contract (interface.ts queueEager, EagerArrived).
 *
 * Invariants: encodeHeader and encodeEagerHeader write exactly HEADER_BYTES
 * bytes at `offset`; decodeHeader reads exactly that many and fills every
 * field of `out`, so a reused header object never keeps a stale value. Values
 * are truncated to their wire width (the device keeps them in range).
 */
import { FRAME_KIND, type FrameHeader } from '@tsmpi/core/transport';

/** Size of one encoded frame header. */
export const HEADER_BYTES = 32;

/** The kind byte of a plain EAGER frame (the lean send's, and what onEager is offered). */
const KIND_EAGER = FRAME_KIND.EAGER;

/**
 * Frame kind used by the transport itself, never given to the device: the
 * sender of a GOODBYE is closing gracefully (its close() was called), so the
 * end of the stream that follows is not a lost peer. 255 is outside FRAME_KIND.
 */
export const KIND_GOODBYE = 255;

/**
 * Writes `h` as HEADER_BYTES little-endian bytes at `offset` of `buf`.
 * @param payloadLength written instead of h.payloadLength: the length of the payload actually sent
 */
export function encodeHeader(buf: Uint8Array, offset: number, h: FrameHeader, payloadLength: number): void {
  buf[offset] = h.kind;
  buf[offset + 1] = h.flags;
  const cid = h.contextId;
  buf[offset + 2] = cid;
  buf[offset + 3] = cid >>> 8;
  writeU32(buf, offset + 4, h.srcEndpoint);
  writeU32(buf, offset + 8, h.dstEndpoint);
  writeU32(buf, offset + 12, h.tag); // i32: same bytes as its two's-complement u32
  writeU32(buf, offset + 16, h.seq);
  writeU32(buf, offset + 20, h.aux);
  writeU32(buf, offset + 24, h.aux2);
  writeU32(buf, offset + 28, payloadLength);
}

/** Reads the header at `offset` of `buf` into `out` (every field is overwritten). */
export function decodeHeader(buf: Uint8Array, offset: number, out: FrameHeader): void {
  out.kind = buf[offset]!;
  out.flags = buf[offset + 1]!;
  out.contextId = buf[offset + 2]! | (buf[offset + 3]! << 8);
  out.srcEndpoint = readU32(buf, offset + 4);
  out.dstEndpoint = readU32(buf, offset + 8);
  out.tag = readU32(buf, offset + 12) | 0;
  out.seq = readU32(buf, offset + 16);
  out.aux = readU32(buf, offset + 20);
  out.aux2 = readU32(buf, offset + 24);
  out.payloadLength = readU32(buf, offset + 28);
}

/**
 * Writes the header of a plain EAGER frame (flags, seq, aux and aux2 zero) at `offset`: the bytes
 * encodeHeader writes for such a header, from numbers (the lean send: no header object). Byte
 * stores inline, no helper calls: it runs once per lean send.
 */
export function encodeEagerHeader(buf: Uint8Array, offset: number, contextId: number, src: number, dst: number, tag: number, payloadLength: number): void {
  const o = offset;
  buf[o] = KIND_EAGER;
  buf[o + 1] = 0;
  buf[o + 2] = contextId;
  buf[o + 3] = contextId >>> 8;
  buf[o + 4] = src; buf[o + 5] = src >>> 8; buf[o + 6] = src >>> 16; buf[o + 7] = src >>> 24;
  buf[o + 8] = dst; buf[o + 9] = dst >>> 8; buf[o + 10] = dst >>> 16; buf[o + 11] = dst >>> 24;
  buf[o + 12] = tag; buf[o + 13] = tag >>> 8; buf[o + 14] = tag >>> 16; buf[o + 15] = tag >>> 24;
  for (let i = o + 16; i < o + 28; i++) buf[i] = 0;
  buf[o + 28] = payloadLength; buf[o + 29] = payloadLength >>> 8; buf[o + 30] = payloadLength >>> 16; buf[o + 31] = payloadLength >>> 24;
}

/**
 * FrameParser's eager offer (TransportHandlers.onEager): when the frame at `pos` of `chunk` is
 * plain EAGER (flags 0), lies whole before `len` and carries at most `maxPayload` bytes, its
 * fields go to `eager` as numbers, its payload as the range [start, end) of `chunk`. Returns the
 * frame's end when `eager` took it, else -1 (nothing done). Byte loads inline, no helper calls:
 * it runs once per arriving frame.
 */
export function offerPlainEager(
  chunk: Uint8Array, pos: number, len: number, maxPayload: number,
  eager: (contextId: number, src: number, dst: number, tag: number, bytes: Uint8Array, start: number, end: number) => boolean,
): number {
  if (chunk[pos] !== KIND_EAGER || chunk[pos + 1] !== 0) return -1;
  const plen = (chunk[pos + 28]! | (chunk[pos + 29]! << 8) | (chunk[pos + 30]! << 16) | (chunk[pos + 31]! << 24)) >>> 0;
  const start = pos + HEADER_BYTES;
  const end = start + plen;
  if (end > len || plen > maxPayload) return -1;
  const ctx = chunk[pos + 2]! | (chunk[pos + 3]! << 8);
  const src = (chunk[pos + 4]! | (chunk[pos + 5]! << 8) | (chunk[pos + 6]! << 16) | (chunk[pos + 7]! << 24)) >>> 0;
  const dst = (chunk[pos + 8]! | (chunk[pos + 9]! << 8) | (chunk[pos + 10]! << 16) | (chunk[pos + 11]! << 24)) >>> 0;
  const tag = chunk[pos + 12]! | (chunk[pos + 13]! << 8) | (chunk[pos + 14]! << 16) | (chunk[pos + 15]! << 24);
  return eager(ctx, src, dst, tag, chunk, start, end) ? end : -1;
}

/** Reads only the payload length of the header at `offset`. */
export function readPayloadLength(buf: Uint8Array, offset: number): number {
  return readU32(buf, offset + 28);
}

function writeU32(buf: Uint8Array, o: number, v: number): void {
  buf[o] = v;
  buf[o + 1] = v >>> 8;
  buf[o + 2] = v >>> 16;
  buf[o + 3] = v >>> 24;
}

function readU32(buf: Uint8Array, o: number): number {
  return (buf[o]! | (buf[o + 1]! << 8) | (buf[o + 2]! << 16) | (buf[o + 3]! << 24)) >>> 0;
}
