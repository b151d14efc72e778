/**
 * Two-phase collective I/O of a File (ROMIO's algorithm; the plan is
 * io/two-phase.ts, which cites the paper): every process of the file's
 * communicator takes part, whatever it accesses.
 *
 *   1. allgather each process's byte range [lo, hi): the global range (and,
 *      for romio_cb_* = automatic, whether the ranges interleave at all)
 *   2. cut it into one file domain per aggregator (hint cb_nodes; by default
 *      one process per host, File.open chooses them)
 *   3. each process cuts its runs at the domain boundaries; Alltoall of the
 *      piece counts, Alltoallv of the pieces (offset, length as FLOAT64)
 *   4. write: Alltoallv of the data to the aggregators, which sort and merge
 *      the pieces into extents and write them in pieces of at most
 *      cb_buffer_size bytes; read: the aggregators read the merged extents
 *      and Alltoallv the bytes back, each process puts them in place.
 *
 * One round: an aggregator holds all the data of its domain at once (ROMIO
 * cycles through its domain in cb_buffer_size rounds; issue 37 leaves that
 * for later), so the memory of a collective access is about twice its data.
 */
import { coalesce, fileDomains, fileError, isInterleaved, splitByDomain, type Extent, type Piece, type Runs } from '../io/index.ts';
import { MPIError } from '../util/index.ts';
import type { Comm } from './comm.ts';
import { readFully, writeFully, type FileAccess } from './file-access.ts';

/** What the two-phase path needs of its File. */
export interface CollectiveAccess extends FileAccess {
  readonly comm: Comm;
  /** ranks of comm that aggregate, one per domain */
  readonly aggregators: readonly number[];
  readonly cbBufferSize: number;
}

/** [lo, hi) of a run list ([0, 0] when empty). */
export function rangeOf(runs: Runs): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < runs.offsets.length; i++) {
    if (runs.lengths[i] === 0) continue;
    lo = Math.min(lo, runs.offsets[i]!);
    hi = Math.max(hi, runs.offsets[i]! + runs.lengths[i]!);
  }
  return lo === Infinity ? [0, 0] : [lo, hi];
}

/**
 * Whether this collective access goes through the aggregators: the hint, and for 'automatic' whether
 * the processes' ranges interleave. Returns every process's [lo, hi) when it does (the plan needs
 * them), null when each process accesses the file itself.
 */
export async function twoPhaseRanges(comm: Comm, hint: string, runs: Runs): Promise<[number, number][] | null> {
  if (hint === 'disable') return null;
  const ranges = await comm.allgather(rangeOf(runs));
  return hint === 'enable' || isInterleaved(ranges) ? ranges : null;
}

interface Plan {
  bounds: number[];
  /** per aggregator index: my pieces */
  mine: ReturnType<typeof splitByDomain>;
  /** per rank: the pieces it sends me as (offset, length) pairs, when I aggregate */
  fromRank: Float64Array[];
}

async function plan(c: CollectiveAccess, runs: Runs, ranges: readonly [number, number][]): Promise<Plan | null> {
  const { comm, aggregators } = c;
  let lo = Infinity;
  let hi = -Infinity;
  for (const [a, b] of ranges) {
    if (b <= a) continue;
    lo = Math.min(lo, a);
    hi = Math.max(hi, b);
  }
  if (lo === Infinity) return null;
  const bounds = fileDomains(lo, hi, aggregators.length);
  const mine = splitByDomain(runs, bounds);
  // Pairs to each rank: to an aggregator its domain's pairs, to others nothing.
  const size = comm.size;
  const sendCounts = new Array<number>(size).fill(0);
  aggregators.forEach((r, d) => (sendCounts[r] = mine.pairs[d]!.length));
  const recvCounts = await comm.alltoall(sendCounts);
  const send = new Float64Array(sendCounts.reduce((a, b) => a + b, 0));
  const sendDispls = displsOf(sendCounts);
  aggregators.forEach((r, d) => send.set(mine.pairs[d]!, sendDispls[r]!));
  const recv = new Float64Array(recvCounts.reduce((a, b) => a + b, 0));
  const recvDispls = displsOf(recvCounts);
  await comm.Alltoallv([send, sendCounts, sendDispls], [recv, recvCounts, recvDispls]);
  const fromRank = recvCounts.map((n, r) => recv.subarray(recvDispls[r]!, recvDispls[r]! + n));
  return { bounds, mine, fromRank };
}

