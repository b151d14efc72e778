/**
 * Broadcast: binomial tree, and scatter + ring allgather for long messages.
 *
 * Sources: MPICH src/mpi/coll/bcast/bcast_intra_binomial.c and
 * bcast_intra_scatter_ring_allgather.c; van de Geijn et al., "Optimization
 * of collective communication operations in MPICH" (IJHPCA 2005), section 4.1.
 *
 * Binomial (see tree.ts): a non-root receives the whole message from its
 * parent, then sends it to all its children (concurrently). log2 p rounds.
 *
 * Scatter + allgather, over relative ranks, n bytes cut into p blocks of
 * c = ceil(n / p) bytes (the last ones may be short or empty):
 *   1. binomial scatter: the parent sends each child the blocks of the child's
 *      subtree [child, child + subtreeSize) as one slice;
 *   2. ring allgather: in step s = 0 .. p-2, rel sends block (rel - s) to
 *      rel + 1 and receives block (rel - s - 1) from rel - 1.
 * Every message is sent, empty or not, so both sides count the same messages.
 * Tag invariant: each rank finishes phase 1 before it starts phase 2, and
 * each phase sends at most one message per ordered pair per step.
 */
import { copyIn } from './exchange.ts';
import type { CollPt2pt } from './pt2pt.ts';
import { choose, plainInput, type CollOptions } from './select.ts';
import { absoluteRank, relativeRank, subtreeSize, treeChildren } from './tree.ts';

/**
 * Broadcasts `buf` from `root` in place: at the root it is read, elsewhere it
 * is overwritten. Every rank passes a buffer of the same length.
 * @param tag this call's tag
 * @throws MPIError(ERR_TRUNCATE) when the root's message is longer than `buf`
 */
export async function bcast(pt: CollPt2pt, tag: number, buf: Uint8Array, root: number, opts?: CollOptions): Promise<void> {
  const { size } = pt;
  const algorithm = choose('bcast', plainInput(size, buf.length), opts);
  if (size === 1 || buf.length === 0) return;
  if (algorithm === 'scatter-allgather') {
    await scatterRingAllgather(pt, tag, buf, root);
    return;
  }
  const got = await binomialBcast(pt, tag, pt.rank === root ? buf : null, root);
  if (got !== buf) copyIn(buf, 0, buf.length, got, 'Bcast');
}

/**
 * Broadcasts bytes whose length only the root knows (object bcast).
 * @param data the bytes at the root; ignored (pass null) elsewhere
 * @returns the root's bytes (at the root, `data` itself)
 */
export async function bcastBytes(pt: CollPt2pt, tag: number, data: Uint8Array | null, root: number, opts?: CollOptions): Promise<Uint8Array> {
  choose('bcastBytes', plainInput(pt.size, 0), opts);
  return binomialBcast(pt, tag, pt.rank === root ? data : null, root);
}

/** Binomial tree: receive from the parent (non-roots), then forward to every child. */
async function binomialBcast(pt: CollPt2pt, tag: number, data: Uint8Array | null, root: number): Promise<Uint8Array> {
  const { rank, size } = pt;
  const rel = relativeRank(rank, root, size);
  let payload: Uint8Array;
  if (rel === 0) {
    payload = data!;
  } else {
    payload = await pt.recv(absoluteRank(rel - (rel & -rel), root, size), tag);
  }
  const children = treeChildren(rel, size);
  await Promise.all(children.map(([child]) => pt.send(absoluteRank(child, root, size), tag, payload)));
  return payload;
}

/** Scatter (binomial) then ring allgather, in place on `buf` (van de Geijn). */
async function scatterRingAllgather(pt: CollPt2pt, tag: number, buf: Uint8Array, root: number): Promise<void> {
  const { rank, size } = pt;
  const n = buf.length;
  const chunk = Math.ceil(n / size);
  const start = (block: number): number => Math.min(block * chunk, n);
  const rel = relativeRank(rank, root, size);

  // Phase 1: binomial scatter of block ranges.
  if (rel !== 0) {
    const got = await pt.recv(absoluteRank(rel - (rel & -rel), root, size), tag);
    const lo = start(rel);
    copyIn(buf, lo, start(rel + subtreeSize(rel, size)) - lo, got, 'Bcast');
  }
  await Promise.all(
    treeChildren(rel, size).map(([child]) =>
      pt.send(absoluteRank(child, root, size), tag, buf.subarray(start(child), start(child + subtreeSize(child, size)))),
    ),
  );

  // Phase 2: ring allgather of the blocks.
  const right = absoluteRank(rel + 1, root, size);
  const left = absoluteRank(rel - 1 + size, root, size);
  for (let s = 0; s < size - 1; s++) {
    const sendBlock = (rel - s + size) % size;
    const recvBlock = (rel - s - 1 + size) % size;
    const [, got] = await Promise.all([
      pt.send(right, tag, buf.subarray(start(sendBlock), start(sendBlock + 1))),
      pt.recv(left, tag),
    ]);
    copyIn(buf, start(recvBlock), start(recvBlock + 1) - start(recvBlock), got, 'Bcast');
  }
}
