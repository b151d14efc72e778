/**
 * Collapsed points of a sweep's reference line. Open MPI with N pthreads per
 * process sometimes collapses on a 2-core machine (its threads spin for the
 * cores: 0.006 M/s at N = 2 against 0.186 at N = 1, docs/notebook/performance-2026-11.md
 * section 4.13), and a ratio against such a point says nothing about tsmpi.
 * Each point keeps the median and the best of its repeats and is flagged
 * collapsed when
 *   - its median rests on a collapsed repeat: a run the median is taken from
 *     (the middle one, or the lower of the two middle ones of an even count)
 *     is more than BEST_OVER_MEDIAN times below the best run (with an odd
 *     count: best / median above 5; with 2 repeats, one collapsed run is
 *     enough, since their mean is the median), or
 *   - its median is below FRACTION_OF_ONE_THREAD of N = 1's best run (every
 *     repeat collapsed; N = 1 itself is judged by the first rule only).
 * Seen on this machine (load 25-53): N = 1 runs of 0.003 and 0.048 M/s, then
 * N = 2 runs of 0.004 and 0.005; neither point trips best / median > 5, both
 * trip these rules.
 * msgrate-sweep.ts prints the flag, writes it to its JSON and names it in the
 * chart's legend, and gives no target ratio against a collapsed point.
 */
import { median } from './stats.ts';

/** A run more than this many times below the point's best run has collapsed. */
export const BEST_OVER_MEDIAN = 5;
/** A median below this fraction of N = 1's best run: the point collapsed in every repeat. */
export const FRACTION_OF_ONE_THREAD = 0.1;

/** One thread count of the reference: its repeats' rates and what they say. */
export interface ReferencePoint {
  readonly threads: number;
  /** Rates of the runs that produced one (M messages/s), in run order. */
  readonly rates: readonly number[];
  readonly median: number;
  readonly best: number;
  /** Why the point counts as collapsed, or null when it does not. */
  readonly collapsed: string | null;
}

/**
 * The reference's points, by thread count ascending, each flagged as above.
 *
 * @param ratesByThreads - thread count -> the rates of its repeats (runs that failed left out); empty lists are skipped
 */
export function referencePoints(ratesByThreads: ReadonlyMap<number, readonly number[]>): ReferencePoint[] {
  const one = ratesByThreads.get(1);
  const oneBest = one === undefined || one.length === 0 ? null : Math.max(...one);
  return [...ratesByThreads.entries()]
    .filter(([, rates]) => rates.length > 0)
    .sort(([a], [b]) => a - b)
    .map(([threads, rates]) => {
      const med = median(rates);
      const best = Math.max(...rates);
      const sorted = [...rates].sort((a, b) => a - b);
      const lowerMiddle = sorted[Math.floor((sorted.length - 1) / 2)]!;
      let collapsed: string | null = null;
      if (best > BEST_OVER_MEDIAN * lowerMiddle) {
        // A run printed as 0.000 M/s (below 0.0005) has no finite ratio.
        const times = lowerMiddle === 0 ? 'far' : `${(best / lowerMiddle).toFixed(0)}x`;
        collapsed = `the median ${med.toFixed(3)} rests on a run of ${lowerMiddle.toFixed(3)}, ${times} below the best ${best.toFixed(3)}`;
      } else if (threads !== 1 && oneBest !== null && med < FRACTION_OF_ONE_THREAD * oneBest) {
        collapsed = `median ${med.toFixed(3)} is below a tenth of N=1's best ${oneBest.toFixed(3)}`;
      }
      return { threads, rates, median: med, best, collapsed };
    });
}

/** The reference's legend text: `name`, and the thread counts whose points collapsed, if any. */
export function referenceLegend(name: string, points: readonly ReferencePoint[]): string {
  const at = points.filter((p) => p.collapsed !== null).map((p) => p.threads);
  return at.length === 0 ? name : `${name} [COLLAPSED at N=${at.join(',')}: quote no ratio]`;
}

/** One printed line per point: median, best, repeats and the flag. */
export function formatReferencePoint(name: string, p: ReferencePoint): string {
  const flag = p.collapsed === null ? '' : `  COLLAPSED (${p.collapsed}): quote no ratio against it`;
  return `${name}, N=${p.threads}: median ${p.median.toFixed(3)}, best ${p.best.toFixed(3)} of ${p.rates.length} M/s${flag}`;
}
