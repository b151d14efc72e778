/**
 * Rank arithmetic shared by the algorithms: binomial trees over relative
 * ranks, and powers of two.
 *
 * Binomial tree (MPICH, e.g. src/mpi/coll/bcast/bcast_intra_binomial.c), over
 * relative ranks rel = (rank - root) mod p:
 *
 *     rel 0 ─┬─ 4 ─── 5          the parent of rel is rel with its lowest set
 *            ├─ 2 ─── 3          bit cleared; rel's children are rel + m for
 *            └─ 1                m = lowbit(rel)/2, ..., 2, 1 (while < p);
 *                                 rel's subtree is [rel, rel + subtreeSize)
 *
 * so a subtree is a contiguous range of relative ranks, which the gather and
 * scatter algorithms exploit to move one contiguous slice per edge.
 */

/** (rank - root) mod size. */
export function relativeRank(rank: number, root: number, size: number): number {
  return (rank - root + size) % size;
}

/** (rel + root) mod size. */
export function absoluteRank(rel: number, root: number, size: number): number {
  return (rel + root) % size;
}

/** Smallest power of two >= n (n >= 1). */
export function ceilPowerOfTwo(n: number): number {
  let m = 1;
  while (m < n) m *= 2;
  return m;
}

/** Largest power of two <= n (n >= 1). */
export function floorPowerOfTwo(n: number): number {
  let m = 1;
  while (m * 2 <= n) m *= 2;
  return m;
}

/** True when n is 1, 2, 4, ... */
export function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/**
 * The mask of rel's edge to its parent: lowbit(rel) for rel > 0; for the root
 * (rel 0), the smallest power of two >= size. rel's children are rel + m for
 * the powers of two m < treeMask(rel) with rel + m < size.
 */
export function treeMask(rel: number, size: number): number {
  return rel === 0 ? ceilPowerOfTwo(size) : rel & -rel;
}

/** Number of relative ranks in rel's subtree: [rel, rel + subtreeSize). */
export function subtreeSize(rel: number, size: number): number {
  return Math.min(treeMask(rel, size), size - rel);
}

/** Children of rel as [childRel, mask] pairs, largest subtree first. */
export function treeChildren(rel: number, size: number): Array<[childRel: number, mask: number]> {
  const out: Array<[number, number]> = [];
  for (let mask = treeMask(rel, size) >> 1; mask > 0; mask >>= 1) {
    if (rel + mask < size) out.push([rel + mask, mask]);
  }
  return out;
}
