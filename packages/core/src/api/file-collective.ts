/**
 * Two-phase collective I/O of a File (ROMIO's algorithm; the plan is
 * io/two-phase.ts, which cites the paper): every process of the file's
 * communicator takes part, whatever it accesses.
 *
 *   1. allgather each process's byte range [lo, hi), bytes and pieces: the
 *      global range (and, for romio_cb_* = automatic, whether the ranges
 *      interleave with small pieces: io/two-phase.ts wantsTwoPhase)
 *   2. cut it into one file domain per aggregator (hint cb_nodes; by default
 *      one process per host, File.open chooses them)
 *   3. each process cuts its runs at the domain boundaries; Alltoall of the
 *      piece counts, Alltoallv of the pieces (offset, length as FLOAT64)
 *   4. in rounds, as ROMIO cycles: each domain is cut into windows of at
 *      most cb_buffer_size bytes, and round k moves window k of every domain
 *      write: Alltoallv of the window's data to the aggregators, which sort
 *      and merge the pieces into extents and write each at once; read: the
 *      aggregators read the merged extents of the window and Alltoallv the
 *      bytes back, each process puts them in place.
 *   5. an allgather of failures, so that an aggregator's error (disk full)
 *      fails the call everywhere instead of leaving the others in the next
 *      collective.
 *
 * An aggregator holds at most about cb_buffer_size bytes of one call's data
 * at a time (more only where the processes' pieces overlap).
 */
import {
  coalesce, fileDomains, fileError, roundWindows, splitByDomain, wantsTwoPhase, type AccessShape, type DomainPieces, type Extent, type Piece, type Rounds, type Runs,
} from '../io/index.ts';
import { MPIError } from '../util/index.ts';
import type { Comm } from './comm.ts';
import { readFully, writeFully, type FileAccess } from './file-access.ts';

/** What the two-phase path needs of its File. */
export interface CollectiveAccess extends FileAccess {
  readonly _comm: Comm;
  /** ranks of comm that aggregate, one per domain */
  readonly _aggregators: readonly number[];
  readonly _cbBufferSize: number;
}

/** [lo, hi) of a run list ([0, 0] when empty), its bytes and its non-empty runs. */
export function shapeOf(runs: Runs): AccessShape {
  let lo = Infinity;
  let hi = -Infinity;
  let bytes = 0;
  let pieces = 0;
  for (let i = 0; i < runs.offsets.length; i++) {
    if (runs.lengths[i] === 0) continue;
    lo = Math.min(lo, runs.offsets[i]!);
    hi = Math.max(hi, runs.offsets[i]! + runs.lengths[i]!);
    bytes += runs.lengths[i]!;
    pieces++;
  }
  return lo === Infinity ? [0, 0, 0, 0] : [lo, hi, bytes, pieces];
}

/**
 * Whether this collective access goes through the aggregators: the hint, and for 'automatic' whether
 * the processes' ranges interleave with some process's pieces small (io/two-phase.ts wantsTwoPhase).
 * Returns every process's [lo, hi) when it does (the plan needs them), null when each process
 * accesses the file itself.
 */
export async function twoPhaseRanges(comm: Comm, hint: string, runs: Runs): Promise<[number, number][] | null> {
  if (hint === 'disable') return null;
  const shapes = await comm.allgather(shapeOf(runs));
  return hint === 'enable' || wantsTwoPhase(shapes) ? shapes.map(([lo, hi]) => [lo, hi]) : null;
}

interface Plan {
  rounds: Rounds;
  /** my pieces, per window */
  mine: DomainPieces;
  /** when I aggregate: per round, per rank, the (offset, length) pairs it sends me; else null */
  fromRank: number[][][] | null;
}

