/**
 * Ping-pong latency benchmark: blocking Send/Recv round trips between ranks 0 and 1.
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/pingpong.ts [flags]
 *
 * For each message size (default 0 and 8 bytes), rank 0 times the loop of
 * `iterations` round trips after `warmup` untimed ones, and each round trip,
 * and prints the mean round trip in microseconds (the loop's time / iterations),
 * the median, p99 and min of the round trips, and the process CPU time per round
 * trip summed over both ranks. The kernel is round-trip.ts; reference/pingpong.c
 * is the same benchmark in C.
 */
import * as MPI from '@tsmpi/core';
import { parseBenchArgs } from './bench-args.ts';
import { isLeadProcess } from './lead-rank.ts';
import { appendJsonRecord, formatConfigLine, formatRoundTripLine, recordHeader } from './report.ts';
import { runRoundTrip } from './round-trip.ts';
import { summarizeCalls } from './stats.ts';

const USAGE = `usage: mpiexec -n 2 packages/bench/src/pingpong.ts [flags]

Ping-pong latency: rank 0 sends SIZE bytes to rank 1 and waits for them back.
Prints the mean round trip in microseconds for each size (then the median, p99
and min round trip, and the CPU time per round trip summed over both processes).

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
      const { samples, loopSeconds, cpuMicros } = await runRoundTrip(comm, 1 - comm.rank, isInitiator, { iterations, warmup, sizeBytes });
      const cpuMillisPerCall = await comm.allreduce(cpuMicros / 1000 / iterations, MPI.SUM);
      if (!isInitiator) continue;
      const figures = summarizeCalls(samples, loopSeconds);
      console.log(formatRoundTripLine({ sizeBytes, ...figures, cpuMillisPerCall, iterations, processes: comm.size, flavour: `channels ${config.channels}` }));
      if (jsonFile !== null) {
        appendJsonRecord(jsonFile, {
          ...recordHeader(),
          bench: 'pingpong',
          processes: comm.size,
          iterations,
          warmup,
          sizeBytes,
          ...figures,
          cpuMillisPerCall,
          config,
        });
      }
    }
    if (isInitiator) console.log(formatConfigLine(config));
  }
  await MPI.finalize();
}
