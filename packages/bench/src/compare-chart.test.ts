import { describe, expect, it } from 'vitest';
import { lengthMetrics, lengthSeries, type CompareResult } from './compare-chart.ts';

const result: CompareResult = {
  bench: 'msgrate', date: '2026-11-23T18:00:00Z', host: 'vm', cores: 2, loadavg: '0.5 0.4 0.3', unit: 'M messages/s, higher is better',
  results: [
    { impl: 'tsmpi', metric: 'msgrate@1000', median: 0.1 },
    { impl: 'openmpi', metric: 'msgrate@1000', median: 0.3 },
    { impl: 'tsmpi', metric: 'msgrate@10000', median: 0.4 },
    { impl: 'openmpi', metric: 'msgrate@10000', median: 0.31 },
    { impl: 'openmpi-nobind', metric: 'msgrate@10000', median: 0.32 },
    { impl: 'tsmpi', metric: 'msgrate', median: 9 },
    { impl: 'tsmpi', metric: '8-byte-cpu@1000', median: 0.2 },
  ],
};

describe('compare-chart', () => {
  it('groups per-length medians into one series per implementation', () => {
    expect(lengthSeries(result, 'msgrate')).toEqual([
      { name: 'tsmpi', points: [{ x: 1000, y: 0.1 }, { x: 10_000, y: 0.4 }] },
      { name: 'Open MPI (defaults)', points: [{ x: 1000, y: 0.3 }, { x: 10_000, y: 0.31 }] },
      { name: 'Open MPI --bind-to none', points: [{ x: 10_000, y: 0.32 }] },
    ]);
  });

  it('lists the per-length metrics and ignores ones without a length', () => {
    expect(lengthMetrics(result)).toEqual(['msgrate', '8-byte-cpu']);
    expect(lengthSeries(result, '8-byte-cpu')).toEqual([{ name: 'tsmpi', points: [{ x: 1000, y: 0.2 }] }]);
  });
});