async function plan(c: CollectiveAccess, runs: Runs, ranges: readonly [number, number][]): Promise<Plan | null> {
  const { _comm: comm, _aggregators: aggregators } = c;
  let lo = Infinity;
  let hi = -Infinity;
  for (const [a, b] of ranges) {
    if (b <= a) continue;
    lo = Math.min(lo, a);
    hi = Math.max(hi, b);
  }
  if (lo === Infinity) return null;
  const domains = fileDomains(lo, hi, aggregators.length);
  const rounds = roundWindows(domains, c._cbBufferSize);
  const mine = splitByDomain(runs, rounds.bounds);
  // To each aggregator, once, the pairs of all its windows (it sorts them into rounds by offset).
  const size = comm.size;
  const toAgg = aggregators.map((_, d) => rounds.window[d]!.flatMap((w) => mine.pairs[w]!));
  const sendCounts = new Array<number>(size).fill(0);
  aggregators.forEach((r, d) => (sendCounts[r] = toAgg[d]!.length));
  const recvCounts = await comm.alltoall(sendCounts);
  const sendDispls = displsOf(sendCounts);
  const send = new Float64Array(sendCounts.reduce((a, b) => a + b, 0));
  aggregators.forEach((r, d) => send.set(toAgg[d]!, sendDispls[r]!));
  const recvDispls = displsOf(recvCounts);
  const recv = new Float64Array(recvCounts.reduce((a, b) => a + b, 0));
  await comm.Alltoallv([send, sendCounts, sendDispls], [recv, recvCounts, recvDispls]);
  const d = aggregators.indexOf(comm.rank);
  let fromRank: number[][][] | null = null;
  if (d >= 0) {
    const start = domains[d]!;
    fromRank = Array.from({ length: rounds.count }, () => Array.from({ length: size }, () => [] as number[]));
    for (let r = 0; r < size; r++) {
      for (let i = recvDispls[r]!; i < recvDispls[r]! + recvCounts[r]!; i += 2) {
        // A piece never crosses a window: its first byte tells the round.
        fromRank[Math.floor((recv[i]! - start) / c._cbBufferSize)]![r]!.push(recv[i]!, recv[i + 1]!);
      }
    }
  }
  return { rounds, mine, fromRank };
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

/** Bytes of (offset, length) pairs. */
function bytesOfPairs(pairs: readonly number[]): number {
  let n = 0;
  for (let i = 1; i < pairs.length; i += 2) n += pairs[i]!;
  return n;
}

/** The pieces an aggregator got in one round, each pointing to where its bytes are in the round's buffer (ranks back to back). */
function piecesOf(fromRank: readonly number[][]): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  for (const pairs of fromRank) {
    for (let i = 0; i < pairs.length; i += 2) {
      pieces.push({ offset: pairs[i]!, length: pairs[i + 1]!, at });
      at += pairs[i + 1]!;
    }
  }
  return pieces;
}

/** My pieces of round k for each aggregator: their pairs and data-stream positions (empty past the domain's rounds). */
function myRound(p: Plan, d: number, k: number): { pairs: number[]; streamAt: number[]; bytes: number } {
  const w = p.rounds.window[d]![k];
  if (w === undefined) return { pairs: [], streamAt: [], bytes: 0 };
  return { pairs: p.mine.pairs[w]!, streamAt: p.mine.streamAt[w]!, bytes: p.mine.bytes[w]! };
}

