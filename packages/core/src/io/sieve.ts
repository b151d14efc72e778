/**
 * Data sieving for independent accesses of non-contiguous views (ROMIO's idea,
 * Thakur, Gropp, Lusk, "Data Sieving and Collective I/O in ROMIO", Frontiers '99):
 * instead of one node:fs call per file run, one large read covers several runs
 * and the pieces are picked out of it in memory; a write reads that extent,
 * patches the pieces in and writes it back (read-modify-write, which the
 * caller does under the file's lock, api/file.ts).
 *
 * The plan cuts the runs of an access, in data order, into groups: a group is
 * consecutive runs that go forward in the file (each starts at or after the
 * end of the one before) and whose span, first byte to last, fits the buffer
 * (hints ind_rd_buffer_size / ind_wr_buffer_size). A run longer than the
 * buffer, or one going backwards, starts a group of its own; so does a run of
 * LARGE_PIECE_BYTES or more, which is one file access already (sieving it would
 * only add the holes' bytes and a copy); a group of one run is accessed directly. gatherPieces / scatterPieces move the bytes between an
 * extent's buffer and the data stream.
 */
import { LARGE_PIECE_BYTES } from './two-phase.ts';
import type { Runs } from './view-map.ts';

/** One file access of a sieved plan: bytes [offset, offset + length) holding runs [first, end) of the access. */
export interface SieveExtent {
  readonly offset: number;
  readonly length: number;
  readonly first: number;
  readonly end: number;
}

/** The extents that cover `runs` in order, each spanning at most `bufferSize` bytes unless it is one run; a large run is an extent by itself. */
export function planSieve(runs: Runs, bufferSize: number): SieveExtent[] {
  const out: SieveExtent[] = [];
  const n = runs.offsets.length;
  let i = 0;
  while (i < n) {
    const start = runs.offsets[i]!;
    let stop = start + runs.lengths[i]!;
    let j = i + 1;
    while (j < n && runs.lengths[i]! < LARGE_PIECE_BYTES) {
      const o = runs.offsets[j]!;
      const e = o + runs.lengths[j]!;
      if (o < stop || e - start > bufferSize || runs.lengths[j]! >= LARGE_PIECE_BYTES) break;
      stop = e;
      j++;
    }
    out.push({ offset: start, length: stop - start, first: i, end: j });
    i = j;
  }
  return out;
}

/**
 * Copies the pieces of extent `x` out of `extent` (its first `got` bytes were read: the file may end
 * before) into area[at ..]; returns the data bytes copied, which stop at the first piece the file cut short.
 */
export function gatherPieces(x: SieveExtent, runs: Runs, extent: Uint8Array, got: number, area: Uint8Array, at: number): number {
  let copied = 0;
  for (let k = x.first; k < x.end; k++) {
    const rel = runs.offsets[k]! - x.offset;
    const len = runs.lengths[k]!;
    const avail = Math.max(0, Math.min(len, got - rel));
    area.set(extent.subarray(rel, rel + avail), at + copied);
    copied += avail;
    if (avail < len) break;
  }
  return copied;
}

/** Copies data[at ..] into the pieces of extent `x` inside `extent` (the extent's bytes as read); returns the data bytes used. */
export function scatterPieces(x: SieveExtent, runs: Runs, data: Uint8Array, at: number, extent: Uint8Array): number {
  let used = 0;
  for (let k = x.first; k < x.end; k++) {
    const rel = runs.offsets[k]! - x.offset;
    const len = runs.lengths[k]!;
    extent.set(data.subarray(at + used, at + used + len), rel);
    used += len;
  }
  return used;
}

/** The data bytes an extent holds (the sum of its runs' lengths). */
export function piecesBytes(x: SieveExtent, runs: Runs): number {
  let bytes = 0;
  for (let k = x.first; k < x.end; k++) bytes += runs.lengths[k]!;
  return bytes;
}
