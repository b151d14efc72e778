/**
 * The pack / unpack engine: copies between a user buffer laid out by a type
 * map and a packed byte stream (the items' data, in type-map order, without
 * gaps: the wire form of a buffer message).
 *
 * Contract: `user` is the bytes of the user's buffer starting at its
 * byteOffset (displacement 0 is user[0]); the caller (buf-spec.ts) has
 * checked that every block of the `count` items lies inside it. Positions in
 * the packed stream are byte positions 0 .. count * size; the *Range forms
 * copy any sub-range of it, so a large message can be packed and unpacked in
 * chunks (pipelined rendezvous) and a short message can fill a prefix of the
 * receive layout, as MPI requires.
 *
 * Hot path: contiguous types take one copy (or a zero-copy view). Other
 * types copy whole items block by block, 4 bytes at a time through Int32Array
 * views when every block offset, length and the extent are multiples of 4
 * and both buffers are aligned (about 4x faster than bytes), with an element
 * loop for small blocks (cheaper than a subarray + set per block) and
 * TypedArray.set for large ones. Partial items at the ends of a range take a
 * general walk. No allocation except two views per call and the subarrays
 * of large blocks.
 */
import { assert } from '../util/index.ts';
import type { TypeMap } from './type-map.ts';

/** Blocks up to this many bytes are copied with a byte loop, larger ones with set(). */
const SMALL_BLOCK_BYTES = 32;

/** Bytes that `count` items of `map` take when packed. */
export function packedSize(count: number, map: TypeMap): number {
  return count * map.size;
}

function copy(dst: Uint8Array, dstAt: number, src: Uint8Array, srcAt: number, len: number): void {
  if (len <= SMALL_BLOCK_BYTES) {
    for (let i = 0; i < len; i++) dst[dstAt + i] = src[srcAt + i]!;
  } else {
    dst.set(src.subarray(srcAt, srcAt + len), dstAt);
  }
}

/** Index of the block holding packed position r of one item (0 <= r < size). */
function blockAt(map: TypeMap, r: number): number {
  const starts = map.blockPackedStarts;
  let lo = 0;
  let hi = map.blockCount - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= r) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Copies packed positions [from, to) between `user` (laid out by map) and
 * packed[packedAt...]. Splits the range into a partial head item, whole
 * items (the fast loops) and a partial tail item.
 */
function copySegment(isPack: boolean, user: Uint8Array, map: TypeMap, from: number, to: number, packed: Uint8Array, packedAt: number): void {
  if (to <= from) return;
  if (map.isContiguous) {
    const u = map.trueLb + from;
    if (isPack) copy(packed, packedAt, user, u, to - from);
    else copy(user, u, packed, packedAt, to - from);
    return;
  }
  const size = map.size;
  const firstWhole = Math.ceil(from / size);
  const endWhole = Math.floor(to / size);
  if (firstWhole >= endWhole) {
    copyPartial(isPack, user, map, from, to, packed, packedAt);
    return;
  }
  const headEnd = firstWhole * size;
  copyPartial(isPack, user, map, from, headEnd, packed, packedAt);
  const q = packedAt + headEnd - from;
  if (
    map.isWordAligned &&
    user.byteOffset % 4 === 0 &&
    (packed.byteOffset + q) % 4 === 0
  ) {
    const user32 = new Int32Array(user.buffer, user.byteOffset, user.byteLength >>> 2);
    const packed32 = new Int32Array(packed.buffer, packed.byteOffset + q, (endWhole - firstWhole) * (size >>> 2));
    copyItems32(isPack, user32, map, firstWhole, endWhole, packed32);
  } else {
    copyItems8(isPack, user, map, firstWhole, endWhole, packed, q);
  }
  const tailStart = endWhole * size;
  copyPartial(isPack, user, map, tailStart, to, packed, packedAt + tailStart - from);
}

/** Whole items k0 .. k1-1, bytes. */
function copyItems8(isPack: boolean, user: Uint8Array, map: TypeMap, k0: number, k1: number, packed: Uint8Array, packedAt: number): void {
  const extent = map.extent;
  const offsets = map.blockOffsets;
  const lengths = map.blockLengths;
  const nBlocks = map.blockCount;
  let q = packedAt;
  for (let k = k0; k < k1; k++) {
    const base = k * extent;
    for (let j = 0; j < nBlocks; j++) {
      const len = lengths[j]!;
      const u = base + offsets[j]!;
      if (len <= SMALL_BLOCK_BYTES) {
        if (isPack) for (let i = 0; i < len; i++) packed[q + i] = user[u + i]!;
        else for (let i = 0; i < len; i++) user[u + i] = packed[q + i]!;
      } else if (isPack) {
        packed.set(user.subarray(u, u + len), q);
      } else {
        user.set(packed.subarray(q, q + len), u);
      }
      q += len;
    }
  }
}

