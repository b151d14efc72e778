/**
 * Scatter: binomial tree for equal blocks and for variable-size bytes (object
 * scatter); linear for scatterv.
 *
 * Source: MPICH src/mpi/coll/scatter/scatter_intra_binomial.c and
 * scatterv/scatterv_allcomm_linear.c.
 *
 * Binomial, over relative ranks (tree.ts), the mirror of gather.ts: the root
 * rotates its blocks into relative order (block i of the rotation is for
 * relative rank i); node rel receives its subtree's blocks
 * [rel, rel + subtreeSize) from its parent as one message, sends child
 * rel + m the slice at position m, and keeps block 0. Object scatter moves a
 * subtree as one frames.ts bundle (a leaf's as raw bytes).
 *
 * Linear scatterv: the root posts one send per rank at once.
 * Tag invariant: one message per ordered pair.
 */
import { copyIn } from './exchange.ts';
import { decodeFrames, encodeFrames } from './frames.ts';
import type { CollPt2pt, VBuffer } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';
import { absoluteRank, relativeRank, subtreeSize, treeChildren } from './tree.ts';

/**
 * Scatters equal blocks from the root (MPI_Scatter): rank i gets block i of `send`.
 * @param send size * blockBytes at the root; ignored elsewhere (may be null)
 * @param recv this rank's block (blockBytes); null at the root means IN_PLACE (its block stays in `send`)
 * @param blockBytes bytes per rank (the same on every rank)
 */
export async function scatter(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array | null, blockBytes: number, root: number, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  choose('scatter', plainInput(size, blockBytes), opts);
  const bb = blockBytes;
  if (rank === root && recv !== null) recv.set(send!.subarray(root * bb, root * bb + bb));
  if (size === 1 || bb === 0) return;
  const rel = relativeRank(rank, root, size);
  let held: Uint8Array;
  if (rel === 0) {
    const all = send!;
    if (root === 0) {
      held = all;
    } else {
      held = new Uint8Array(size * bb);
      held.set(all.subarray(root * bb, size * bb), 0);
      held.set(all.subarray(0, root * bb), (size - root) * bb);
    }
  } else {
    held = await pt.recv(absoluteRank(rel - (rel & -rel), root, size), tag);
  }
  const sends = treeChildren(rel, size).map(([child, mask]) =>
    pt.send(absoluteRank(child, root, size), tag, held.subarray(mask * bb, (mask + subtreeSize(child, size)) * bb)),
  );
  if (rel !== 0) copyIn(recv!, 0, recv!.length, held.subarray(0, bb), 'Scatter');
  await Promise.all(sends);
}

/**
 * Scatters blocks of varying size from the root (MPI_Scatterv), counts and displacements in bytes.
 * @param send at the root, the buffer with every rank's count and displacement; ignored elsewhere (may be null)
 * @param recv this rank's block; null at the root means IN_PLACE
 * @throws MPIError(ERR_TRUNCATE) when the block sent is longer than `recv`
 */
export async function scatterv(
  pt: CollPt2pt, tag: number, send: VBuffer | null, recv: Uint8Array | null, root: number, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  choose('scatterv', plainInput(size, 0), opts);
  if (rank !== root) {
    copyIn(recv!, 0, recv!.length, await pt.recv(root, tag), 'Scatterv');
    return;
  }
  const { buf, counts, displs } = send!;
  const block = (i: number): Uint8Array => buf.subarray(displs[i]!, displs[i]! + counts[i]!);
  if (recv !== null) copyIn(recv, 0, recv.length, block(root), 'Scatterv');
  const sends: Promise<void>[] = [];
  for (let i = 0; i < size; i++) if (i !== root) sends.push(pt.send(i, tag, block(i)));
  await Promise.all(sends);
}

/**
 * Scatters variable-size bytes from the root (object scatter).
 * @param datas at the root, one entry per rank; ignored elsewhere (may be undefined)
 * @returns this rank's bytes (at the root, `datas[root]` itself)
 */
export async function scatterBytes(
  pt: CollPt2pt, tag: number, datas: readonly Uint8Array[] | undefined, root: number, opts?: CollOptions,
): Promise<Uint8Array> {
  const { rank, size } = pt;
  choose('scatterBytes', plainInput(size, 0), opts);
  const rel = relativeRank(rank, root, size);
  const sub = subtreeSize(rel, size);
  let held: Uint8Array[];
  if (rel === 0) {
    held = new Array<Uint8Array>(size);
    for (let i = 0; i < size; i++) held[i] = datas![absoluteRank(i, root, size)]!;
  } else {
    const got = await pt.recv(absoluteRank(rel - (rel & -rel), root, size), tag);
    held = sub === 1 ? [got] : decodeFrames(got);
  }
  await Promise.all(
    treeChildren(rel, size).map(([child, mask]) => {
      const childSub = subtreeSize(child, size);
      const payload = childSub === 1 ? held[mask]! : encodeFrames(held.slice(mask, mask + childSub));
      return pt.send(absoluteRank(child, root, size), tag, payload);
    }),
  );
  return held[0]!;
}
