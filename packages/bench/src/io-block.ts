/**
 * The array of the collective I/O benchmark (io.ts, reference/io.c): a 3-D array of FLOAT64 in C
 * order, X x 256 x 256 elements (X = the total bytes / 512 KiB), split over 4 ranks into 2 x 2 x 1
 * blocks: the first dimension in halves, the second in halves, the third (the rows, 2 KiB each)
 * whole. Rank r holds the block at grid coordinates (r >> 1, r & 1, 0), as MPI_Cart_coords orders a
 * 2 x 2 x 1 grid. In the file, each plane i of the array is 512 KiB, of which a rank's block owns
 * one contiguous half (128 rows): the ranks' pieces are 256 KiB and interleave, so that every
 * rank's view is non-contiguous and the collective call has to merge them (two-phase I/O).
 */

/** Elements of the second and third dimensions. */
export const IO_PLANE_ROWS = 256;
export const IO_ROW_ELEMENTS = 256;
/** The process grid: 2 x 2 x 1. */
export const IO_GRID = [2, 2, 1] as const;
/** The processes the decomposition is for. */
export const IO_PROCESSES = IO_GRID[0] * IO_GRID[1] * IO_GRID[2];
/** The total size must be a multiple of this: two planes, so that the first dimension halves. */
export const IO_SIZE_QUANTUM = IO_GRID[0] * IO_PLANE_ROWS * IO_ROW_ELEMENTS * 8;

/** The arguments of Datatype.subarray (MPI_Type_create_subarray) for one rank's block, in elements. */
export interface IoBlock {
  readonly sizes: [number, number, number];
  readonly subsizes: [number, number, number];
  readonly starts: [number, number, number];
}

/**
 * The array's shape for `totalBytes`, or a one-line reason it cannot be split.
 *
 * @param totalBytes - the array's size in bytes (--size)
 * @returns the global sizes in elements, or an error message
 * @example
 * ioArray(268_435_456); // { sizes: [512, 256, 256] }
 */
export function ioArray(totalBytes: number): { sizes: [number, number, number] } | { error: string } {
  if (!Number.isSafeInteger(totalBytes) || totalBytes <= 0 || totalBytes % IO_SIZE_QUANTUM !== 0) {
    return { error: `--size must be a positive multiple of ${IO_SIZE_QUANTUM} bytes (two ${IO_PLANE_ROWS} x ${IO_ROW_ELEMENTS} planes of FLOAT64), got ${totalBytes}` };
  }
  return { sizes: [totalBytes / (IO_PLANE_ROWS * IO_ROW_ELEMENTS * 8), IO_PLANE_ROWS, IO_ROW_ELEMENTS] };
}

/**
 * Rank `rank`'s block of an array of `sizes` elements on the 2 x 2 x 1 grid.
 *
 * @param sizes - the global sizes (from {@link ioArray})
 * @param rank - 0 to 3
 * @returns the subarray's sizes, subsizes and starts
 * @example
 * ioBlock([512, 256, 256], 3); // { sizes: [512, 256, 256], subsizes: [256, 128, 256], starts: [256, 128, 0] }
 */
export function ioBlock(sizes: readonly [number, number, number], rank: number): IoBlock {
  const coords = [rank >> 1, rank & 1, 0];
  const subsizes = sizes.map((n, d) => n / IO_GRID[d]!) as [number, number, number];
  const starts = subsizes.map((n, d) => n * coords[d]!) as [number, number, number];
  return { sizes: [...sizes], subsizes, starts };
}

/**
 * The block's elements in C order, each the element's index in the whole array (so that a piece
 * written to or read from the wrong place shows in the byte-for-byte check).
 *
 * @param b - the block
 * @returns subsizes[0] * subsizes[1] * subsizes[2] values
 * @example
 * ioBlockData(ioBlock([2, 256, 256], 1))[0]; // 128 * 256: element (0, 128, 0)
 */
export function ioBlockData(b: IoBlock): Float64Array {
  const [, Y, Z] = b.sizes;
  const [nx, ny, nz] = b.subsizes;
  const out = new Float64Array(nx * ny * nz);
  let n = 0;
  for (let i = 0; i < nx; i++) {
    for (let j = 0; j < ny; j++) {
      const row = ((b.starts[0] + i) * Y + b.starts[1] + j) * Z + b.starts[2];
      for (let k = 0; k < nz; k++) out[n++] = row + k;
    }
  }
  return out;
}
