/**
 * A file view (MPI 4.0 14.3): the filetype, flattened by the datatype engine
 * into (offset, length) runs, tiled from the displacement `disp`; the data a
 * process sees is the bytes of those runs in order (its "data stream").
 * Offsets that calls pass count etypes, so data position = offset * etype
 * size, and this file maps a range of data positions to the file byte runs
 * that hold it.
 *
 *   file:  |disp| tile 0 (extent)        | tile 1                  | ...
 *                [run0]   [run1]           [run0]   [run1]
 *   data:        0..a     a..size          size..   ..2*size
 *
 * Runs of one tile are in type-map order (MPI requires nondecreasing
 * displacements of a filetype; a filetype that is not keeps its type-map
 * order here). Runs that touch are merged, also across tiles, so a
 * contiguous view of N bytes is one run whatever its etype.
 */
import type { TypeMap } from '../datatype/index.ts';

/** A view, flattened once at setView. */
export interface ViewMap {
  readonly disp: number;
  readonly etypeSize: number;
  /** bytes of data in one filetype item */
  readonly tileSize: number;
  readonly tileExtent: number;
  /** the filetype's runs: byte offset from the tile's origin, length, and where each starts in the tile's data */
  readonly runOffsets: readonly number[];
  readonly runLengths: readonly number[];
  readonly runStarts: readonly number[];
  /** one run per tile and tiles back to back: data position p is at byte disp + runOffsets[0] + p */
  readonly isLinear: boolean;
}

/** File byte runs, in data order. */
export interface Runs {
  offsets: number[];
  lengths: number[];
}

/** Flattens a view: `filetype`'s blocks, touching ones merged. The caller checks filetype.size > 0. */
export function makeViewMap(disp: number, etypeSize: number, filetype: TypeMap): ViewMap {
  const runOffsets: number[] = [];
  const runLengths: number[] = [];
  const runStarts: number[] = [];
  let at = 0;
  for (let b = 0; b < filetype.blockCount; b++) {
    const off = filetype.blockOffsets[b]!;
    const len = filetype.blockLengths[b]!;
    if (len === 0) continue;
    const last = runOffsets.length - 1;
    if (last >= 0 && runOffsets[last]! + runLengths[last]! === off) runLengths[last]! += len;
    else {
      runOffsets.push(off);
      runLengths.push(len);
      runStarts.push(at);
    }
    at += len;
  }
  const isLinear = runOffsets.length === 1 && runLengths[0] === filetype.extent;
  return { disp, etypeSize, tileSize: filetype.size, tileExtent: filetype.extent, runOffsets, runLengths, runStarts, isLinear };
}

/** The view of MPI's default: etype BYTE, filetype BYTE, disp 0 (the file's bytes as they are). */
export function byteViewMap(): ViewMap {
  return { disp: 0, etypeSize: 1, tileSize: 1, tileExtent: 1, runOffsets: [0], runLengths: [1], runStarts: [0], isLinear: true };
}

/** Index of the run holding data position r of a tile (0 <= r < tileSize). */
function runAt(v: ViewMap, r: number): number {
  const starts = v.runStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= r) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The absolute file byte of data position `pos` (MPI_File_get_byte_offset, with pos = offset * etype size). */
export function fileByteOf(v: ViewMap, pos: number): number {
  if (v.isLinear) return v.disp + v.runOffsets[0]! + pos;
  const tile = Math.floor(pos / v.tileSize);
  const r = pos - tile * v.tileSize;
  const k = runAt(v, r);
  return v.disp + tile * v.tileExtent + v.runOffsets[k]! + (r - v.runStarts[k]!);
}

/** Appends to `out` the file runs that hold data positions [pos, pos + bytes), merging runs that touch. */
export function runsOf(v: ViewMap, pos: number, bytes: number, out: Runs = { offsets: [], lengths: [] }): Runs {
  if (bytes <= 0) return out;
  if (v.isLinear) {
    push(out, v.disp + v.runOffsets[0]! + pos, bytes);
    return out;
  }
  let tile = Math.floor(pos / v.tileSize);
  let r = pos - tile * v.tileSize;
  let k = runAt(v, r);
  let left = bytes;
  const n = v.runOffsets.length;
  while (left > 0) {
    const into = r - v.runStarts[k]!;
    const len = Math.min(v.runLengths[k]! - into, left);
    push(out, v.disp + tile * v.tileExtent + v.runOffsets[k]! + into, len);
    left -= len;
    r += len;
    if (++k === n) {
      k = 0;
      r = 0;
      tile++;
    }
  }
  return out;
}

function push(out: Runs, offset: number, length: number): void {
  const last = out.offsets.length - 1;
  if (last >= 0 && out.offsets[last]! + out.lengths[last]! === offset) out.lengths[last]! += length;
  else {
    out.offsets.push(offset);
    out.lengths.push(length);
  }
}
