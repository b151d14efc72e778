/**
 * What the benchmarks print and record. The printed lines are a small contract:
 * reference/compare.sh parses them, and the C references in reference/ print
 * the same shapes, so keep the three in step:
 *
 * ```
 * msgrate: 0.412 M messages/s (12 x 10000 iterations, 0-byte, 2 processes, channels 4)
 * pingpong: 0-byte round trip mean 50.10 us (median 48.20, p99 90.30, min 41.10; cpu 0.061 ms per call over all ranks; 10000 iterations, 2 processes, channels 4)
 * allreduce: 8-byte mean 30.50 us, 0.3 MB/s (median 28.00, p99 60.00, min 20.00; cpu 0.120 ms per call over all ranks; 2000 iterations, 2 processes, channels 4)
 * config: channels 4, matching parallel, progress inline, wait poll, refcount predefined, eagerLimit 65536, endpoints 1
 * ```
 *
 * A JSON record is one object per line (NDJSON) appended to the --json file,
 * so repeated runs accumulate in one file.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { CallSummary } from './stats.ts';

/** The MPI.config() fields the reports show (API.md, Introspection). */
export interface ConfigFields {
  readonly channels: number;
  readonly matching: string;
  readonly progress: string;
  readonly wait: string;
  readonly refcount: string;
  readonly eagerLimit: number;
  readonly endpoints: number;
}

/** Inputs of {@link formatRateLine}. */
export interface RateLineInput {
  readonly messagesPerSecond: number;
  readonly window: number;
  readonly iterations: number;
  readonly sizeBytes: number;
  readonly processes: number;
  /** Where the figure comes from: 'channels 4' for tsmpi, the library name for a reference MPI. */
  readonly flavour: string;
}

/**
 * The msgrate result line.
 *
 * @param r - rate and run shape
 * @returns e.g. `msgrate: 0.412 M messages/s (12 x 10000 iterations, 0-byte, 2 processes, channels 4)`
 * @example
 * formatRateLine({ messagesPerSecond: 412_000, window: 12, iterations: 10_000, sizeBytes: 0, processes: 2, flavour: 'channels 4' });
 */
export function formatRateLine(r: RateLineInput): string {
  const millions = (r.messagesPerSecond / 1e6).toFixed(3);
  return `msgrate: ${millions} M messages/s (${r.window} x ${r.iterations} iterations, ${r.sizeBytes}-byte, ${r.processes} processes, ${r.flavour})`;
}

/** Inputs of {@link formatRoundTripLine}: a loop's figures (stats.ts summarizeCalls) and run shape. */
export interface RoundTripLineInput extends CallSummary {
  readonly sizeBytes: number;
  /** Process CPU time (user + system) per round trip, summed over both processes, in milliseconds. */
  readonly cpuMillisPerCall: number;
  readonly iterations: number;
  readonly processes: number;
  readonly flavour: string;
}

/**
 * The pingpong result line for one message size: the mean round trip first
 * (compare.sh takes its ratios on it), then the median, p99 and min of the
 * per-round-trip times and the CPU per round trip over both processes.
 *
 * @param r - size, figures in microseconds, CPU in milliseconds and run shape
 * @returns e.g. `pingpong: 8-byte round trip mean 50.10 us (median 48.20, p99 90.30, min 41.10; cpu 0.061 ms per call over all ranks; 10000 iterations, 2 processes, channels 4)`
 * @example
 * formatRoundTripLine({ sizeBytes: 8, meanMicros: 50.1, medianMicros: 48.2, p99Micros: 90.3, minMicros: 41.1, cpuMillisPerCall: 0.061, iterations: 10_000, processes: 2, flavour: 'channels 4' });
 */
export function formatRoundTripLine(r: RoundTripLineInput): string {
  return (
    `pingpong: ${r.sizeBytes}-byte round trip mean ${r.meanMicros.toFixed(2)} us ` +
    `(${callFigures(r, r.cpuMillisPerCall)}; ${r.iterations} iterations, ${r.processes} processes, ${r.flavour})`
  );
}

/** Inputs of {@link formatAllreduceLine}. */
export interface AllreduceLineInput extends CallSummary {
  readonly sizeBytes: number;
  /** Process CPU time (user + system) per call, summed over all processes, in milliseconds. */
  readonly cpuMillisPerCall: number;
  readonly calls: number;
  readonly processes: number;
  readonly flavour: string;
}

