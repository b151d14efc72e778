/**
 * The pure planning of two-phase collective I/O (ROMIO's
 * ad_write_coll.c / ad_read_coll.c; Thakur, Gropp, Lusk, "Data Sieving and
 * Collective I/O in ROMIO", Frontiers '99, section 4): the global byte range
 * that a collective call touches is cut into one contiguous *file domain*
 * per aggregator; every process cuts its file runs at the domain boundaries
 * and exchanges the pieces with the aggregators that own them; each
 * aggregator then accesses its domain in large contiguous pieces.
 *
 *   ranks' runs:   r0 [==]   [==]   [==]   r1 [==]  [==] ...  (interleaved)
 *   domains:       |---- agg 0 ----|---- agg 1 ----|---- agg 2 ----|
 *   aggregator:    sort the pieces it got by offset, merge the touching
 *                  ones into extents, write / read each extent in pieces of
 *                  at most cb_buffer_size bytes
 *
 * State: none; these functions turn run lists into plans. api/file-collective.ts
 * does the exchanges (Alltoallv on the file's communicator) and the node:fs calls.
 */
import type { Runs } from './view-map.ts';

/** Domain boundaries: domain i is [bounds[i], bounds[i + 1]); `count` domains of about equal size covering [lo, hi). */
export function fileDomains(lo: number, hi: number, count: number): number[] {
  const bounds: number[] = [lo];
  const span = Math.max(0, hi - lo);
  const each = Math.ceil(span / count);
  for (let i = 1; i < count; i++) bounds.push(Math.min(hi, lo + i * each));
  bounds.push(hi);
  return bounds;
}

/** One process's pieces for every domain: per domain, (offset, length) pairs and where each piece sits in the process's data stream. */
export interface DomainPieces {
  /** per domain: offset0, length0, offset1, length1, ... */
  readonly pairs: number[][];
  /** per domain: the data-stream position of each piece */
  readonly streamAt: number[][];
  /** per domain: total bytes */
  readonly bytes: number[];
}

/** Cuts `runs` (in data order) at the domain boundaries. */
export function splitByDomain(runs: Runs, bounds: readonly number[]): DomainPieces {
  const n = bounds.length - 1;
  const pairs: number[][] = Array.from({ length: n }, () => []);
  const streamAt: number[][] = Array.from({ length: n }, () => []);
  const bytes: number[] = new Array<number>(n).fill(0);
  let stream = 0;
  for (let i = 0; i < runs.offsets.length; i++) {
    let off = runs.offsets[i]!;
    let left = runs.lengths[i]!;
    while (left > 0) {
      const d = domainOf(bounds, off);
      const len = Math.min(left, bounds[d + 1]! - off);
      pairs[d]!.push(off, len);
      streamAt[d]!.push(stream);
      bytes[d]! += len;
      stream += len;
      off += len;
      left -= len;
    }
  }
  return { pairs, streamAt, bytes };
}

/** The domain holding byte `off` (the last domain for off past the end: it only happens for an empty last domain). */
function domainOf(bounds: readonly number[], off: number): number {
  let lo = 0;
  let hi = bounds.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (bounds[mid]! <= off) lo = mid;
    else hi = mid - 1;
  }
  // Skip empty domains at a boundary: the piece belongs to the domain that has room.
  while (lo < bounds.length - 2 && bounds[lo + 1]! <= off) lo++;
  return lo;
}

/** A piece an aggregator received: file offset, length, and where its bytes are in the aggregator's receive buffer. */
export interface Piece {
  offset: number;
  length: number;
  at: number;
}

/** A contiguous extent of the file an aggregator accesses at once, and the pieces inside it. */
export interface Extent {
  offset: number;
  length: number;
  pieces: Piece[];
}

/**
 * Sorts pieces by offset and merges touching or overlapping ones into extents (an overlap of a
 * collective write is MPI-undefined: the later piece in offset order wins).
 */
export function coalesce(pieces: Piece[]): Extent[] {
  pieces.sort((a, b) => a.offset - b.offset);
  const out: Extent[] = [];
  for (const p of pieces) {
    if (p.length === 0) continue;
    const last = out[out.length - 1];
    if (last !== undefined && p.offset <= last.offset + last.length) {
      last.length = Math.max(last.length, p.offset + p.length - last.offset);
      last.pieces.push(p);
    } else out.push({ offset: p.offset, length: p.length, pieces: [p] });
  }
  return out;
}

/** True when some two processes' byte ranges [lo, hi) overlap: their accesses interleave (ROMIO's test for romio_cb_* = automatic). */
export function isInterleaved(ranges: readonly (readonly [number, number])[]): boolean {
  const live = ranges.filter(([lo, hi]) => hi > lo).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < live.length; i++) if (live[i]![0] < live[i - 1]![1]) return true;
  return false;
}

/**
 * Pieces at least this long on average gain nothing from the aggregators: each is one file access
 * already, and sending it to an aggregator first costs more than the access (on one host, moving a
 * byte over a socket costs about four memory copies; a node:fs call about 30 us, the copy of some
 * 75 KB; across hosts the network costs more still).
 */
export const LARGE_PIECE_BYTES = 64 * 1024;

/** What each process accesses in a collective call, as two-phase's choice needs it: [lo, hi) of its bytes, its bytes and its pieces. */
export type AccessShape = readonly [lo: number, hi: number, bytes: number, pieces: number];

/**
 * romio_cb_* = automatic: whether a collective access goes through the aggregators. It does when the
 * processes' byte ranges interleave (ROMIO's test) and some process's pieces average under
 * {@link LARGE_PIECE_BYTES}; when every process accesses large pieces, each accesses the file itself.
 */
export function wantsTwoPhase(shapes: readonly AccessShape[]): boolean {
  if (!isInterleaved(shapes.map(([lo, hi]) => [lo, hi] as const))) return false;
  return shapes.some(([, , bytes, pieces]) => pieces > 0 && bytes / pieces < LARGE_PIECE_BYTES);
}

/** The rounds of a collective access: each aggregator's domain cut into windows of at most cb_buffer_size bytes. */
export interface Rounds {
  /** boundaries of every window, in file order (window w is [bounds[w], bounds[w + 1])) */
  readonly bounds: number[];
  /** window[d][k]: the window aggregator d handles in round k (absent when its domain has fewer rounds) */
  readonly window: number[][];
  /** rounds every process takes part in: the most windows of any domain */
  readonly count: number;
}

/**
 * Cuts every file domain into windows of at most `windowBytes` bytes, so that an aggregator holds
 * at most that much of one call's data at a time (ROMIO's cycles through cb_buffer_size).
 */
export function roundWindows(domains: readonly number[], windowBytes: number): Rounds {
  const bounds: number[] = [];
  const window: number[][] = [];
  let count = 0;
  for (let d = 0; d + 1 < domains.length; d++) {
    const lo = domains[d]!;
    const hi = domains[d + 1]!;
    const mine: number[] = [];
    for (let at = lo; at < hi; at += windowBytes) {
      mine.push(bounds.length);
      bounds.push(at);
    }
    window.push(mine);
    count = Math.max(count, mine.length);
  }
  bounds.push(domains[domains.length - 1]!);
  return { bounds, window, count };
}
