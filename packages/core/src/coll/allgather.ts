/**
 * Allgather: recursive doubling (power of two, short) or ring; allgatherv by
 * ring; object allgather by gather + bcast of one bundle.
 *
 * Sources: MPICH src/mpi/coll/allgather/allgather_intra_recursive_doubling.c,
 * allgather_intra_ring.c, allgatherv/allgatherv_intra_ring.c; Thakur,
 * Rabenseifner, Gropp (IJHPCA 2005) section 4.2.
 *
 * Recursive doubling (p a power of two): before the step with mask m, rank r
 * holds the blocks [r & ~(m-1), +m) of `recv`; it sends them to r ^ m and
 * receives that partner's aligned range, so it then holds the 2m-aligned
 * range. log2 p steps.
 * Ring: in step s = 0 .. p-2, r sends block (r - s) mod p to r + 1 and
 * receives block (r - s - 1) mod p from r - 1. Every block moves p - 1 times
 * along neighbour links; blocks may have any size (allgatherv), empty ones
 * are sent too so both sides count the same messages.
 * Tag invariant: one message per ordered pair per step; steps are sequential.
 */
import { bcastBytes } from './bcast.ts';
import { copyIn, sendrecvInto } from './exchange.ts';
import { decodeFrames, encodeFrames } from './frames.ts';
import { gatherBytes } from './gather.ts';
import type { CollPt2pt, VBuffer } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';

/**
 * Gathers equal blocks to every rank (MPI_Allgather): block i of `recv` is rank i's.
 * @param send this rank's block (blockBytes); null means IN_PLACE (it is already block `rank` of `recv`)
 * @param recv size * blockBytes
 */
export async function allgather(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, blockBytes: number, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  const bb = blockBytes;
  const algorithm = choose('allgather', plainInput(size, size * bb), opts);
  if (send !== null) recv.set(send.subarray(0, bb), rank * bb);
  if (size === 1 || bb === 0) return;
  if (algorithm === 'recursive-doubling') {
    for (let mask = 1; mask < size; mask <<= 1) {
      const peer = rank ^ mask;
      const mine = (rank & ~(mask - 1)) * bb;
      const theirs = (peer & ~(mask - 1)) * bb;
      await sendrecvInto(pt, tag, peer, recv.subarray(mine, mine + mask * bb), peer, recv.subarray(theirs, theirs + mask * bb), 'Allgather');
    }
    return;
  }
  const counts = new Array<number>(size).fill(bb);
  const displs = counts.map((_, i) => i * bb);
  await ring(pt, tag, { buf: recv, counts, displs }, 'Allgather');
}

/**
 * Gathers blocks of varying size to every rank (MPI_Allgatherv), counts and displacements in bytes.
 * @param send this rank's block; null means IN_PLACE (it is already at recv.displs[rank])
 */
export async function allgatherv(pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: VBuffer, opts?: CollOptions): Promise<void> {
  const { rank, size } = pt;
  choose('allgatherv', plainInput(size, 0), opts);
  if (send !== null) copyIn(recv.buf, recv.displs[rank]!, recv.counts[rank]!, send, 'Allgatherv');
  if (size === 1) return;
  await ring(pt, tag, recv, 'Allgatherv');
}

/** Ring allgather of the blocks of `v` (block `rank` already in place). */
async function ring(pt: CollPt2pt, tag: number, v: VBuffer, call: string): Promise<void> {
  const { rank, size } = pt;
  const { buf, counts, displs } = v;
  const right = (rank + 1) % size;
  const left = (rank - 1 + size) % size;
  for (let s = 0; s < size - 1; s++) {
    const out = (rank - s + size) % size;
    const into = (rank - s - 1 + size) % size;
    const target = buf.subarray(displs[into]!, displs[into]! + counts[into]!);
    await sendrecvInto(pt, tag, right, buf.subarray(displs[out]!, displs[out]! + counts[out]!), left, target, call);
  }
}

/**
 * Gathers variable-size bytes to every rank (object allgather): gather to
 * rank 0, then one framed bundle broadcast.
 * @returns every rank's bytes, by rank
 */
export async function allgatherBytes(pt: CollPt2pt, tag: number, data: Uint8Array, opts?: CollOptions): Promise<Uint8Array[]> {
  choose('allgatherBytes', plainInput(pt.size, 0), opts);
  if (pt.size === 1) return [data];
  const all = await gatherBytes(pt, tag, data, 0, opts);
  const bundle = await bcastBytes(pt, tag, all === undefined ? null : encodeFrames(all), 0, opts);
  return decodeFrames(bundle);
}
