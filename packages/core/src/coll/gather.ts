/**
 * Gather: binomial tree for equal blocks and for variable-size bytes (object
 * gather); linear for gatherv.
 *
 * Source: MPICH src/mpi/coll/gather/gather_intra_binomial.c and
 * gatherv/gatherv_allcomm_linear.c.
 *
 * Binomial, over relative ranks (tree.ts): node rel collects the blocks of its
 * subtree [rel, rel + subtreeSize) in relative order: its own, then child
 * rel + m's subtree at position m (m increasing). A non-root sends the lot to
 * its parent as one message; the root un-rotates relative block i into
 * absolute block (i + root) mod p. Leaves send their block as is.
 * Object gather moves a subtree as one frames.ts bundle (a leaf's as raw
 * bytes: both sides know the child's subtree size).
 *
 * Linear gatherv: the root posts one receive per rank at once.
 * Tag invariant: one message per ordered pair.
 */
import { copyIn } from './exchange.ts';
import { decodeFrames, encodeFrames } from './frames.ts';
import type { CollPt2pt, VBuffer } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';
import { absoluteRank, relativeRank, subtreeSize, treeChildren } from './tree.ts';

/**
 * Gathers equal blocks to the root (MPI_Gather): block i of `recv` is rank i's.
 * @param send this rank's block (blockBytes); null at the root means IN_PLACE (its block is already in `recv`)
 * @param recv size * blockBytes at the root; ignored elsewhere (may be null)
 * @param blockBytes bytes per rank (the same on every rank)
 */
export async function gather(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array | null, blockBytes: number, root: number, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  choose('gather', plainInput(size, blockBytes), opts);
  const bb = blockBytes;
  const own = send ?? recv!.subarray(root * bb, root * bb + bb);
  if (rank === root && send !== null) recv!.set(send.subarray(0, bb), root * bb);
  if (size === 1 || bb === 0) return;
  const rel = relativeRank(rank, root, size);
  const parent = absoluteRank(rel - (rel & -rel), root, size);
  const sub = subtreeSize(rel, size);
  if (sub === 1) {
    await pt.send(parent, tag, own);
    return;
  }
  const tmp = new Uint8Array(sub * bb);
  tmp.set(own.subarray(0, bb), 0);
  await Promise.all(
    treeChildren(rel, size).map(async ([child, mask]) => {
      const got = await pt.recv(absoluteRank(child, root, size), tag);
      copyIn(tmp, mask * bb, subtreeSize(child, size) * bb, got, 'Gather');
    }),
  );
  if (rel !== 0) {
    await pt.send(parent, tag, tmp);
    return;
  }
  // Root: relative block i is absolute block (i + root) mod size.
  recv!.set(tmp.subarray(0, (size - root) * bb), root * bb);
  recv!.set(tmp.subarray((size - root) * bb), 0);
}

/**
 * Gathers blocks of varying size to the root (MPI_Gatherv), counts and displacements in bytes.
 * @param send this rank's block; null at the root means IN_PLACE
 * @param recv at the root, the buffer with every rank's count and displacement; ignored elsewhere (may be null)
 * @throws MPIError(ERR_TRUNCATE) at the root when a rank sends more than its count
 */
export async function gatherv(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: VBuffer | null, root: number, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  choose('gatherv', plainInput(size, 0), opts);
  if (rank !== root) {
    await pt.send(root, tag, send!);
    return;
  }
  const { buf, counts, displs } = recv!;
  if (send !== null) copyIn(buf, displs[root]!, counts[root]!, send, 'Gatherv');
  const pending: Promise<void>[] = [];
  for (let i = 0; i < size; i++) {
    if (i === root) continue;
    pending.push(pt.recv(i, tag).then((got) => copyIn(buf, displs[i]!, counts[i]!, got, 'Gatherv')));
  }
  await Promise.all(pending);
}

/**
 * Gathers variable-size bytes to the root (object gather).
 * @returns at the root, every rank's bytes by rank (its own is `data` itself); undefined elsewhere
 */
export async function gatherBytes(pt: CollPt2pt, tag: number, data: Uint8Array, root: number, opts?: CollOptions): Promise<Uint8Array[] | undefined> {
  const { rank, size } = pt;
  choose('gatherBytes', plainInput(size, 0), opts);
  const rel = relativeRank(rank, root, size);
  const sub = subtreeSize(rel, size);
  const parent = absoluteRank(rel - (rel & -rel), root, size);
  if (sub === 1 && rel !== 0) {
    await pt.send(parent, tag, data);
    return undefined;
  }
  const held = new Array<Uint8Array>(sub);
  held[0] = data;
  await Promise.all(
    treeChildren(rel, size).map(async ([child, mask]) => {
      const got = await pt.recv(absoluteRank(child, root, size), tag);
      const childSub = subtreeSize(child, size);
      const parts = childSub === 1 ? [got] : decodeFrames(got);
      for (let i = 0; i < childSub; i++) held[mask + i] = parts[i]!;
    }),
  );
  if (rel !== 0) {
    await pt.send(parent, tag, encodeFrames(held));
    return undefined;
  }
  const out = new Array<Uint8Array>(size);
  for (let i = 0; i < size; i++) out[absoluteRank(i, root, size)] = held[i]!;
  return out;
}
