/**
 * What the benchmarks print and record. The printed lines are a small contract:
 * reference/compare.sh parses them, and the C references in reference/ print
 * the same shapes, so keep the three in step:
 *
 * ```
 * msgrate: 0.412 M messages/s (12 x 10000 iterations, 0-byte, 2 processes, channels 4)
 * pingpong: 0-byte round trip median 48.20 us (min 41.10, p99 90.30; 10000 iterations, 2 processes, channels 4)
 * config: channels 4, matching parallel, progress inline, wait poll, refcount predefined, eagerLimit 65536, endpoints 1
 * ```
 *
 * A JSON record is one object per line (NDJSON) appended to the --json file,
 * so repeated runs accumulate in one file.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';

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

/** Inputs of {@link formatRoundTripLine}; times in microseconds. */
export interface RoundTripLineInput {
  readonly sizeBytes: number;
  readonly medianMicros: number;
  readonly minMicros: number;
  readonly p99Micros: number;
  readonly iterations: number;
  readonly processes: number;
  readonly flavour: string;
}

/**
 * The pingpong result line for one message size.
 *
 * @param r - size, latency figures in microseconds and run shape
 * @returns e.g. `pingpong: 8-byte round trip median 48.20 us (min 41.10, p99 90.30; 10000 iterations, 2 processes, channels 4)`
 * @example
 * formatRoundTripLine({ sizeBytes: 8, medianMicros: 48.2, minMicros: 41.1, p99Micros: 90.3, iterations: 10_000, processes: 2, flavour: 'channels 4' });
 */
export function formatRoundTripLine(r: RoundTripLineInput): string {
  return (
    `pingpong: ${r.sizeBytes}-byte round trip median ${r.medianMicros.toFixed(2)} us ` +
    `(min ${r.minMicros.toFixed(2)}, p99 ${r.p99Micros.toFixed(2)}; ${r.iterations} iterations, ${r.processes} processes, ${r.flavour})`
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