/**
 * The allreduce result line for one size: the mean time per call first, the
 * bandwidth size / mean in MB/s (10^6 bytes), then the median, p99 and min
 * of the per-call times and the CPU per call over all processes.
 *
 * @param r - size, figures in microseconds, CPU in milliseconds and run shape
 * @returns e.g. `allreduce: 8-byte mean 30.50 us, 0.3 MB/s (median 28.00, p99 60.00, min 20.00; cpu 0.120 ms per call over all ranks; 2000 iterations, 2 processes, channels 4)`
 * @example
 * formatAllreduceLine({ sizeBytes: 8, meanMicros: 30.5, medianMicros: 28, p99Micros: 60, minMicros: 20, cpuMillisPerCall: 0.12, calls: 2000, processes: 2, flavour: 'channels 4' });
 */
export function formatAllreduceLine(r: AllreduceLineInput): string {
  return formatCallLine('allreduce', r);
}

/**
 * The result line of one collective timed per call (collective.ts), in allreduce's format with
 * the collective's name first.
 *
 * @param name - the line's first word, e.g. `reduce-scatter`
 * @param r - as for {@link formatAllreduceLine}
 * @returns e.g. `reduce-scatter: 8388608-byte mean 9000.00 us, 932.1 MB/s (median ...; 16 iterations, 4 processes, channels 2)`
 * @example
 * formatCallLine('allreduce-init', { sizeBytes: 8, meanMicros: 30.5, medianMicros: 28, p99Micros: 60, minMicros: 20, cpuMillisPerCall: 0.12, calls: 2000, processes: 2, flavour: 'channels 2' });
 */
export function formatCallLine(name: string, r: AllreduceLineInput): string {
  return (
    `${name}: ${r.sizeBytes}-byte mean ${r.meanMicros.toFixed(2)} us, ${bandwidthMBs(r.sizeBytes, r.meanMicros).toFixed(1)} MB/s ` +
    `(${callFigures(r, r.cpuMillisPerCall)}; ${r.calls} iterations, ${r.processes} processes, ${r.flavour})`
  );
}

/**
 * Bytes per microsecond, i.e. MB/s (10^6 bytes), of moving `sizeBytes` in `micros`; 0 for a zero time.
 * @example
 * bandwidthMBs(8_388_608, 13_000); // 645.3
 */
export function bandwidthMBs(sizeBytes: number, micros: number): number {
  return micros > 0 ? sizeBytes / micros : 0;
}

/** "median M, p99 P, min N; cpu C ms per call over all ranks": the part of a result line compare-extract.sh reads after the mean. */
function callFigures(s: CallSummary, cpuMillisPerCall: number): string {
  return (
    `median ${s.medianMicros.toFixed(2)}, p99 ${s.p99Micros.toFixed(2)}, min ${s.minMicros.toFixed(2)}; ` +
    `cpu ${cpuMillisPerCall.toFixed(3)} ms per call over all ranks`
  );
}

/**
 * The configuration line printed under every result.
 *
 * @param c - MPI.config()
 * @returns e.g. `config: channels 4, matching parallel, progress inline, wait poll, refcount predefined, eagerLimit 65536, endpoints 1`
 * @example
 * formatConfigLine(MPI.config());
 */
export function formatConfigLine(c: ConfigFields): string {
  return (
    `config: channels ${c.channels}, matching ${c.matching}, progress ${c.progress}, wait ${c.wait}, ` +
    `refcount ${c.refcount}, eagerLimit ${c.eagerLimit}, endpoints ${c.endpoints}`
  );
}

/**
 * Fields every JSON record carries, so records from different runs and
 * machines can be told apart.
 *
 * @returns implementation, ISO date, host, Node version and core count
 * @example
 * appendJsonRecord('out.ndjson', { ...recordHeader(), bench: 'msgrate', rate: 1 });
 */
export function recordHeader(): { impl: 'tsmpi'; date: string; host: string; node: string } {
  return { impl: 'tsmpi', date: new Date().toISOString(), host: hostname(), node: process.version };
}

/**
 * Appends `record` to `file` as one JSON line (the file and its directory are
 * created if missing).
 *
 * @param file - path of the NDJSON file
 * @param record - any JSON-serializable object
 * @throws Error (from node:fs) when the file cannot be written
 * @example
 * appendJsonRecord('bench-results/msgrate.ndjson', { bench: 'msgrate', messagesPerSecond: 412000 });
 */
export function appendJsonRecord(file: string, record: object): void {
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, `${JSON.stringify(record)}\n`);
}
