/**
 * Order statistics for benchmark samples. Medians, not means: on a shared
 * machine a few descheduled iterations would otherwise dominate the figure.
 */

/**
 * The median of `values` (the mean of the two middle values when the count is even).
 *
 * @param values - samples, in any order; not modified
 * @returns the median, or NaN when `values` is empty
 * @example
 * median([3, 1, 2]); // 2
 */
export function median(values: ArrayLike<number>): number {
  return quantile(values, 0.5);
}

/**
 * The q-quantile of `values` with linear interpolation between closest ranks
 * (the same definition as numpy's default), e.g. q = 0.99 for the 99th percentile.
 *
 * @param values - samples, in any order; not modified
 * @param q - between 0 and 1
 * @returns the quantile, or NaN when `values` is empty
 * @example
 * quantile([1, 2, 3, 4], 0.5); // 2.5
 */
export function quantile(values: ArrayLike<number>, q: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const pos = (n - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo];
  const b = sorted[hi];
  return a + (b - a) * (pos - lo);
}
