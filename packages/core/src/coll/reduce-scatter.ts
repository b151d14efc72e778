/**
 * Reduce-scatter with equal blocks (MPI_Reduce_scatter_block): recursive
 * halving for commutative ops on a power of two, else binomial reduce to
 * rank 0 followed by binomial scatter.
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
 *   commutative ops only (SELECTION_TABLE).
 * reduce-scatter: reduce.ts (rank order kept) then scatter.ts from rank 0.
 * Tag invariant: recursive halving exchanges once per pair; the two-phase
 * form finishes the reduce before the scatter on every rank.
 */
import { sendrecv } from './exchange.ts';
import type { ByteOp, CollPt2pt } from './pt2pt.ts';
import { reduce } from './reduce.ts';
import { scatter } from './scatter.ts';
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
  if (algorithm === 'recursive-halving') {
    const acc = input.slice(0, size * bb);
    for (let mask = size >> 1; mask > 0; mask >>= 1) {
      const peer = rank ^ mask;
      const lo = (rank & ~(2 * mask - 1)) * bb;
      const mid = lo + mask * bb;
      const hi = lo + 2 * mask * bb;
      const upper = (rank & mask) !== 0;
      const got = await sendrecv(pt, tag, peer, upper ? acc.subarray(lo, mid) : acc.subarray(mid, hi), peer);
      op.combine(got, upper ? acc.subarray(mid, hi) : acc.subarray(lo, mid));
    }
    recv.set(acc.subarray(rank * bb, rank * bb + bb), 0);
    return;
  }
  const full = rank === 0 ? new Uint8Array(size * bb) : null;
  await reduce(pt, tag, input.subarray(0, size * bb), full, op, 0, opts);
  await scatter(pt, tag, full, recv.subarray(0, bb), bb, 0, opts);
}
