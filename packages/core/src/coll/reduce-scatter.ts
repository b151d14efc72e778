/**
 * Reduce-scatter with equal blocks (MPI_Reduce_scatter_block): pairwise
 * exchange for long commutative inputs (as MPICH), recursive halving for short
 * commutative ones on a power of two, else binomial reduce to rank 0 followed
 * by binomial scatter. With blocks of varying size (MPI_Reduce_scatter):
 * pairwise exchange for commutative ops, else binomial reduce to rank 0
 * followed by scatterv. Both forms run the one pairwise function below.
 *
 * Sources: MPICH src/mpi/coll/reduce_scatter_block/
 * reduce_scatter_block_intra_recursive_halving.c; Thakur, Rabenseifner, Gropp
 * (IJHPCA 2005) section 4.5.
 *
 * Recursive halving on p = 2^k ranks, input of p blocks:
 *   mask = p/2, ..., 2, 1: before the step, rank r owns the blocks
 *   [lo, lo + 2m) with lo = r & ~(2m - 1), each the reduction over the ranks
 *   that differ from r only in the bits above m; r keeps the half that
 *   contains block r, sends the other half to r ^ m and combines what it
 *   receives into the kept half. After the step with m = 1, r owns block r
 *   reduced over all ranks. The pairing breaks rank order, hence
 *   commutative ops only (SELECTION_TABLE). The working copy of the input
 *   and the receive block are scratch (scratch.ts), reused from call to call.
 * reduce-scatter: reduce.ts (rank order kept) then scatter.ts from rank 0.
 * Pairwise (MPICH reduce_scatter_intra_pairwise.c, the long-message choice;
 * Thakur et al. section 4.5): in step i = 1 .. p-1, rank r sends its input's
 * block (r + i) mod p to that rank and combines the block that rank
 * (r - i) mod p sends it into its own; every byte crosses one link once
 * ((p-1)/p of the input per rank), the bandwidth bound. Combination order
 * depends on the rank, hence commutative ops only.
 * Pairwise here is pipelined one step ahead: the send and the receive of step
 * i + 1 are posted before step i's block is combined, so the next block
 * travels while this one is added (two scratch blocks, used in turn). Its
 * result builds up where it ends: in `recv` itself unless in place (the first
 * block received lands there and this rank's own block is combined into it,
 * which the op's commutativity allows), so a call allocates and copies no
 * vector; in place, in a scratch block copied to the start of `recv` once
 * every send, which reads `recv`, is done.
 * Tag invariant: recursive halving and pairwise exchange once per pair; the
 * two-phase forms finish the reduce before the scatter on every rank.
 */
import { recvInto, sendrecvInto } from './exchange.ts';
import { operandMismatch } from './mismatch.ts';
import type { ByteOp, CollPt2pt, VBuffer } from './pt2pt.ts';
import { reduce } from './reduce.ts';
import { scatter, scatterv } from './scatter.ts';
import { borrowScratch, giveBackScratch } from './scratch.ts';
import { choose, type CollOptions } from './select.ts';

/**
 * Reduces size blocks element-wise over all ranks; rank i gets block i of the result in `recv`.
 * @param send size * blockBytes; null means IN_PLACE (the input is the size * blockBytes in `recv`, and the result goes to its first block)
 * @param recv blockBytes (size * blockBytes when in place)
 * @param blockBytes bytes per block, a multiple of op.itemBytes
 */
export async function reduceScatterBlock(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, blockBytes: number, op: ByteOp, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  const bb = blockBytes;
  const algorithm = choose('reduceScatterBlock', { size, bytes: size * bb, items: (size * bb) / op.itemBytes, commute: op.commute }, opts);
  const input = send ?? recv;
  if (bb === 0) return;
  if (size === 1) {
    if (send !== null) recv.set(send.subarray(0, bb));
    return;
  }
  const call = pt.call ?? 'ReduceScatterBlock';
  if (algorithm === 'pairwise') {
    const blocks = new Array<number>(size).fill(bb);
    const displs = blocks.map((_, i) => i * bb);
    await pairwise(pt, tag, send, recv, blocks, displs, op, call);
    return;
  }
  if (algorithm === 'recursive-halving') {
    // Scratch: the working copy of the input (size blocks), then the receive block (size / 2 blocks at most).
    const scratch = borrowScratch(size * bb + (size >> 1) * bb);
    const acc = scratch.subarray(0, size * bb);
    const got = scratch.subarray(size * bb);
    acc.set(input.subarray(0, size * bb));
    for (let mask = size >> 1; mask > 0; mask >>= 1) {
      const peer = rank ^ mask;
      const lo = (rank & ~(2 * mask - 1)) * bb;
      const mid = lo + mask * bb;
      const hi = lo + 2 * mask * bb;
      const upper = (rank & mask) !== 0;
      const into = got.subarray(0, mask * bb);
      // A scratch block may still be posted when a step rejects: it is not given back (as pairwise).
      const n = await sendrecvInto(pt, tag, peer, upper ? acc.subarray(lo, mid) : acc.subarray(mid, hi), peer, into, call);
      if (n !== into.length) throw operandMismatch(pt, n, into.length, peer);
      op.combine(into, upper ? acc.subarray(mid, hi) : acc.subarray(lo, mid));
    }
    recv.set(acc.subarray(rank * bb, rank * bb + bb), 0);
    giveBackScratch(scratch);
    return;
  }
  const full = rank === 0 ? new Uint8Array(size * bb) : null;
  await reduce(pt, tag, input.subarray(0, size * bb), full, op, 0, opts);
  await scatter(pt, tag, full, recv.subarray(0, bb), bb, 0, opts);
}

