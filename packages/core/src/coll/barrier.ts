/**
 * Barrier by dissemination.
 *
 * Source: Hensgen, Finkel, Manber, "Two algorithms for barrier
 * synchronization" (1988); MPICH src/mpi/coll/barrier/barrier_intra_k_dissemination.c (k = 2).
 *
 * Round k = 1, 2, 4, ... < p: rank r sends an empty token to (r + k) mod p and
 * waits for one from (r - k) mod p. After round k, r has (transitively) heard
 * from the 2k ranks r, r-1, ..., r-2k+1, so after ceil(log2 p) rounds every
 * rank has heard from all p: nobody leaves before everybody has entered.
 *
 * Tag invariant: the distances k are distinct and < p, so each ordered pair
 * exchanges at most one message per call.
 */
import { EMPTY, sendrecv } from './exchange.ts';
import type { CollPt2pt } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';

/**
 * Blocks until every rank of the communicator has entered the barrier.
 * @param pt the communicator's collective point-to-point
 * @param tag this call's tag
 */
export async function barrier(pt: CollPt2pt, tag: number, opts?: CollOptions): Promise<void> {
  const { rank, size } = pt;
  choose('barrier', plainInput(size, 0), opts);
  for (let k = 1; k < size; k *= 2) {
    await sendrecv(pt, tag, (rank + k) % size, EMPTY, (rank - k + size) % size);
  }
}