/** Whole items k0 .. k1-1 of a word-aligned type, 4 bytes at a time (Int32 copies keep every bit). */
function copyItems32(isPack: boolean, user: Int32Array, map: TypeMap, k0: number, k1: number, packed: Int32Array): void {
  const extent = map.extent >>> 2;
  const offsets = map.blockOffsets;
  const lengths = map.blockLengths;
  const nBlocks = map.blockCount;
  let q = 0;
  for (let k = k0; k < k1; k++) {
    const base = k * extent;
    for (let j = 0; j < nBlocks; j++) {
      const len = lengths[j]! / 4;
      const u = base + offsets[j]! / 4;
      if (len <= SMALL_BLOCK_BYTES) {
        if (isPack) for (let i = 0; i < len; i++) packed[q + i] = user[u + i]!;
        else for (let i = 0; i < len; i++) user[u + i] = packed[q + i]!;
      } else if (isPack) {
        packed.set(user.subarray(u, u + len), q);
      } else {
        user.set(packed.subarray(q, q + len), u);
      }
      q += len;
    }
  }
}

/** Any range [from, to) (the general walk: binary search for the first block, then clip every block). */
function copyPartial(isPack: boolean, user: Uint8Array, map: TypeMap, from: number, to: number, packed: Uint8Array, packedAt: number): void {
  if (to <= from) return;
  const size = map.size;
  const extent = map.extent;
  const offsets = map.blockOffsets;
  const lengths = map.blockLengths;
  const nBlocks = map.blockCount;
  let k = Math.floor(from / size);
  const r = from - k * size;
  let j = blockAt(map, r);
  let within = r - map.blockPackedStarts[j]!;
  let p = from;
  let q = packedAt;
  while (p < to) {
    const base = k * extent;
    for (; j < nBlocks && p < to; j++) {
      const len = Math.min(lengths[j]! - within, to - p);
      const u = base + offsets[j]! + within;
      if (isPack) copy(packed, q, user, u, len);
      else copy(user, u, packed, q, len);
      p += len;
      q += len;
      within = 0;
    }
    j = 0;
    k++;
  }
}

/**
 * Packs `count` items from `src` (user layout) into dst[dstOffset ...].
 * @param dstOffset where in dst the packed bytes start; default 0.
 * @returns the number of bytes written, count * size.
 */
export function packInto(src: Uint8Array, count: number, map: TypeMap, dst: Uint8Array, dstOffset = 0): number {
  const n = count * map.size;
  assert(dstOffset + n <= dst.length, 'packInto: destination too small');
  copySegment(true, src, map, 0, n, dst, dstOffset);
  return n;
}

/**
 * Unpacks the first `byteLength` packed bytes at src[srcOffset ...] into
 * `dst` (user layout). A byteLength that is not a multiple of the type size
 * fills a prefix of the last item, entry by entry, as a short receive does.
 * @returns byteLength.
 */
export function unpackFrom(src: Uint8Array, srcOffset: number, byteLength: number, map: TypeMap, dst: Uint8Array): number {
  assert(srcOffset + byteLength <= src.length, 'unpackFrom: source too small');
  copySegment(false, dst, map, 0, byteLength, src, srcOffset);
  return byteLength;
}

/**
 * Packs packed positions [packedStart, packedEnd) of the items in `src` into
 * dst[dstOffset ...]: one chunk of a large message.
 * @returns the number of bytes written.
 */
export function packRange(src: Uint8Array, map: TypeMap, packedStart: number, packedEnd: number, dst: Uint8Array, dstOffset = 0): number {
  assert(dstOffset + (packedEnd - packedStart) <= dst.length, 'packRange: destination too small');
  copySegment(true, src, map, packedStart, packedEnd, dst, dstOffset);
  return Math.max(0, packedEnd - packedStart);
}

/**
 * Unpacks the chunk src[srcOffset ...] into packed positions [packedStart,
 * packedEnd) of the layout in `dst`.
 * @returns the number of bytes read.
 */
export function unpackRange(src: Uint8Array, srcOffset: number, map: TypeMap, packedStart: number, packedEnd: number, dst: Uint8Array): number {
  assert(srcOffset + (packedEnd - packedStart) <= src.length, 'unpackRange: source too small');
  copySegment(false, dst, map, packedStart, packedEnd, src, srcOffset);
  return Math.max(0, packedEnd - packedStart);
}

/**
 * Zero-copy: when `count` items of a contiguous type form one run, the view
 * of it inside `user` (it aliases the user's memory); otherwise null.
 */
export function contiguousView(user: Uint8Array, count: number, map: TypeMap): Uint8Array | null {
  if (!map.isContiguous) return null;
  return user.subarray(map.trueLb, map.trueLb + count * map.size);
}

/** Packs `count` items into a new Uint8Array of packedSize(count, map) bytes (never aliases `src`). */
export function packToNew(src: Uint8Array, count: number, map: TypeMap): Uint8Array {
  const out = new Uint8Array(count * map.size);
  copySegment(true, src, map, 0, out.length, out, 0);
  return out;
}