function displsOf(counts: readonly number[]): number[] {
  const out: number[] = [];
  let at = 0;
  for (const n of counts) {
    out.push(at);
    at += n;
  }
  return out;
}

/** Bytes of each rank's pieces (sum of the lengths in its pairs). */
function bytesOfPairs(pairs: Float64Array): number {
  let n = 0;
  for (let i = 1; i < pairs.length; i += 2) n += pairs[i]!;
  return n;
}

/** The pieces an aggregator got, each pointing into `buf` where the ranks' bytes are back to back in rank order. */
function piecesOf(fromRank: Float64Array[]): { pieces: Piece[]; rankStart: number[]; total: number } {
  const pieces: Piece[] = [];
  const rankStart: number[] = [];
  let at = 0;
  for (const pairs of fromRank) {
    rankStart.push(at);
    for (let i = 0; i < pairs.length; i += 2) {
      pieces.push({ offset: pairs[i]!, length: pairs[i + 1]!, at });
      at += pairs[i + 1]!;
    }
  }
  return { pieces, rankStart, total: at };
}

/** Two-phase write of `data` (the process's data stream) to `runs`. */
export async function writeTwoPhase(c: CollectiveAccess, runs: Runs, ranges: [number, number][], data: Uint8Array, call: string): Promise<void> {
  const p = await plan(c, runs, ranges);
  if (p === null) return;
  const { comm, aggregators } = c;
  const size = comm.size;
  // My data for each aggregator, its pieces back to back.
  const sendCounts = new Array<number>(size).fill(0);
  aggregators.forEach((r, d) => (sendCounts[r] = p.mine.bytes[d]!));
  const sendDispls = displsOf(sendCounts);
  const send = new Uint8Array(sendCounts.reduce((a, b) => a + b, 0));
  aggregators.forEach((r, d) => {
    let at = sendDispls[r]!;
    const pairs = p.mine.pairs[d]!;
    const streamAt = p.mine.streamAt[d]!;
    for (let i = 0; i < streamAt.length; i++) {
      const len = pairs[2 * i + 1]!;
      send.set(data.subarray(streamAt[i]!, streamAt[i]! + len), at);
      at += len;
    }
  });
  const recvCounts = p.fromRank.map(bytesOfPairs);
  const recvDispls = displsOf(recvCounts);
  const recv = new Uint8Array(recvCounts.reduce((a, b) => a + b, 0));
  await comm.Alltoallv([send, sendCounts, sendDispls], [recv, recvCounts, recvDispls]);
  let failure: MPIError | null = null;
  if (aggregators.includes(comm.rank)) {
    try {
      for (const e of coalesce(piecesOf(p.fromRank).pieces)) await writeExtent(c, e, recv, call);
    } catch (e) {
      failure = fileError(e, call, c.path);
    }
  }
  await throwAnyFailure(comm, failure);
}

/**
 * Every process learns of an aggregator's failure (ENOSPC, EIO): the collective then fails on all
 * of them with that error, and nobody is left waiting in the next collective.
 */
async function throwAnyFailure(comm: Comm, mine: MPIError | null): Promise<void> {
  const all = await comm.allgather(mine === null ? null : mine.toWire());
  if (mine !== null) throw mine;
  const first = all.find((w) => w !== null);
  if (first != null) throw MPIError.fromWire(first);
}

/** Writes one extent: directly from the receive buffer when it is one piece, else staged in pieces of at most cb_buffer_size bytes. */
async function writeExtent(c: CollectiveAccess, e: Extent, recv: Uint8Array, call: string): Promise<void> {
  if (e.pieces.length === 1) {
    const p = e.pieces[0]!;
    await writeFully(c.fh, recv.subarray(p.at, p.at + p.length), p.offset, call, c.path);
    return;
  }
  const chunk = Math.max(1, Math.min(c.cbBufferSize, e.length));
  const stage = new Uint8Array(chunk);
  let first = 0;
  for (let start = e.offset; start < e.offset + e.length; start += chunk) {
    const end = Math.min(start + chunk, e.offset + e.length);
    while (first < e.pieces.length && e.pieces[first]!.offset + e.pieces[first]!.length <= start) first++;
    for (let i = first; i < e.pieces.length && e.pieces[i]!.offset < end; i++) {
      const p = e.pieces[i]!;
      const from = Math.max(start, p.offset);
      const to = Math.min(end, p.offset + p.length);
      if (to > from) stage.set(recv.subarray(p.at + (from - p.offset), p.at + (to - p.offset)), from - start);
    }
    await writeFully(c.fh, stage.subarray(0, end - start), start, call, c.path);
  }
}

