/**
 * The 'external32' data representation (MPI 4.0 14.5.2): every primitive is
 * big-endian, with the sizes of Table 14.2. tsmpi's primitives (INT8..INT64,
 * UINT8..UINT64, FLOAT32, FLOAT64, BYTE) have the same sizes in external32
 * as in memory, so converting is swapping the bytes of each element of the
 * packed stream in place, element sizes taken from the memory type map's
 * block types; positions and counts do not change. The host is little-endian
 * (x86-64, arm64: Node's platforms), which the swap assumes.
 */
import { typeSize, type TypeMap } from '../datatype/index.ts';

/** Swaps, in place, the bytes of every element of `count` packed items of `map` in `bytes` (its own inverse). */
export function swapPacked(bytes: Uint8Array, count: number, map: TypeMap): void {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, count * map.size));
  if (map.typeCode !== null) {
    swapRange(buf, 0, buf.length, typeSize(map.typeCode));
    return;
  }
  let at = 0;
  for (let i = 0; i < count && at < buf.length; i++) {
    for (let b = 0; b < map.blockCount; b++) {
      const len = map.blockLengths[b]!;
      swapRange(buf, at, Math.min(at + len, buf.length), typeSize(map.blockTypes[b] as never));
      at += len;
    }
  }
}

function swapRange(buf: Buffer, from: number, to: number, elementBytes: number): void {
  if (elementBytes === 1 || to <= from) return;
  const whole = from + Math.floor((to - from) / elementBytes) * elementBytes;
  const part = buf.subarray(from, whole);
  if (elementBytes === 2) part.swap16();
  else if (elementBytes === 4) part.swap32();
  else if (elementBytes === 8) part.swap64();
}
