/**
 * Cartesian topology arithmetic (pure): MPI_Dims_create, rank <-> coordinates,
 * shift and sub-grids, checked against MPI 4.0 section 8.5.
 *
 * Source: MPI 4.0 section 8.5.1-8.5.6 (MPI_CART_CREATE, MPI_DIMS_CREATE,
 * MPI_CART_RANK, MPI_CART_COORDS, MPI_CART_SHIFT, MPI_CART_SUB); MPICH
 * src/mpi/topo/dims_create.c for the error classes.
 *
 * Layout: row-major, the last dimension varies fastest (as MPI requires):
 * ```
 *   dims [2, 3]     rank = c0 * 3 + c1
 *     (0,0)=0 (0,1)=1 (0,2)=2
 *     (1,0)=3 (1,1)=4 (1,2)=5
 * ```
 * Invariants: getCoords(getRank(c)) = c for every c in the grid; shift's
 * source and dest are inverse (source's dest is the caller) on periodic
 * dimensions; an off-grid neighbour of a non-periodic dimension is PROC_NULL.
 * Callers (api/) check ranks and directions before calling; computeDims
 * checks its own input (it is a public function with MPI's error classes).
 */
import { ERR_ARG, ERR_DIMS, mpiError, PROC_NULL } from '../util/index.ts';

/**
 * MPI_Dims_create: fills the 0 entries of `dims` so that the product of all entries is nnodes,
 * the filled entries as close to each other as possible and in non-increasing order; non-zero
 * entries are kept.
 * @param dims the number of dimensions (all free), or the entries (0 = free, > 0 = fixed)
 * @throws MPIError(ERR_ARG) when nnodes is not a positive integer or ndims is negative;
 *   MPIError(ERR_DIMS) for a negative or non-integer entry, or when the fixed entries' product
 *   does not divide nnodes (or, with no free entry, differs from it)
 */
export function computeDims(nnodes: number, dims: number[] | number, call = 'computeDims'): number[] {
  if (!Number.isSafeInteger(nnodes) || nnodes < 1) throw mpiError(ERR_ARG, call, `nnodes ${String(nnodes)} is invalid: expected an integer >= 1`);
  let given: number[];
  if (typeof dims === 'number') {
    if (!Number.isSafeInteger(dims) || dims < 0) throw mpiError(ERR_ARG, call, `ndims ${String(dims)} is invalid: expected an integer >= 0`);
    given = new Array<number>(dims).fill(0);
  } else if (Array.isArray(dims)) {
    given = dims.slice();
  } else {
    throw mpiError(ERR_ARG, call, `dims is ${typeof dims}: expected a number of dimensions or an array of integers >= 0`);
  }
  let fixed = 1;
  let free = 0;
  for (let i = 0; i < given.length; i++) {
    const d = given[i];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) throw mpiError(ERR_DIMS, call, `dims[${i}] is ${String(d)}: expected an integer >= 0 (0: to be chosen)`);
    if (d === 0) free++;
    else fixed *= d;
  }
  if (given.length === 0) return given;
  if (free === 0) {
    if (fixed !== nnodes) throw mpiError(ERR_DIMS, call, `the dims given multiply to ${fixed}, not nnodes ${nnodes}, and none is 0 (free)`);
    return given;
  }
  if (nnodes % fixed !== 0) throw mpiError(ERR_DIMS, call, `nnodes ${nnodes} is not a multiple of ${fixed}, the product of the non-zero dims`);
  const chosen = balancedFactors(nnodes / fixed, free, nnodes / fixed)!;
  let k = 0;
  return given.map((d) => (d === 0 ? chosen[k++]! : d));
}

/**
 * `k` factors of m in non-increasing order, each at most `cap`, with the smallest possible
 * largest factor, then (recursively) the smallest possible next one; null if none fits under cap.
 */
function balancedFactors(m: number, k: number, cap: number): number[] | null {
  if (k === 1) return m <= cap ? [m] : null;
  // The largest factor is at least the k-th root of m.
  let d = Math.max(1, Math.floor(Math.pow(m, 1 / k)));
  while (d ** k < m) d++;
  for (; d <= Math.min(cap, m); d++) {
    if (m % d !== 0) continue;
    const rest = balancedFactors(m / d, k - 1, d);
    if (rest !== null) return [d, ...rest];
  }
  return null;
}

