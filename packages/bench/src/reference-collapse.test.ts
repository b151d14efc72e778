import { describe, expect, it } from 'vitest';
import { formatReferencePoint, referenceLegend, referencePoints } from './reference-collapse.ts';

const points = (entries: [number, number[]][]) => referencePoints(new Map(entries));

describe('referencePoints (a collapsed reference run is flagged)', () => {
  it('keeps the median and the best of each point, by thread count, and flags nothing in a healthy sweep', () => {
    const ps = points([[2, [0.3, 0.33, 0.31]], [1, [0.18, 0.19, 0.186]]]);
    expect(ps.map((p) => [p.threads, p.median, p.best, p.collapsed])).toEqual([[1, 0.186, 0.19, null], [2, 0.31, 0.33, null]]);
  });

  it('flags a point whose median rests on a collapsed repeat (best more than 5x the middle run)', () => {
    const [one, two] = points([[1, [0.18, 0.19, 0.186]], [2, [0.006, 0.33, 0.005]]]);
    expect(one!.collapsed).toBeNull();
    expect(two!.median).toBe(0.006);
    expect(two!.best).toBe(0.33);
    expect(two!.collapsed).toBe('the median 0.006 rests on a run of 0.006, 55x below the best 0.330');
  });

  it('with an even count, flags one collapsed run of the two the median averages (seen: 0.003 and 0.048)', () => {
    const [one] = points([[1, [0.003, 0.048]]]);
    expect(one!.median).toBeCloseTo(0.0255, 10);
    expect(one!.collapsed).toBe('the median 0.025 rests on a run of 0.003, 16x below the best 0.048');
  });

  it('says "far below" for a run that printed as 0.000 M/s (seen under a load average of 35)', () => {
    expect(points([[1, [0, 0.003]]])[0]!.collapsed).toBe('the median 0.002 rests on a run of 0.000, far below the best 0.003');
  });

  it('leaves a point alone when a collapsed repeat does not reach its median', () => {
    expect(points([[1, [0.003, 0.18, 0.19]]])[0]!.collapsed).toBeNull();
  });

  it("flags a point whose median is below a tenth of N=1's best run (every repeat collapsed)", () => {
    const [, two, four] = points([[1, [0.186]], [2, [0.006, 0.007, 0.006]], [4, [0.01, 0.012, 0.01]]]);
    expect(two!.collapsed).toBe("median 0.006 is below a tenth of N=1's best 0.186");
    expect(four!.collapsed).toBe("median 0.010 is below a tenth of N=1's best 0.186");
    // the sweep seen on this machine: N=2 at 0.004 and 0.005 after N=1 at 0.003 and 0.048
    const seen = points([[1, [0.003, 0.048]], [2, [0.004, 0.005]]]);
    expect(seen.map((p) => p.collapsed === null)).toEqual([false, false]);
  });

  it('needs an N=1 point for the tenth rule', () => {
    expect(points([[2, [0.006, 0.007]]])[0]!.collapsed).toBeNull();
  });

  it('draws the line at the thresholds: exactly 5x or exactly a tenth is not a collapse', () => {
    const [, atFive, atTenth, below] = points([[1, [1]], [2, [0.2, 0.2, 1]], [3, [0.1]], [4, [0.099]]]);
    expect(atFive!.collapsed).toBeNull();
    expect(atTenth!.collapsed).toBeNull();
    expect(below!.collapsed).not.toBeNull();
  });

  it('skips thread counts without a successful run', () => {
    expect(points([[1, []], [2, [0.3]]]).map((p) => p.threads)).toEqual([2]);
  });
});

describe('what the sweep shows of it', () => {
  const ps = points([[1, [0.186, 0.19, 0.18]], [2, [0.006, 0.007, 0.006]], [4, [0.3, 0.31, 0.29]]]);

  it('names the collapsed thread counts in the legend, and leaves a healthy legend as it was', () => {
    expect(referenceLegend('Open MPI', ps)).toBe('Open MPI [COLLAPSED at N=2: quote no ratio]');
    expect(referenceLegend('Open MPI', [ps[0]!, ps[2]!])).toBe('Open MPI');
  });

  it('prints median, best and repeats, and the flag with its reason', () => {
    expect(formatReferencePoint('Open MPI', ps[0]!)).toBe('Open MPI, N=1: median 0.186, best 0.190 of 3 M/s');
    expect(formatReferencePoint('Open MPI', ps[1]!)).toBe(
      "Open MPI, N=2: median 0.006, best 0.007 of 3 M/s  COLLAPSED (median 0.006 is below a tenth of N=1's best 0.190): quote no ratio against it",
    );
  });
});
