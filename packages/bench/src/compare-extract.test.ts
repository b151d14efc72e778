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

  it('reads ping-pong round trips per payload size', () => {
    expect(extract('pingpong: 0-byte round trip median 14.80 us (min 12.00, p99 30.00; 10000 iterations)\npingpong: 8-byte round trip median 15.10 us (min 12.50)\n'))
      .toEqual(['0-byte 14.80', '8-byte 15.10']);
    expect(extract('raw-node pingpong: round trip median 9.10 us (20000 iterations, 8-byte payload, unix)\n')).toEqual(['8-byte 9.10']);
  });

  it('reads the allreduce time and CPU per call of tsmpi and the C references', () => {
    const out = 'allreduce: 8-byte median 60.10 us, 0.1 MB/s (min 50.00, p99 90.00; cpu 0.250 ms per call over all ranks; 1000 iterations, 4 processes, channels 2)\n'
      + 'allreduce: 8388608-byte median 13164.40 us, 637.2 MB/s (min 12000.00, p99 15000.00; cpu 24.242 ms per call over all ranks; 10 iterations, 4 processes, Open MPI v4.1.4)\n';
    expect(extract(out)).toEqual(['8-byte 60.10', '8388608-byte 13164.40', '8-byte-cpu 0.250', '8388608-byte-cpu 24.242']);
  });

  it('reads plain Node allreduce lines, sleeping or polling, with their CPU per call', () => {
    const out = 'raw-node allreduce: 8-byte median 128.70 us (min 40.00, p99 300.00; cpu 0.301 ms per call over all ranks; 1000 calls, 4 processes, recv data, unix, poll)\n'
      + 'raw-node allreduce: 8388608-byte median 11000.00 us, 762.6 MB/s (min 10000.00, p99 12000.00; cpu 20.000 ms per call over all ranks; 16 calls, 4 processes, recv data, unix)\n';
    expect(extract(out)).toEqual(['8-byte 128.70', '8388608-byte 11000.00', '8-byte-cpu 0.301', '8388608-byte-cpu 20.000']);
  });

  it('gives no CPU metric for a line without one, and nothing for other lines', () => {
    expect(extract('raw-node allreduce: 8-byte median 70.00 us (min 40.00, p99 90.00; 1000 calls, 4 processes, recv data)\n')).toEqual(['8-byte 70.00']);
    expect(extract('config: channels 4, matching parallel\nwarning: something\n')).toEqual([]);
  });
});
