/**
 * Alltoall: Bruck (small blocks, many ranks) or pairwise exchange;
 * alltoallv and object alltoall by pairwise exchange.
 *
 * Sources: J. Bruck et al., "Efficient algorithms for all-to-all
 * communications in multiport message-passing systems" (IEEE TPDS 1997);
 * MPICH src/mpi/coll/alltoall/alltoall_intra_brucks.c and
 * alltoall_intra_pairwise.c; Thakur, Rabenseifner, Gropp (IJHPCA 2005) 4.3.
 *
 * Bruck, with block j of rank s meant for rank (s + j) mod p after a local
 * rotation (tmp[j] = send[(s + j) mod p]):
 *   for k = 1, 2, 4, ... < p: send every tmp[j] with bit k set in j, packed,
 *   to rank + k; receive the same positions from rank - k.
 * Invariant: a block at position j has travelled the bits of j already
 * processed, and it never changes position; after the last step tmp[j] holds
 * the block from rank (r - j) mod p, which the inverse rotation puts at
 * recv[(r - j) mod p]. log2 p rounds.
 *
 * Pairwise: in step i = 1 .. p-1, exchange with partner r ^ i when p is a
 * power of two, else send to r + i and receive from r - i. Each block moves
 * once.
 * Tag invariant: one message per ordered pair per step, steps sequential
 * (Bruck's distances k are distinct, so also one per pair per call).
 */
import { ERR_TRUNCATE, mpiError } from '../util/index.ts';
import { copyIn, sendrecv } from './exchange.ts';
import type { CollPt2pt, VBuffer } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';
import { isPowerOfTwo } from './tree.ts';

/**
 * Every rank sends block j of `send` to rank j and receives rank j's block into block j of `recv` (MPI_Alltoall).
 * @param send size * blockBytes; null means IN_PLACE (the data to send is in `recv`, which is then overwritten)
 * @param recv size * blockBytes
 */
export async function alltoall(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, blockBytes: number, opts?: CollOptions,
): Promise<void> {
  const { size } = pt;
  const bb = blockBytes;
  const algorithm = choose('alltoall', plainInput(size, bb), opts);
  if (bb === 0) return;
  if (size === 1) {
    if (send !== null) recv.set(send.subarray(0, bb));
    return;
  }
  if (algorithm === 'bruck') {
    await bruck(pt, tag, send ?? recv, recv, bb);
    return;
  }
  const src = send ?? recv.slice();
  const counts = new Array<number>(size).fill(bb);
  const displs = counts.map((_, i) => i * bb);
  await pairwise(pt, tag, { buf: src, counts, displs }, { buf: recv, counts, displs }, 'Alltoall');
}

/**
 * Alltoall with blocks of varying size (MPI_Alltoallv), counts and displacements in bytes.
 * @param send the blocks to send; null means IN_PLACE (sent from `recv` with recv's counts and displacements)
 * @param recv the blocks to receive
 */
export async function alltoallv(pt: CollPt2pt, tag: number, send: VBuffer | null, recv: VBuffer, opts?: CollOptions): Promise<void> {
  choose('alltoallv', plainInput(pt.size, 0), opts);
  const src = send ?? { buf: recv.buf.slice(), counts: recv.counts, displs: recv.displs };
  await pairwise(pt, tag, src, recv, 'Alltoallv');
}

/** Pairwise exchange of the blocks of `send` into `recv`. */
async function pairwise(pt: CollPt2pt, tag: number, send: VBuffer, recv: VBuffer, call: string): Promise<void> {
  const { rank, size } = pt;
  const block = (v: VBuffer, i: number): Uint8Array => v.buf.subarray(v.displs[i]!, v.displs[i]! + v.counts[i]!);
  copyIn(recv.buf, recv.displs[rank]!, recv.counts[rank]!, block(send, rank), call);
  const xor = isPowerOfTwo(size);
  for (let i = 1; i < size; i++) {
    const dest = xor ? rank ^ i : (rank + i) % size;
    const source = xor ? rank ^ i : (rank - i + size) % size;
    const got = await sendrecv(pt, tag, dest, block(send, dest), source);
    copyIn(recv.buf, recv.displs[source]!, recv.counts[source]!, got, call);
  }
}

/** Bruck's algorithm; `send` may be `recv` (in place): it is read before recv is written. */
async function bruck(pt: CollPt2pt, tag: number, send: Uint8Array, recv: Uint8Array, bb: number): Promise<void> {
  const { rank, size } = pt;
  const tmp = new Uint8Array(size * bb);
  for (let j = 0; j < size; j++) {
    const from = ((rank + j) % size) * bb;
    tmp.set(send.subarray(from, from + bb), j * bb);
  }
  for (let k = 1; k < size; k <<= 1) {
    const positions: number[] = [];
    for (let j = 0; j < size; j++) if ((j & k) !== 0) positions.push(j);
    const packed = new Uint8Array(positions.length * bb);
    positions.forEach((j, n) => packed.set(tmp.subarray(j * bb, j * bb + bb), n * bb));
    const got = await sendrecv(pt, tag, (rank + k) % size, packed, (rank - k + size) % size);
    if (got.length !== packed.length) throw mpiError(ERR_TRUNCATE, 'Alltoall', `received ${got.length} bytes, expected ${packed.length}`);
    positions.forEach((j, n) => tmp.set(got.subarray(n * bb, n * bb + bb), j * bb));
  }
  for (let s = 0; s < size; s++) {
    const j = (rank - s + size) % size;
    recv.set(tmp.subarray(j * bb, j * bb + bb), s * bb);
  }
}

/**
 * Object alltoall: sends datas[j] to rank j and returns what each rank sent to this one.
 * @returns by source rank (the own entry is `datas[rank]` itself)
 */
export async function alltoallBytes(pt: CollPt2pt, tag: number, datas: readonly Uint8Array[], opts?: CollOptions): Promise<Uint8Array[]> {
  const { rank, size } = pt;
  choose('alltoallBytes', plainInput(size, 0), opts);
  const out = new Array<Uint8Array>(size);
  out[rank] = datas[rank]!;
  for (let i = 1; i < size; i++) {
    const dest = (rank + i) % size;
    const source = (rank - i + size) % size;
    out[source] = await sendrecv(pt, tag, dest, datas[dest]!, source);
  }
  return out;
}
