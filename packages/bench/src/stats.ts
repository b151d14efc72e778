/**
 * Statistics of benchmark samples. A timed loop is summarized by its mean per
 * call (what a program running the loop pays, tail included: the headline
 * figure, issue 40) and by order statistics of its per-call times (median and
 * p99, which tell a steady cost from a tail of descheduled or slow calls).
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

/**
 * The arithmetic mean of `values`.
 *
 * @param values - samples
 * @returns the mean, or NaN when `values` is empty
 * @example
 * mean([1, 2, 6]); // 3
 */
export function mean(values: ArrayLike<number>): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  return sum / n;
}

/** What a timed loop of calls cost, in microseconds per call. */
export interface CallSummary {
  /** The loop's wall-clock time divided by its calls: the figure the benchmarks' ratios are taken on. */
  readonly meanMicros: number;
  /** The median of the per-call times. */
  readonly medianMicros: number;
  /** The 99th percentile of the per-call times. */
  readonly p99Micros: number;
  /** The fastest call. */
  readonly minMicros: number;
}

/**
 * Summarizes a timed loop: its mean per call from the loop's own wall-clock
 * time (so that whatever runs between two calls is counted too), and the
 * median, p99 and minimum of the per-call samples.
 *
 * @param samplesSeconds - each call's duration in seconds (one per call)
 * @param loopSeconds - wall-clock time of the whole loop in seconds, or
 *   undefined to take the sum of the samples
 * @returns the figures in microseconds; NaN for all of them when there is no sample
 * @example
 * summarizeCalls(Float64Array.of(10e-6, 12e-6, 50e-6), 75e-6); // mean 25, median 12, p99 ~49.24, min 10
 */
export function summarizeCalls(samplesSeconds: ArrayLike<number>, loopSeconds?: number): CallSummary {
  const n = samplesSeconds.length;
  const total = loopSeconds ?? mean(samplesSeconds) * n;
  return {
    meanMicros: n === 0 ? Number.NaN : (total / n) * 1e6,
    medianMicros: median(samplesSeconds) * 1e6,
    p99Micros: quantile(samplesSeconds, 0.99) * 1e6,
    minMicros: quantile(samplesSeconds, 0) * 1e6,
  };
}

/** Where a block of consecutive calls' time went, in microseconds per call (blockSummary). */
export interface BlockSummary {
  /** The mean of the block's per-call times (the loop's time between calls is not in it). */
  readonly meanMicros: number;
  readonly medianMicros: number;
  readonly p99Micros: number;
  /** The slowest call. */
  readonly maxMicros: number;
}

/**
 * The figures of calls `from` (included) to `to` (excluded) of a timed loop: tells a tail that
 * follows warm-up (the first calls, still compiling) from one that stays (issue 40).
 *
 * @param samplesSeconds - each call's duration in seconds; not modified
 * @param from - the first call of the block (0-based)
 * @param to - one past its last call (clamped to the samples)
 * @returns the figures in microseconds; NaN for all of them when the block is empty
 * @example
 * blockSummary(Float64Array.of(1e-6, 3e-6, 100e-6, 2e-6), 0, 2); // mean 2, median 2, p99 ~2.98, max 3
 */
export function blockSummary(samplesSeconds: ArrayLike<number>, from: number, to: number): BlockSummary {
  const block = Array.prototype.slice.call(samplesSeconds, Math.max(0, from), Math.min(to, samplesSeconds.length)) as number[];
  return {
    meanMicros: mean(block) * 1e6,
    medianMicros: median(block) * 1e6,
    p99Micros: quantile(block, 0.99) * 1e6,
    maxMicros: quantile(block, 1) * 1e6,
  };
}
