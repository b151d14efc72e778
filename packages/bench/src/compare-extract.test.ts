// compare.sh's parser (reference/compare-extract.sh) against the result lines each implementation prints:
// tsmpi's (report.ts, allreduce.ts), the C references' and plain Node's (reference/raw-node.ts).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../reference/compare-extract.sh', import.meta.url));

/** The "METRIC VALUE" lines compare-extract.sh prints for `output`. */
function extract(output: string): string[] {
  const run = spawnSync('bash', [SCRIPT], { input: output, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').filter((line) => line !== '');
}

describe('compare-extract.sh', () => {
  it('reads the msgrate lines of tsmpi, the C references and plain Node', () => {
    expect(extract('msgrate: 0.412 M messages/s (12 x 10000 iterations, 0-byte, 2 processes, channels 4)\nconfig: channels 4\n')).toEqual(['msgrate 0.412']);
    expect(extract('raw-node msgrate: 0.480 M messages/s (12 x 1000 iterations, one write per batch, unix)\n')).toEqual(['msgrate 0.480']);
  });

  it('reads ping-pong round trips per payload size: the mean, then the median, p99 and CPU per call', () => {
    expect(extract(
      'pingpong: 0-byte round trip mean 16.00 us (median 14.80, p99 30.00, min 12.00; cpu 0.040 ms per call over all ranks; 10000 iterations, 2 processes, channels 4)\n'
      + 'pingpong: 8-byte round trip mean 17.25 us (median 15.10, p99 31.00, min 12.50; cpu 0.045 ms per call over all ranks; 10000 iterations, 2 processes, MPICH 4.0.2)\n'
      + 'config: channels 4\n',
    )).toEqual([
      '0-byte 16.00', '8-byte 17.25', '0-byte-median 14.80', '8-byte-median 15.10', '0-byte-p99 30.00', '8-byte-p99 31.00',
      '0-byte-cpu 0.040', '8-byte-cpu 0.045',
    ]);
  });

  it('reads plain Node ping-pong lines, which carry no CPU figure', () => {
    expect(extract('raw-node pingpong: round trip mean 9.50 us (median 9.10, p99 20.00, min 8.00; 20000 iterations, 8-byte payload, unix, poll)\n'))
      .toEqual(['8-byte 9.50', '8-byte-median 9.10', '8-byte-p99 20.00']);
  });

  it('reads the allreduce mean, median, p99 and CPU per call of tsmpi and the C references', () => {
    const out = 'allreduce: 8-byte mean 60.10 us, 0.1 MB/s (median 55.00, p99 90.00, min 50.00; cpu 0.250 ms per call over all ranks; 1000 iterations, 4 processes, channels 2)\n'
      + 'allreduce: 8-byte cpu split: main threads 0.200, other threads 0.050 ms per call over all ranks\n'
      + 'allreduce: 8388608-byte mean 13164.40 us, 637.2 MB/s (median 13000.00, p99 15000.00, min 12000.00; cpu 24.242 ms per call over all ranks; 10 iterations, 4 processes, Open MPI 4.1.4)\n';
    expect(extract(out)).toEqual([
      '8-byte 60.10', '8388608-byte 13164.40', '8-byte-median 55.00', '8388608-byte-median 13000.00',
      '8-byte-p99 90.00', '8388608-byte-p99 15000.00', '8-byte-cpu 0.250', '8388608-byte-cpu 24.242',
    ]);
  });

  it('reads plain Node allreduce lines, sleeping or polling', () => {
    const out = 'raw-node allreduce: 8-byte mean 130.00 us (median 128.70, p99 300.00, min 40.00; cpu 0.301 ms per call over all ranks; 1000 calls, 4 processes, recv data, unix, poll)\n'
      + 'raw-node allreduce: 8388608-byte mean 11100.00 us, 755.7 MB/s (median 11000.00, p99 12000.00, min 10000.00; cpu 20.000 ms per call over all ranks; 16 calls, 4 processes, recv data, unix)\n';
    expect(extract(out)).toEqual([
      '8-byte 130.00', '8388608-byte 11100.00', '8-byte-median 128.70', '8388608-byte-median 11000.00',
      '8-byte-p99 300.00', '8388608-byte-p99 12000.00', '8-byte-cpu 0.301', '8388608-byte-cpu 20.000',
    ]);
  });

  it('reads plain Node neighbor-alltoall lines', () => {
    const out = 'raw-node neighbor-alltoall: 1024-byte mean 182.21 us (median 57.69, p99 3678.74, min 6.63; cpu 0.361 ms per call over all ranks; 2000 calls, 4 processes, recv data, unix, poll)\n';
    expect(extract(out)).toEqual(['1024-byte 182.21', '1024-byte-median 57.69', '1024-byte-p99 3678.74', '1024-byte-cpu 0.361']);
  });

  it('reads plain Node put lines (put-lock, put-fence)', () => {
    expect(extract('raw-node put-fence: 1048576-byte mean 446.83 us, 2346.7 MB/s (median 284.96, p99 3027.54, min 214.69; cpu 0.885 ms per call over all ranks; 1000 calls, 2 processes, recv data, unix, poll)\n'))
      .toEqual(['1048576-byte 446.83', '1048576-byte-median 284.96', '1048576-byte-p99 3027.54', '1048576-byte-cpu 0.885']);
    expect(extract('raw-node put-lock: 8-byte mean 125.60 us (median 37.81, p99 3221.70, min 22.06; cpu 0.253 ms per call over all ranks; 1000 calls, 2 processes, recv data, unix, poll)\n'))
      .toEqual(['8-byte 125.60', '8-byte-median 37.81', '8-byte-p99 3221.70', '8-byte-cpu 0.253']);
  });

  it('reads nothing from the old median-first lines or from other lines', () => {
    expect(extract('pingpong: 8-byte round trip median 48.20 us (min 41.10, p99 90.30; 10000 iterations)\n')).toEqual([]);
    expect(extract('config: channels 4, matching parallel\nwarning: something\n')).toEqual([]);
  });

  it('reads collective.ts/.c and put.ts/.c lines as allreduce\'s', () => {
    expect(extract(
      'reduce-scatter: 8388608-byte mean 9000.00 us, 932.1 MB/s (median 8000.00, p99 9900.00, min 7000.00; cpu 20.000 ms per call over all ranks; 16 iterations, 4 processes, Open MPI 4.1.4)\n'
      + 'config: channels 2\n',
    )).toEqual(['8388608-byte 9000.00', '8388608-byte-median 8000.00', '8388608-byte-p99 9900.00', '8388608-byte-cpu 20.000']);
    expect(extract('neighbor-alltoall: 1024-byte mean 40.00 us, 25.6 MB/s (median 38.00, p99 70.00, min 30.00; cpu 0.100 ms per call over all ranks; 2000 iterations, 4 processes, channels 2)\n'))
      .toEqual(['1024-byte 40.00', '1024-byte-median 38.00', '1024-byte-p99 70.00', '1024-byte-cpu 0.100']);
    expect(extract('reduce-scatter-block: 1048576-byte mean 900.00 us, 1165.1 MB/s (median 800.00, p99 990.00, min 700.00; cpu 2.000 ms per call over all ranks; 64 iterations, 4 processes, channels 2)\n'))
      .toEqual(['1048576-byte 900.00', '1048576-byte-median 800.00', '1048576-byte-p99 990.00', '1048576-byte-cpu 2.000']);
    expect(extract('put-lock: 8-byte mean 21.00 us, 0.4 MB/s (median 20.00, p99 30.00, min 19.00; cpu 0.100 ms per call over all ranks; 1000 iterations, 2 processes, channels 2, target computes 2 s)\n'))
      .toEqual(['8-byte 21.00', '8-byte-median 20.00', '8-byte-p99 30.00', '8-byte-cpu 0.100']);
    expect(extract('put-flush: 8-byte mean 52.00 us, 0.2 MB/s (median 24.00, p99 400.00, min 22.00; cpu 0.050 ms per call over all ranks; 10000 iterations, 2 processes, channels 2, target computes 0 s)\n'))
      .toEqual(['8-byte 52.00', '8-byte-median 24.00', '8-byte-p99 400.00', '8-byte-cpu 0.050']);
  });

  it('reads io.ts/.c\'s two lines of one size apart, by their names', () => {
    expect(extract(
      'io-write: 268435456-byte mean 500000.00 us, 536.9 MB/s (median 490000.00, p99 600000.00, min 480000.00; cpu 900.000 ms per call over all ranks; 5 iterations, 4 processes, channels 2)\n'
      + 'io-read: 268435456-byte mean 250000.00 us, 1073.7 MB/s (median 240000.00, p99 300000.00, min 230000.00; cpu 700.000 ms per call over all ranks; 5 iterations, 4 processes, Open MPI 4.1.4)\n'
      + 'config: channels 2\n',
    )).toEqual([
      'io-write-268435456-byte 500000.00', 'io-read-268435456-byte 250000.00', 'io-write-268435456-byte-median 490000.00', 'io-read-268435456-byte-median 240000.00',
      'io-write-268435456-byte-p99 600000.00', 'io-read-268435456-byte-p99 300000.00', 'io-write-268435456-byte-cpu 900.000', 'io-read-268435456-byte-cpu 700.000',
    ]);
  });
});
