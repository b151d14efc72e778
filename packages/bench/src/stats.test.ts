// The statistics every latency and collective benchmark reports (stats.ts): the mean per call from
// the loop's wall-clock time, and the median, p99 and minimum of the per-call samples.
import { describe, expect, it } from 'vitest';
import { blockSummary, mean, median, quantile, summarizeCalls } from './stats.ts';

describe('mean', () => {
  it('averages plain arrays and typed arrays', () => {
    expect(mean([1, 2, 6])).toBe(3);
    expect(mean(Float64Array.of(0.5, 1.5))).toBe(1);
  });

  it('is NaN for no sample', () => {
    expect(mean([])).toBeNaN();
  });
});

describe('summarizeCalls', () => {
  it('takes the mean from the loop time and the order statistics from the samples', () => {
    const samples = Float64Array.of(10e-6, 12e-6, 50e-6);
    const s = summarizeCalls(samples, 75e-6);
    expect(s.meanMicros).toBeCloseTo(25, 9);
    expect(s.medianMicros).toBeCloseTo(12, 9);
    expect(s.minMicros).toBeCloseTo(10, 9);
    // numpy's linear interpolation: position 0.99 * 2 = 1.98 between 12 and 50
    expect(s.p99Micros).toBeCloseTo(12 + 38 * 0.98, 9);
  });

  it('sums the samples when no loop time is given', () => {
    expect(summarizeCalls([1e-6, 2e-6, 6e-6]).meanMicros).toBeCloseTo(3, 9);
  });

  it('lets one slow call move the mean but not the median: the tail a loop pays', () => {
    const samples = new Float64Array(100).fill(10e-6);
    samples[37] = 1010e-6;
    const s = summarizeCalls(samples);
    expect(s.medianMicros).toBeCloseTo(10, 9);
    expect(s.meanMicros).toBeCloseTo(20, 9);
    expect(s.p99Micros).toBeGreaterThan(10);
  });

  it('leaves the samples in their order', () => {
    const samples = Float64Array.of(3, 1, 2);
    summarizeCalls(samples);
    expect([...samples]).toEqual([3, 1, 2]);
    expect(median(samples)).toBe(2);
    expect(quantile(samples, 1)).toBe(3);
  });

  it('is NaN throughout for an empty loop', () => {
    const s = summarizeCalls([], 1);
    expect([s.meanMicros, s.medianMicros, s.p99Micros, s.minMicros].every(Number.isNaN)).toBe(true);
  });
});

describe('blockSummary', () => {
  it('summarizes only the calls of its block', () => {
    const samples = Float64Array.of(1e-6, 3e-6, 100e-6, 2e-6);
    const first = blockSummary(samples, 0, 2);
    expect(first.meanMicros).toBeCloseTo(2, 9);
    expect(first.medianMicros).toBeCloseTo(2, 9);
    expect(first.maxMicros).toBeCloseTo(3, 9);
    const rest = blockSummary(samples, 2, 99);
    expect(rest.meanMicros).toBeCloseTo(51, 9);
    expect(rest.maxMicros).toBeCloseTo(100, 9);
  });

  it('is NaN for an empty block', () => {
    expect(blockSummary([1e-6], 1, 5).meanMicros).toBeNaN();
  });
});
