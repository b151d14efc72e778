/**
 * Rabenseifner's allreduce for long vectors and commutative ops:
 * reduce-scatter by recursive halving, then allgather by recursive doubling.
 *
 * Sources: R. Rabenseifner, "Optimization of collective reduction operations"
 * (ICCS 2004); Thakur, Rabenseifner, Gropp (IJHPCA 2005) section 4.4; MPICH
 * src/mpi/coll/allreduce/allreduce_intra_reduce_scatter_allgather.c.
 *
 * p = pof2 + rem: the same fix-up as recursive doubling (allreduce.ts) maps
 * the ranks onto pof2 newranks. The vector of n items is cut into pof2 chunks
 * (chunk i has floor(n/pof2) items, plus one for i < n mod pof2), always at
 * item boundaries.
 *
 *   reduce-scatter, mask = pof2/2, ..., 2, 1:
 *     before the step, newrank r owns chunks [lo, lo + 2m) with
 *     lo = r & ~(2m - 1); it keeps the half that contains r, sends the other
 *     half to r ^ m and combines what it receives into the kept half.
 *     After the last step r owns chunk r, fully reduced.
 *   allgather, mask = 1, 2, ..., pof2/2:
 *     r owns chunks [r & ~(m - 1), +m); it sends them to r ^ m and receives
 *     that partner's aligned range: afterwards it owns the 2m-aligned range.
 *
 *     pof2 = 4, chunks A B C D:   step m=2: 0,1 keep AB; 2,3 keep CD
 *                                  step m=1: 0:A 1:B 2:C 3:D  (reduced)
 *                                  then m=1, m=2 put them back together.
 *
 * The halving pairs ranks at decreasing distance, so a rank's partial
 * reduction is not a contiguous range of ranks: commutative ops only
 * (SELECTION_TABLE sends non-commutative ones elsewhere).
 * Tag invariant: each pair exchanges once per phase, phase 1 before phase 2
 * on both sides; the fix-up pairs use opposite directions in and out.
 */
import { assert } from '../util/index.ts';
import { recvInto, sendrecvInto } from './exchange.ts';
import { operandMismatch } from './mismatch.ts';
import type { ByteOp, CollPt2pt } from './pt2pt.ts';
import { borrowScratch, giveBackScratch } from './scratch.ts';
import { floorPowerOfTwo } from './tree.ts';

/**
 * Allreduce of every rank's vector into `buf`. Needs op.commute.
 * @param send this rank's vector, or null when it is already in `buf` (IN_PLACE).
 *   Read where it lies: the first exchange receives straight into `buf` and
 *   combines `send` into it, so the vector is never copied into `buf` first.
 */
export async function rabenseifner(pt: CollPt2pt, tag: number, send: Uint8Array | null, buf: Uint8Array, op: ByteOp): Promise<void> {
  assert(op.commute, 'rabenseifner is used for commutative ops only');
  const { rank, size } = pt;
  const pof2 = floorPowerOfTwo(size);
  const rem = size - pof2;
  // This rank's vector while it still lies in `send` (null once it is in `buf`).
  let pending = send;

  let newrank: number;
  if (rank < 2 * rem) {
    if (rank % 2 === 0) {
      await pt.send(rank + 1, tag, pending ?? buf);
      newrank = -1;
    } else {
      await receiveCombine(pt, tag, rank - 1, pending, buf, op);
      pending = null;
      newrank = rank >> 1;
    }
  } else {
    newrank = rank - rem;
  }

  if (newrank >= 0) {
    const items = buf.length / op.itemBytes;
    // at[i]: byte offset of chunk i; at[pof2] = buf.length.
    const at = new Array<number>(pof2 + 1);
    const base = Math.floor(items / pof2);
    const extra = items % pof2;
    at[0] = 0;
    for (let i = 0; i < pof2; i++) at[i + 1] = at[i]! + (base + (i < extra ? 1 : 0)) * op.itemBytes;
    const realRank = (nr: number): number => (nr < rem ? nr * 2 + 1 : nr + rem);

    for (let mask = pof2 >> 1; mask > 0; mask >>= 1) {
      const peer = realRank(newrank ^ mask);
      const lo = newrank & ~(2 * mask - 1);
      const mid = lo + mask;
      const hi = lo + 2 * mask;
      const [keepLo, keepHi, giveLo, giveHi] = (newrank & mask) !== 0 ? [mid, hi, lo, mid] : [lo, mid, mid, hi];
      const from = pending ?? buf;
      const kept = pending === null ? null : pending.subarray(at[keepLo]!, at[keepHi]!);
      await exchangeCombine(pt, tag, peer, from.subarray(at[giveLo]!, at[giveHi]!), kept, buf.subarray(at[keepLo]!, at[keepHi]!), op);
      pending = null;
    }
    for (let mask = 1; mask < pof2; mask <<= 1) {
      const peerNew = newrank ^ mask;
      const own = newrank & ~(mask - 1);
      const theirs = peerNew & ~(mask - 1);
      // Received straight into place: the two ranges are disjoint.
      await sendrecvInto(pt, tag, realRank(peerNew), buf.subarray(at[own]!, at[own + mask]!), realRank(peerNew), buf.subarray(at[theirs]!, at[theirs + mask]!), 'Allreduce');
    }
  }

  if (rank < 2 * rem) {
    if (rank % 2 === 1) await pt.send(rank - 1, tag, buf);
    else await recvInto(pt, rank + 1, tag, buf, 'Allreduce');
  }
}

/**
 * Sends `give` to `peer` and leaves (what `peer` sends back) op (this rank's
 * kept half) in `into`; `kept` is that half when it still lies in the caller's
 * send vector, null when it is already in `into`.
 */
async function exchangeCombine(
  pt: CollPt2pt, tag: number, peer: number, give: Uint8Array, kept: Uint8Array | null, into: Uint8Array, op: ByteOp,
): Promise<void> {
  await Promise.all([pt.send(peer, tag, give), receiveCombine(pt, tag, peer, kept, into, op)]);
}

/**
 * Receives from `source` and leaves (received) op (this rank's data) in `into`; the data is
 * `kept` when given, else `into` itself. Resolves the received length.
 */
async function receiveCombine(pt: CollPt2pt, tag: number, source: number, kept: Uint8Array | null, into: Uint8Array, op: ByteOp): Promise<number> {
  if (kept !== null) {
    // The data lies in the send vector: receive straight into place and fold the data in (op commutes).
    const n = await recvInto(pt, source, tag, into, pt.call ?? 'Allreduce');
    if (n !== into.length) throw operandMismatch(pt, n, into.length, source);
    op.combine(kept, into);
    return n;
  }
  const scratch = borrowScratch(into.length);
  try {
    const got = scratch.subarray(0, into.length);
    const n = await recvInto(pt, source, tag, got, pt.call ?? 'Allreduce');
    if (n !== into.length) throw operandMismatch(pt, n, into.length, source);
    op.combine(got, into);
    return n;
  } finally {
    giveBackScratch(scratch);
  }
}
