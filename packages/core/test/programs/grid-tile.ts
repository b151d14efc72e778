/**
 * The block decomposition of a 3-D array over a grid of ranks (as MPI_Dims_create's grid and
 * ROMIO's coll_perf/darray tests use it), for the subarray views of file-io.ts and
 * file-split-sieve.ts: which tile a rank holds, and the tile's elements in C order.
 */

/** A rank's tile: its extent and first index along each dimension. */
export interface Tile {
  readonly sizes: number[];
  readonly starts: number[];
}

/** The coordinates of rank `r` in a grid of `dims` (row-major, as MPI_Cart_coords). */
export function coordsOf(dims: readonly number[], r: number): number[] {
  return [Math.floor(r / (dims[1]! * dims[2]!)), Math.floor(r / dims[2]!) % dims[1]!, r % dims[2]!];
}

/** The tile at `coords` of array `G` split into `dims` blocks (the first G % dims blocks one longer). */
export function tileOf(G: readonly number[], dims: readonly number[], coords: readonly number[]): Tile {
  const sizes: number[] = [];
  const starts: number[] = [];
  for (let d = 0; d < 3; d++) {
    const base = Math.floor(G[d]! / dims[d]!);
    const extra = G[d]! % dims[d]!;
    sizes.push(base + (coords[d]! < extra ? 1 : 0));
    starts.push(coords[d]! * base + Math.min(coords[d]!, extra));
  }
  return { sizes, starts };
}

/** The tile's elements in C order, element (i, j, k) of the whole array being `value(i, j, k)`. */
export function tileData<A extends Float64Array | Int32Array>(t: Tile, make: (length: number) => A, value: (i: number, j: number, k: number) => number): A {
  const a = make(t.sizes[0]! * t.sizes[1]! * t.sizes[2]!);
  let n = 0;
  for (let i = 0; i < t.sizes[0]!; i++) for (let j = 0; j < t.sizes[1]!; j++) for (let k = 0; k < t.sizes[2]!; k++) a[n++] = value(t.starts[0]! + i, t.starts[1]! + j, t.starts[2]! + k);
  return a;
}