/**
 * Reduces the blocks of every rank's input element-wise; rank i gets block i (blockBytes[i] bytes) in `recv`.
 * Blocks lie back to back in the input, in rank order.
 * @param send sum(blockBytes) bytes; null means IN_PLACE (the input is in `recv`, and the result goes to its start)
 * @param recv at least blockBytes[rank] bytes (sum(blockBytes) when in place)
 * @param blockBytes bytes of each rank's block, each a multiple of op.itemBytes; the same on every rank
 * @param call the API call, named by the error of a rank whose counts differ (ERR_COUNT, or ERR_TRUNCATE for a longer block)
 */
export async function reduceScatter(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, blockBytes: readonly number[], op: ByteOp, call: string, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  const displs: number[] = [];
  let total = 0;
  for (const b of blockBytes) {
    displs.push(total);
    total += b;
  }
  const algorithm = choose('reduceScatter', { size, bytes: total, items: total / op.itemBytes, commute: op.commute }, opts);
  const input = send ?? recv;
  const mine = blockBytes[rank]!;
  if (total === 0) return;
  if (size === 1) {
    if (send !== null) recv.set(send.subarray(0, mine));
    return;
  }
  if (algorithm === 'pairwise') {
    await pairwise(pt, tag, send, recv, blockBytes, displs, op, call);
    return;
  }
  const full = rank === 0 ? new Uint8Array(total) : null;
  await reduce(pt, tag, input.subarray(0, total), full, op, 0, opts);
  const v: VBuffer | null = full === null ? null : { buf: full, counts: blockBytes, displs };
  await scatterv(pt, tag, v, recv.subarray(0, mine), 0, opts);
}


/**
 * Pairwise exchange (commutative ops), pipelined one step ahead; see the file comment.
 * @param send the input, or null when it is in `recv` (IN_PLACE)
 * @param displs byte offset of each rank's block in the input
 */
async function pairwise(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, blockBytes: readonly number[], displs: readonly number[], op: ByteOp, call: string,
): Promise<void> {
  const { rank, size } = pt;
  const input = send ?? recv;
  const mine = blockBytes[rank]!;
  const own = input.subarray(displs[rank]!, displs[rank]! + mine);
  // Scratch: two receive blocks used in turn, plus the accumulator when in place.
  const scratch = mine > 0 ? borrowScratch((send === null ? 3 : 2) * mine) : null;
  const spare = scratch === null ? [] : [scratch.subarray(0, mine), scratch.subarray(mine, 2 * mine)];
  const acc = send !== null ? recv.subarray(0, mine) : scratch === null ? recv.subarray(0, 0) : scratch.subarray(2 * mine, 3 * mine);
  // In place, acc starts as this rank's block; otherwise the first receive lands in acc.
  if (send === null) acc.set(own);
  const sends: Promise<void>[] = [];
  /** Posts step i's send and receive; resolves the received length (or -1 for nothing to receive). */
  const post = (i: number): Promise<number> => {
    const dest = (rank + i) % size;
    const out = blockBytes[dest]!;
    // Both sides know every count: a zero-byte block is neither sent nor awaited.
    if (out > 0) sends.push(pt.send(dest, tag, input.subarray(displs[dest]!, displs[dest]! + out)));
    if (mine === 0) return Promise.resolve(-1);
    const into = i === 1 && send !== null ? acc : spare[i & 1]!;
    return recvInto(pt, (rank - i + size) % size, tag, into, call);
  };
  let next = post(1);
  try {
    for (let i = 1; i < size; i++) {
      const current = next;
      if (i + 1 < size) next = post(i + 1);
      const n = await current;
      if (n < 0) continue;
      if (n !== mine) throw operandMismatch(pt, n, mine, (rank - i + size) % size);
      if (i === 1 && send !== null) op.combine(own, acc);
      else op.combine(spare[i & 1]!, acc);
    }
    await Promise.all(sends);
  } catch (err) {
    // A receive may still be posted into the scratch: it is not given back (the next call makes its own).
    next.catch(() => {});
    for (const s of sends) s.catch(() => {});
    throw err;
  }
  if (send === null) recv.set(acc, 0);
  if (scratch !== null) giveBackScratch(scratch);
}