/** Two-phase write of `data` (the process's data stream) to `runs`. */
export async function writeTwoPhase(c: CollectiveAccess, runs: Runs, ranges: [number, number][], data: Uint8Array, call: string): Promise<void> {
  const p = await plan(c, runs, ranges);
  if (p === null) return;
  const { _comm: comm, _aggregators: aggregators } = c;
  const size = comm.size;
  let failure: MPIError | null = null;
  for (let k = 0; k < p.rounds.count; k++) {
    // My data for each aggregator's window k, its pieces back to back.
    const sendCounts = new Array<number>(size).fill(0);
    const mine = aggregators.map((_, d) => myRound(p, d, k));
    aggregators.forEach((r, d) => (sendCounts[r] = mine[d]!.bytes));
    const sendDispls = displsOf(sendCounts);
    const send = new Uint8Array(sendCounts.reduce((a, b) => a + b, 0));
    aggregators.forEach((r, d) => {
      let at = sendDispls[r]!;
      const { pairs, streamAt } = mine[d]!;
      for (let i = 0; i < streamAt.length; i++) {
        const len = pairs[2 * i + 1]!;
        send.set(data.subarray(streamAt[i]!, streamAt[i]! + len), at);
        at += len;
      }
    });
    const from = p.fromRank?.[k] ?? null;
    const recvCounts = from === null ? new Array<number>(size).fill(0) : from.map(bytesOfPairs);
    const recvDispls = displsOf(recvCounts);
    const recv = new Uint8Array(recvCounts.reduce((a, b) => a + b, 0));
    await comm.Alltoallv([send, sendCounts, sendDispls], [recv, recvCounts, recvDispls]);
    if (from === null || failure !== null) continue;
    try {
      for (const e of coalesce(piecesOf(from))) await writeExtent(c, e, recv, call);
    } catch (e) {
      // Keep taking part in the rounds; the error is everybody's at the end.
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

/** Writes one extent (at most a window: cb_buffer_size bytes): directly from the receive buffer when it is one piece, else staged. */
async function writeExtent(c: CollectiveAccess, e: Extent, recv: Uint8Array, call: string): Promise<void> {
  if (e.pieces.length === 1) {
    const p = e.pieces[0]!;
    await writeFully(c._fh, recv.subarray(p.at, p.at + p.length), p.offset, call, c.path);
    return;
  }
  const stage = new Uint8Array(e.length);
  for (const p of e.pieces) stage.set(recv.subarray(p.at, p.at + p.length), p.offset - e.offset);
  await writeFully(c._fh, stage, e.offset, call, c.path);
}

/**
 * Two-phase read of `runs` into `area` (the process's data stream). Returns the bytes of the data
 * stream before the end of the file.
 */
export async function readTwoPhase(c: CollectiveAccess, runs: Runs, ranges: [number, number][], area: Uint8Array, call: string): Promise<number> {
  const p = await plan(c, runs, ranges);
  if (p === null) return 0;
  const { _comm: comm, _aggregators: aggregators } = c;
  const size = comm.size;
  let eof = Infinity;
  let failure: MPIError | null = null;
  for (let k = 0; k < p.rounds.count; k++) {
    const from = p.fromRank?.[k] ?? null;
    const sendCounts = from === null ? new Array<number>(size).fill(0) : from.map(bytesOfPairs);
    const send = new Uint8Array(sendCounts.reduce((a, b) => a + b, 0));
    if (from !== null && failure === null) {
      try {
        eof = Math.min(eof, await readExtents(c, coalesce(piecesOf(from)), send, call));
      } catch (e) {
        // Still take part in the rounds (sending zeros), then fail everywhere with this error.
        failure = fileError(e, call, c.path);
      }
    }
    const mine = aggregators.map((_, d) => myRound(p, d, k));
    const recvCounts = new Array<number>(size).fill(0);
    aggregators.forEach((r, d) => (recvCounts[r] = mine[d]!.bytes));
    const recvDispls = displsOf(recvCounts);
    const recv = new Uint8Array(recvCounts.reduce((a, b) => a + b, 0));
    await comm.Alltoallv([send, sendCounts, displsOf(sendCounts)], [recv, recvCounts, recvDispls]);
    aggregators.forEach((r, d) => {
      let at = recvDispls[r]!;
      const { pairs, streamAt } = mine[d]!;
      for (let i = 0; i < streamAt.length; i++) {
        const len = pairs[2 * i + 1]!;
        area.set(recv.subarray(at, at + len), streamAt[i]!);
        at += len;
      }
    });
  }
  // Failures, and the end of the file as the aggregators saw it: the data stream counts up to the first byte past it.
  const all = await comm.allgather([failure === null ? null : failure.toWire(), eof] as const);
  if (failure !== null) throw failure;
  const first = all.find(([w]) => w !== null);
  if (first !== undefined) throw MPIError.fromWire(first[0]!);
  return bytesBefore(runs, Math.min(...all.map(([, end]) => end)));
}

/** Reads each extent (at most a window) at once, copying its pieces to their places in `send`; returns the end of the file if a read hit it, else Infinity. */
async function readExtents(c: CollectiveAccess, extents: Extent[], send: Uint8Array, call: string): Promise<number> {
  let eof = Infinity;
  for (const e of extents) {
    const buf = new Uint8Array(e.length);
    const got = await readFully(c._fh, buf, e.offset, call, c.path);
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
