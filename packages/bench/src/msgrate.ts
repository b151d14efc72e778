/**
 * Neighbor message-rate benchmark, single-threaded two-process form.
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/msgrate.ts [flags]
 *
 * Rank 0 and rank 1 are peers. Each iteration posts `window` zero-byte Irecv
 * and `window` Isend to/from the peer and waits for all of them (the kernel is
 * in neighbor-rate.ts; source: papers/multichannel-parallel-queues.txt §4).
 * Rank 0 prints its rate: window x iterations messages / elapsed seconds.
 * reference/msgrate.c is the same benchmark in C for Open MPI and MPICH, and
 * reference/compare.sh runs all three.
 *
 * The multithreaded layouts (a later issue) start MPI.Worker threads whose
 * bodies call runNeighborRate() with their own peer and tag; this file stays
 * the single-threaded form (thread level 'single').
 */
import * as MPI from '@tsmpi/core';
import { parseBenchArgs } from './bench-args.ts';
import { isLeadProcess } from './lead-rank.ts';
import { runNeighborRate } from './neighbor-rate.ts';
import { appendJsonRecord, formatConfigLine, formatRateLine, recordHeader } from './report.ts';

const USAGE = `usage: mpiexec -n 2 packages/bench/src/msgrate.ts [flags]

Neighbor message-rate benchmark (Dózsa et al. 2010, section 4): ranks 0 and 1
each post WINDOW Irecv and WINDOW Isend per iteration, then waitall.
Rank 0 prints WINDOW x ITERATIONS / elapsed seconds.

  --iterations N   timed iterations            (default 10000)
  --warmup N       untimed warm-up iterations  (default 10)
  --window N       messages each way per iteration (default 12)
  --size BYTES     message size in bytes       (default 0)
  --json FILE      append a JSON record (one line) to FILE
  -h, --help       this text`;

/** Paper defaults: 12 x 10,000 zero-byte messages after 10 warm-up iterations. */
const DEFAULTS = { iterations: 10_000, warmup: 10, window: 12, sizesBytes: [0] } as const;

const parsed = parseBenchArgs(process.argv.slice(2), DEFAULTS);
if (parsed.kind === 'help') {
  if (isLeadProcess()) console.log(USAGE);
} else if (parsed.kind === 'error') {
  if (isLeadProcess()) console.error(`msgrate: ${parsed.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations, warmup, window, sizesBytes, jsonFile } = parsed.flags;
  const sizeBytes = sizesBytes[0] ?? 0;

  await MPI.init();
  const comm = MPI.COMM_WORLD;
  if (comm.size !== 2) {
    if (comm.rank === 0) console.error(`msgrate: needs exactly 2 processes (got ${comm.size}); run with mpiexec -n 2`);
    process.exitCode = 2;
  } else {
    const result = await runNeighborRate(comm, 1 - comm.rank, { iterations, warmup, window, sizeBytes });
    if (comm.rank === 0) {
      const config = MPI.config();
      console.log(
        formatRateLine({
          messagesPerSecond: result.messagesPerSecond,
          window,
          iterations,
          sizeBytes,
          processes: comm.size,
          flavour: `channels ${config.channels}`,
        }),
      );
      console.log(formatConfigLine(config));
      if (jsonFile !== null) {
        appendJsonRecord(jsonFile, {
          ...recordHeader(),
          bench: 'msgrate',
          layout: 'single',
          processes: comm.size,
          threads: 1,
          iterations,
          warmup,
          window,
          sizeBytes,
          messagesSent: result.messagesSent,
          elapsedSeconds: result.elapsedSeconds,
          messagesPerSecond: result.messagesPerSecond,
          config,
        });
      }
    }
  }
  await MPI.finalize();
}
