import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from './bench-args.ts';
import { median, quantile } from './stats.ts';
import { bandwidthMBs, formatAllreduceLine, formatCallLine, formatConfigLine, formatRateLine, formatRoundTripLine } from './report.ts';

const DEFAULTS = { iterations: 10_000, warmup: 10, window: 12, sizesBytes: [0] };

describe('parseBenchArgs', () => {
  it('fills in the defaults', () => {
    expect(parseBenchArgs([], DEFAULTS)).toEqual({
      kind: 'run',
      flags: { iterations: 10_000, warmup: 10, window: 12, sizesBytes: [0], jsonFile: null },
    });
  });

  it('reads every flag, in both --x v and --x=v forms', () => {
    const r = parseBenchArgs(['--iterations', '500', '--warmup=0', '--window', '4', '--size', '8', '--size=0,64', '--json', 'out.ndjson'], DEFAULTS);
    expect(r).toEqual({ kind: 'run', flags: { iterations: 500, warmup: 0, window: 4, sizesBytes: [8, 0, 64], jsonFile: 'out.ndjson' } });
  });

  it('answers --help and -h', () => {
    expect(parseBenchArgs(['--help'], DEFAULTS)).toEqual({ kind: 'help' });
    expect(parseBenchArgs(['-h'], DEFAULTS)).toEqual({ kind: 'help' });
  });

  it.each([
    [['--iterations', '0']],
    [['--iterations', '1e3']],
    [['--window', '-1']],
    [['--size', 'big']],
    [['--bogus']],
    [['positional']],
  ])('rejects %j', (argv) => {
    expect(parseBenchArgs(argv, DEFAULTS).kind).toBe('error');
  });
});

describe('stats', () => {
  it('median and quantile interpolate like numpy', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median(new Float64Array([4, 1, 3, 2]))).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.99)).toBeCloseTo(4.96);
    expect(median([])).toBeNaN();
  });
});

describe('report lines (parsed by reference/compare.sh; keep the C output in step)', () => {
  it('formats the msgrate line', () => {
    expect(
      formatRateLine({ messagesPerSecond: 412_345, window: 12, iterations: 10_000, sizeBytes: 0, processes: 2, flavour: 'channels 4' }),
    ).toBe('msgrate: 0.412 M messages/s (12 x 10000 iterations, 0-byte, 2 processes, channels 4)');
  });

  it('formats the pingpong line, mean first', () => {
    expect(
      formatRoundTripLine({
        sizeBytes: 8, meanMicros: 50.1, medianMicros: 48.2, minMicros: 41.1, p99Micros: 90.3, cpuMillisPerCall: 0.0614,
        iterations: 10_000, processes: 2, flavour: 'channels 4',
      }),
    ).toBe('pingpong: 8-byte round trip mean 50.10 us (median 48.20, p99 90.30, min 41.10; cpu 0.061 ms per call over all ranks; 10000 iterations, 2 processes, channels 4)');
  });

  it('formats the allreduce line, mean first, bandwidth on the mean', () => {
    expect(
      formatAllreduceLine({
        sizeBytes: 8_388_608, meanMicros: 13_000, medianMicros: 12_500, minMicros: 12_000, p99Micros: 15_000, cpuMillisPerCall: 24.2424,
        calls: 10, processes: 4, flavour: 'channels 4',
      }),
    ).toBe('allreduce: 8388608-byte mean 13000.00 us, 645.3 MB/s (median 12500.00, p99 15000.00, min 12000.00; cpu 24.242 ms per call over all ranks; 10 iterations, 4 processes, channels 4)');
    expect(bandwidthMBs(8, 0)).toBe(0);
  });

  it('formats a collective\'s line as allreduce\'s, with its name first', () => {
    expect(
      formatCallLine('allreduce-init', {
        sizeBytes: 8, meanMicros: 30.5, medianMicros: 28, minMicros: 20, p99Micros: 60, cpuMillisPerCall: 0.12, calls: 2000, processes: 2, flavour: 'channels 2',
      }),
    ).toBe('allreduce-init: 8-byte mean 30.50 us, 0.3 MB/s (median 28.00, p99 60.00, min 20.00; cpu 0.120 ms per call over all ranks; 2000 iterations, 2 processes, channels 2)');
  });

  it('formats the config line', () => {
    expect(
      formatConfigLine({ channels: 4, matching: 'parallel', progress: 'inline', wait: 'poll', refcount: 'predefined', eagerLimit: 65536, endpoints: 1 }),
    ).toBe('config: channels 4, matching parallel, progress inline, wait poll, refcount predefined, eagerLimit 65536, endpoints 1');
  });
});