/** The number of grid points: the product of dims (1 for no dimension). */
export function gridSize(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** The rank of in-range coordinates (row-major). */
export function cartRank(dims: readonly number[], coords: readonly number[]): number {
  let r = 0;
  for (let i = 0; i < dims.length; i++) r = r * dims[i]! + coords[i]!;
  return r;
}

/** The coordinates of rank 0..gridSize-1. */
export function cartCoords(dims: readonly number[], rank: number): number[] {
  const out = new Array<number>(dims.length);
  for (let i = dims.length - 1; i >= 0; i--) {
    out[i] = rank % dims[i]!;
    rank = Math.floor(rank / dims[i]!);
  }
  return out;
}

/**
 * Coordinates as MPI_Cart_rank takes them: a periodic dimension wraps any integer, a
 * non-periodic one must be in range. Returns the in-range coordinates, or the index of the first
 * bad entry as a negative number minus one (-1 - i).
 */
export function wrapCoords(dims: readonly number[], periods: readonly boolean[], coords: readonly number[]): number[] | number {
  const out = new Array<number>(dims.length);
  for (let i = 0; i < dims.length; i++) {
    const c = coords[i]!;
    const n = dims[i]!;
    if (periods[i]) out[i] = ((c % n) + n) % n;
    else if (c < 0 || c >= n) return -1 - i;
    else out[i] = c;
  }
  return out;
}

/**
 * MPI_Cart_shift: the ranks `disp` steps back (source) and forward (dest) along `direction` from
 * `rank`; PROC_NULL off the edge of a non-periodic dimension.
 */
export function cartShift(dims: readonly number[], periods: readonly boolean[], rank: number, direction: number, disp: number): [number, number] {
  const coords = cartCoords(dims, rank);
  const step = (by: number): number => {
    const c = coords.slice();
    const n = dims[direction]!;
    const moved = c[direction]! + by;
    if (periods[direction]) c[direction] = ((moved % n) + n) % n;
    else if (moved < 0 || moved >= n) return PROC_NULL;
    else c[direction] = moved;
    return cartRank(dims, c);
  };
  return [step(-disp), step(disp)];
}

/**
 * MPI_Cart_sub for one grid point: the sub-grid it belongs to (a label shared by exactly the
 * points that agree on every dropped coordinate), its rank there, and the sub-grid's shape.
 */
export function cartSub(dims: readonly number[], periods: readonly boolean[], rank: number, remain: readonly boolean[]): {
  color: number; key: number; dims: number[]; periods: boolean[];
} {
  const coords = cartCoords(dims, rank);
  const keptDims: number[] = [];
  const keptPeriods: boolean[] = [];
  const keptCoords: number[] = [];
  const droppedDims: number[] = [];
  const droppedCoords: number[] = [];
  for (let i = 0; i < dims.length; i++) {
    if (remain[i]) {
      keptDims.push(dims[i]!);
      keptPeriods.push(periods[i]!);
      keptCoords.push(coords[i]!);
    } else {
      droppedDims.push(dims[i]!);
      droppedCoords.push(coords[i]!);
    }
  }
  return { color: cartRank(droppedDims, droppedCoords), key: cartRank(keptDims, keptCoords), dims: keptDims, periods: keptPeriods };
}

/**
 * The neighbours of `rank` in MPI's order for neighborhood collectives (MPI 4.0 section 8.6):
 * for each dimension, the source then the dest of shift(d, 1) (PROC_NULL off a non-periodic edge).
 * Sources and destinations are the same list.
 */
export function cartNeighbors(dims: readonly number[], periods: readonly boolean[], rank: number): number[] {
  const out: number[] = [];
  for (let d = 0; d < dims.length; d++) out.push(...cartShift(dims, periods, rank, d, 1));
  return out;
}

/**
 * The order in which a Cartesian rank posts its sends so that, with one tag, the k-th message
 * from a to b meets the k-th receive b posts from a even when a is b's neighbour in both
 * directions (a periodic dimension of size 1 or 2): per dimension, the positive direction first
 * (its block goes to b's negative-direction slot, which b receives first), then the negative.
 * This gives the halo semantics Open MPI obtains with a tag per direction
 * (coll/basic's neighbor_alltoall for Cartesian communicators).
 */
export function cartSendOrder(ndims: number): number[] {
  const out: number[] = [];
  for (let d = 0; d < ndims; d++) out.push(2 * d + 1, 2 * d);
  return out;
}
