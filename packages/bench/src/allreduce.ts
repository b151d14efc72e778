/**
 * Allreduce benchmark: MPI_Allreduce of FLOAT64 with SUM across all ranks.
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/allreduce.ts [flags]
 *
 * For each message size (default 8 bytes and 8 MiB) every rank runs a barrier,
 * `warmup` untimed Allreduce calls, a barrier, then the timed calls; rank 0 times the
 * loop of calls and each call, and prints the mean per call in microseconds (the
 * loop's time / calls: what a program pays), the algorithm bandwidth, size / mean,
 * in MB/s (10^6 bytes), the median, p99 and min of the per-call times, and the
 * CPU time (user + system) per call summed over all ranks: with more ranks
 * than cores the cores are the bottleneck, and CPU per call is the steadier
 * measure on a shared machine (docs/adr/0006). A second line splits that CPU
 * into the ranks' main threads and their other threads (V8's compiler and GC
 * helpers: thread-cpu.ts, Linux only; docs/notebook/performance-2026-11.md 4.16). Large sizes run fewer calls:
 * iterations * min(1, 64 KiB / size), at least 10.
 * reference/allreduce.c is the same benchmark in C.
 */
import * as MPI from '@tsmpi/core';
import { parseBenchArgs } from './bench-args.ts';
import { isLeadProcess } from './lead-rank.ts';
import { appendJsonRecord, bandwidthMBs, formatAllreduceLine, formatConfigLine, recordHeader } from './report.ts';
import { summarizeCalls } from './stats.ts';
import { threadCpu } from './thread-cpu.ts';

const USAGE = `usage: mpiexec -n P packages/bench/src/allreduce.ts [flags]

Allreduce latency and bandwidth: every rank reduces SIZE bytes of FLOAT64 with SUM.
Prints the mean time per call in microseconds, the bandwidth, the median, p99 and
min per-call times and the CPU time per call (summed over all ranks) for each size.

  --iterations N   timed calls for small sizes (default 2000; sizes above 64 KiB run
                   N * 64 KiB / SIZE calls, at least 10)
  --warmup N       untimed calls per size (default 50; sizes above 64 KiB: at least 2)
  --size BYTES     message size, a multiple of 8; repeat or comma-separate (default 8,8388608)
  --json FILE      append one JSON record (one line) per size to FILE
  -h, --help       this text`;

/** 2000 calls put the 8-byte median's noise well under 1%; 8 MiB is bandwidth-bound and needs few. */
const DEFAULTS = { iterations: 2000, warmup: 50, window: 1, sizesBytes: [8, 8 * 1024 * 1024] } as const;
const SCALE_BYTES = 64 * 1024;

/** Timed calls for one size. */
function callsFor(sizeBytes: number, iterations: number): number {
  if (sizeBytes <= SCALE_BYTES) return iterations;
  return Math.max(10, Math.round((iterations * SCALE_BYTES) / sizeBytes));
}

const parsed = parseBenchArgs(process.argv.slice(2), DEFAULTS);
if (parsed.kind === 'help') {
  if (isLeadProcess()) console.log(USAGE);
} else if (parsed.kind === 'error') {
  if (isLeadProcess()) console.error(`allreduce: ${parsed.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else if (parsed.flags.sizesBytes.some((s) => s % 8 !== 0)) {
  if (isLeadProcess()) console.error(`allreduce: --size must be a multiple of 8 (FLOAT64 elements)\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations, warmup, sizesBytes, jsonFile } = parsed.flags;
  await MPI.init();
  const comm = MPI.COMM_WORLD;
  const config = MPI.config();
  for (const sizeBytes of sizesBytes) {
    const n = sizeBytes / 8;
    const send = new Float64Array(n).fill(comm.rank + 1);
    const recv = new Float64Array(n);
    const calls = callsFor(sizeBytes, iterations);
    const warm = sizeBytes > SCALE_BYTES ? Math.max(2, Math.min(warmup, calls)) : warmup;
    // A barrier first, so that the warm-up also runs the code the barrier before the timed calls
    // runs: otherwise V8 deoptimizes the shared paths the warm-up never took (zero-byte frames)
    // at that barrier and the first ~1000 timed calls run slower while it recompiles them.
    await comm.barrier();
    for (let i = 0; i < warm; i++) await comm.Allreduce(send, recv, MPI.SUM);
    const expected = (comm.size * (comm.size + 1)) / 2;
    if (n > 0 && (recv[0] !== expected || recv[n - 1] !== expected)) throw new Error(`allreduce: wrong result ${recv[0]}, expected ${expected}`);
    await comm.barrier();
    const samples = new Float64Array(calls);
    const threadsBefore = threadCpu();
    const cpuBefore = process.cpuUsage();
    const loopStart = MPI.wtime();
    for (let i = 0; i < calls; i++) {
      const start = MPI.wtime();
      await comm.Allreduce(send, recv, MPI.SUM);
      samples[i] = MPI.wtime() - start;
    }
    const loopSeconds = MPI.wtime() - loopStart;
    const cpu = process.cpuUsage(cpuBefore);
    const threadsAfter = threadCpu();
    const cpuMillisPerCall = await comm.allreduce((cpu.user + cpu.system) / 1000 / calls, MPI.SUM);
    const mainMillisPerCall = await comm.allreduce((threadsAfter.mainNs - threadsBefore.mainNs) / 1e6 / calls, MPI.SUM);
    const otherMillisPerCall = await comm.allreduce((threadsAfter.otherNs - threadsBefore.otherNs) / 1e6 / calls, MPI.SUM);
    if (comm.rank !== 0) continue;
    const figures = summarizeCalls(samples, loopSeconds);
    console.log(formatAllreduceLine({ sizeBytes, ...figures, cpuMillisPerCall, calls, processes: comm.size, flavour: `channels ${config.channels}` }));
    console.log(`allreduce: ${sizeBytes}-byte cpu split: main threads ${mainMillisPerCall.toFixed(3)}, other threads ${otherMillisPerCall.toFixed(3)} ms per call over all ranks`);
    if (jsonFile !== null) {
      appendJsonRecord(jsonFile, {
        ...recordHeader(), bench: 'allreduce', processes: comm.size, iterations: calls, warmup: warm, sizeBytes,
        ...figures, bandwidthMBs: bandwidthMBs(sizeBytes, figures.meanMicros), cpuMillisPerCall, config,
      });
    }
  }
  if (comm.rank === 0) console.log(formatConfigLine(config));
  await MPI.finalize();
}
