/**
 * Ping-pong latency benchmark: blocking Send/Recv round trips between ranks 0 and 1.
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/pingpong.ts [flags]
 *
 * For each message size (default 0 and 8 bytes), rank 0 times every one of
 * `iterations` round trips after `warmup` untimed ones and prints the median
 * round trip in microseconds (plus min and p99). The kernel is round-trip.ts;
 * reference/pingpong.c is the same benchmark in C.
 */
import * as MPI from '@tsmpi/core';
import { parseBenchArgs } from './bench-args.ts';
import { isLeadProcess } from './lead-rank.ts';
import { appendJsonRecord, formatConfigLine, formatRoundTripLine, recordHeader } from './report.ts';
import { runRoundTrip } from './round-trip.ts';
import { median, quantile } from './stats.ts';

const USAGE = `usage: mpiexec -n 2 packages/bench/src/pingpong.ts [flags]

Ping-pong latency: rank 0 sends SIZE bytes to rank 1 and waits for them back.
Prints the median round trip in microseconds for each size.

  --iterations N   timed round trips per size  (default 10000)
  --warmup N       untimed round trips per size (default 100)
  --size BYTES     message size; repeat or comma-separate for several (default 0,8)
  --json FILE      append one JSON record (one line) per size to FILE
  -h, --help       this text`;

/** 100 warm-up round trips let the JIT settle before timing; 0 and 8 bytes as in OSU latency. */
const DEFAULTS = { iterations: 10_000, warmup: 100, window: 1, sizesBytes: [0, 8] } as const;

const parsed = parseBenchArgs(process.argv.slice(2), DEFAULTS);
if (parsed.kind === 'help') {
  if (isLeadProcess()) console.log(USAGE);
} else if (parsed.kind === 'error') {
  if (isLeadProcess()) console.error(`pingpong: ${parsed.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations, warmup, sizesBytes, jsonFile } = parsed.flags;

  await MPI.init();
  const comm = MPI.COMM_WORLD;
  if (comm.size !== 2) {
    if (comm.rank === 0) console.error(`pingpong: needs exactly 2 processes (got ${comm.size}); run with mpiexec -n 2`);
    process.exitCode = 2;
  } else {
    const isInitiator = comm.rank === 0;
    const config = MPI.config();
    for (const sizeBytes of sizesBytes) {
      const samples = await runRoundTrip(comm, 1 - comm.rank, isInitiator, { iterations, warmup, sizeBytes });
      if (!isInitiator) continue;
      const medianMicros = median(samples) * 1e6;
      const minMicros = quantile(samples, 0) * 1e6;
      const p99Micros = quantile(samples, 0.99) * 1e6;
      console.log(
        formatRoundTripLine({
          sizeBytes,
          medianMicros,
          minMicros,
          p99Micros,
          iterations,
          processes: comm.size,
          flavour: `channels ${config.channels}`,
        }),
      );
      if (jsonFile !== null) {
        appendJsonRecord(jsonFile, {
          ...recordHeader(),
          bench: 'pingpong',
          processes: comm.size,
          iterations,
          warmup,
          sizeBytes,
          medianMicros,
          minMicros,
          p99Micros,
          config,
        });
      }
    }
    if (isInitiator) console.log(formatConfigLine(config));
  }
  await MPI.finalize();
}
