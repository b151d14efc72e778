/**
 * Reduce to a root by a binomial tree.
 *
 * Source: MPICH src/mpi/coll/reduce/reduce_intra_binomial.c.
 *
 * Node rel receives the partial results of its children rel + m (m = 1, 2,
 * 4, ... < lowbit(rel)), merges them into its own value in increasing m, then
 * sends the result to its parent rel - lowbit(rel). All child receives are
 * posted at once; merging waits for them in order.
 *
 * Rank order (non-commutative ops): the tree is rooted at rank 0, with
 * rel = rank. Before merging child rel + m, node rel holds the reduction of
 * ranks [rel, rel + m), and the child brings [rel + m, rel + 2m): so
 * acc = acc op child keeps rank order. If the root is not 0, rank 0 then sends
 * the result to the root (one extra message). Commutative ops use the tree
 * rooted at the root itself.
 *
 * Tag invariant: one message per tree edge (child -> parent), plus 0 -> root
 * at the end; rank 0 sends that one only after its tree phase, and the root
 * posts its receive for it only after its own tree phase.
 */
import { byteFold, objectFold, type Fold } from './fold.ts';
import type { ByteOp, Codec, CollPt2pt, ObjectOp } from './pt2pt.ts';
import { choose, type CollOptions } from './select.ts';
import { absoluteRank, relativeRank, treeChildren } from './tree.ts';

/**
 * The binomial reduce skeleton over any Fold. `mine` must be owned (merge may
 * write into it). Resolves the result at the root, undefined elsewhere.
 */
export async function binomialReduce<V>(pt: CollPt2pt, tag: number, fold: Fold<V>, mine: V, root: number): Promise<V | undefined> {
  const { rank, size } = pt;
  if (size === 1) return mine;
  const treeRoot = fold.commute ? root : 0;
  const rel = relativeRank(rank, treeRoot, size);
  const children = treeChildren(rel, size).reverse(); // increasing mask: lower ranks first
  const incoming = children.map(([child]) => pt.recv(absoluteRank(child, treeRoot, size), tag));
  let acc = mine;
  for (const p of incoming) acc = fold.merge(acc, fold.decode(await p), false);
  if (rel !== 0) {
    await pt.send(absoluteRank(rel - (rel & -rel), treeRoot, size), tag, fold.encode(acc));
    if (rank !== root) return undefined;
    // A non-commutative reduce whose root is not 0: the result comes from rank 0.
    return fold.decode(await pt.recv(0, tag));
  }
  if (rank === root) return acc;
  await pt.send(root, tag, fold.encode(acc));
  return undefined;
}

/**
 * Reduces every rank's vector into `recv` at `root` (MPI_Reduce on packed bytes).
 * @param send this rank's vector; null at the root means IN_PLACE (its vector is already in `recv`)
 * @param recv the result at the root (same length as `send`); ignored elsewhere (may be null)
 * @param op the combiner, its commutativity and item size
 */
export async function reduce(
  pt: CollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array | null, op: ByteOp, root: number, opts?: CollOptions,
): Promise<void> {
  const { rank, size } = pt;
  const isRoot = rank === root;
  const nbytes = send !== null ? send.length : recv!.length;
  choose('reduce', { size, bytes: nbytes, items: nbytes / op.itemBytes, commute: op.commute }, opts);
  if (isRoot && send !== null) recv!.set(send);
  if (size === 1 || nbytes === 0) return;
  // The root accumulates in recv; others in a copy of their vector (merge writes into it).
  const mine = isRoot ? recv! : send!.slice();
  const result = await binomialReduce(pt, tag, byteFold(op, pt), mine, root);
  if (isRoot && result !== recv) recv!.set(result!);
}

/**
 * Reduces values (object reduce): result = v0 op v1 op ... op v(p-1) at the root.
 * @param codec serializes values for the wire (the caller's msgpack)
 * @returns the result at the root, undefined elsewhere
 */
export async function reduceObjects<T>(
  pt: CollPt2pt, tag: number, value: T, op: ObjectOp<T>, codec: Codec<T>, root: number, opts?: CollOptions,
): Promise<T | undefined> {
  choose('reduceObjects', { size: pt.size, bytes: 0, items: 0, commute: op.commute }, opts);
  return binomialReduce(pt, tag, objectFold(op, codec), value, root);
}