/**
 * Two-phase read of `runs` into `area` (the process's data stream). Returns the bytes of the data
 * stream before the end of the file.
 */
export async function readTwoPhase(c: CollectiveAccess, runs: Runs, ranges: [number, number][], area: Uint8Array, call: string): Promise<number> {
  const p = await plan(c, runs, ranges);
  if (p === null) return 0;
  const { comm, aggregators } = c;
  const size = comm.size;
  let eof = Infinity;
  let send = new Uint8Array(0);
  const sendCounts = p.fromRank.map(bytesOfPairs);
  let failure: MPIError | null = null;
  if (aggregators.includes(comm.rank)) {
    const { pieces, total } = piecesOf(p.fromRank);
    send = new Uint8Array(total);
    try {
      eof = await readExtents(c, coalesce(pieces), send, call);
    } catch (e) {
      // Still take part in the exchange (with zeros), then fail everywhere with this error.
      failure = fileError(e, call, c.path);
    }
  }
  const sendDispls = displsOf(sendCounts);
  const recvCounts = new Array<number>(size).fill(0);
  aggregators.forEach((r, d) => (recvCounts[r] = p.mine.bytes[d]!));
  const recvDispls = displsOf(recvCounts);
  const recv = new Uint8Array(recvCounts.reduce((a, b) => a + b, 0));
  await comm.Alltoallv([send, sendCounts, sendDispls], [recv, recvCounts, recvDispls]);
  aggregators.forEach((r, d) => {
    let at = recvDispls[r]!;
    const pairs = p.mine.pairs[d]!;
    const streamAt = p.mine.streamAt[d]!;
    for (let i = 0; i < streamAt.length; i++) {
      const len = pairs[2 * i + 1]!;
      area.set(recv.subarray(at, at + len), streamAt[i]!);
      at += len;
    }
  });
  // Failures, and the end of the file as the aggregators saw it: the data stream counts up to the first byte past it.
  const all = await comm.allgather([failure === null ? null : failure.toWire(), eof] as const);
  if (failure !== null) throw failure;
  const first = all.find(([w]) => w !== null);
  if (first !== undefined) throw MPIError.fromWire(first[0]!);
  return bytesBefore(runs, Math.min(...all.map(([, end]) => end)));
}

/** Reads the extents, copying each piece to its place in `send`; returns the end of the file if a read hit it, else Infinity. */
async function readExtents(c: CollectiveAccess, extents: Extent[], send: Uint8Array, call: string): Promise<number> {
  let eof = Infinity;
  for (const e of extents) {
    // The extent in pieces of at most cb_buffer_size bytes, into one buffer the pieces are copied out of.
    const buf = new Uint8Array(e.length);
    let got = 0;
    for (let at = 0; at < e.length; at += c.cbBufferSize) {
      const len = Math.min(c.cbBufferSize, e.length - at);
      const n = await readFully(c.fh, buf.subarray(at, at + len), e.offset + at, call, c.path);
      got += n;
      if (n < len) break;
    }
    if (got < e.length) eof = Math.min(eof, e.offset + got);
    for (const piece of e.pieces) send.set(buf.subarray(piece.offset - e.offset, piece.offset - e.offset + piece.length), piece.at);
  }
  return eof;
}

/** Bytes of the data stream of `runs` that lie before file byte `eof`, stopping at the first run it cuts. */
export function bytesBefore(runs: Runs, eof: number): number {
  let n = 0;
  for (let i = 0; i < runs.offsets.length; i++) {
    const len = runs.lengths[i]!;
    const inside = Math.max(0, Math.min(len, eof - runs.offsets[i]!));
    n += inside;
    if (inside < len) break;
  }
  return n;
}
