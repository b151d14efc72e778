/**
 * The settings table: every tunable of tsmpi in one place.
 *
 * Each row names the setting, its environment variable, its mpiexec flag (if
 * any), its type, default and documentation. resolveConfig() runs once at init
 * (explicit > environment > default) and its frozen result is passed down; no
 * other module reads process.env. The launcher builds its --help and its
 * validation from the same rows, and docs/SETTINGS.md lists them (a test keeps
 * docs and table in step).
 */
import os from 'node:os';
import type { Progress } from './job-env.ts';

type Kind = { type: 'int'; min: number; max: number } | { type: 'enum'; values: readonly string[] } | { type: 'string' };

export interface SettingRow {
  readonly name: string;
  readonly env: string;
  readonly flag: string | null;
  readonly kind: Kind;
  /** The default, or a function of the machine for defaults that depend on it. */
  readonly defaultValue: () => number | string;
  readonly level: 'user' | 'tuning';
  readonly doc: string;
  /** One line for `mpiexec --help` (rows with a flag); `doc` is the whole story (--help-all). */
  readonly brief?: string;
}

/**
 * Upper bound of eagerLimit, 64 MiB. A receiver keeps every unexpected eager message whole until
 * its receive is posted, and its transport accepts (allocates) an eager frame up to the limit
 * without being asked, so the limit bounds what a peer can make it hold per message; above
 * 64 MiB the round trip that rendezvous adds (tens of microseconds) is under 0.1% of the copy.
 */
export const MAX_EAGER_LIMIT_BYTES = 64 << 20;

/**
 * Upper bound of traceEvents: a thread's trace travels to mpiexec in one wire-up message of at
 * most 64 MiB, and a recorded call plus a message end take 112 bytes.
 */
export const MAX_TRACE_EVENTS = 500_000;

function int(min: number, max: number): Kind {
  return { type: 'int', min, max };
}
function oneOf(...values: string[]): Kind {
  return { type: 'enum', values };
}

export const SETTINGS: readonly SettingRow[] = [
  {
    name: 'channels', env: 'TSMPI_CHANNELS', flag: '--channels', kind: int(1, 64),
    // One channel per core keeps every core's engine busy; more than 4 only adds sockets.
    defaultValue: () => Math.min(4, os.availableParallelism()),
    level: 'user', doc: 'TCP channels per process pair; endpoints s and d (J per process) talk on channel (s div J + d div J + min(s, d) mod J) mod C, which is (s + d) mod C when J = 1',
    brief: 'TCP connections per pair of processes',
  },
  {
    name: 'matching', env: 'TSMPI_MATCHING', flag: '--matching', kind: oneOf('parallel', 'global'),
    defaultValue: () => 'parallel', level: 'user',
    doc: 'parallel: per-source posted/unexpected queues plus a wildcard queue; global: one queue pair under one lock (baseline)',
    brief: 'a queue per source, or one queue under one lock',
  },
  {
    name: 'refcount', env: 'TSMPI_REFCOUNT', flag: '--refcount', kind: oneOf('naive', 'predefined', 'gc'),
    defaultValue: () => 'predefined', level: 'user',
    doc: 'how pending requests keep the communicators, datatypes and ops they use alive after a user free: naive = an atomic count per object per request; predefined = the same minus predefined objects; gc = requests record their objects in per-thread cells, freed objects are collected by mark-and-sweep at creations and at finalize',
    brief: 'how pending requests keep freed objects alive',
  },
  {
    name: 'progress', env: 'TSMPI_PROGRESS', flag: '--progress', kind: oneOf('auto', 'inline', 'threads', 'engines'),
    defaultValue: () => 'auto', level: 'user',
    doc: "where channels make progress. inline: the main thread reads every channel; worker threads send on connections of their own. threads: one engine worker per channel reads it, so receives progress while every user thread computes; user threads send on connections of their own (no hand-off per message; a frame leaves when the sending thread's current microtask ends). engines: as threads, and user threads also hand every send to the engines (a send leaves even while its thread computes synchronously, at a cross-thread wake-up per message). auto: threads when threadLevel is 'multiple', else inline, and in a spawned process its parents' progress (an inline process and one with engines cannot connect). With --endpoints 2 or more (endpointReceive auto), in threads and inline a worker thread reads the endpoint it attaches to instead of the engine: no wake-up per message, but messages to that endpoint wait while its thread computes (set TSMPI_ENDPOINT_RECEIVE=engine, or use engines, to keep them progressing)",
    brief: "main thread or engine threads read the sockets (auto: threads at threadLevel 'multiple')",
  },
  {
    name: 'wait', env: 'TSMPI_WAIT', flag: '--wait', kind: oneOf('poll', 'block'),
    defaultValue: () => 'poll', level: 'user',
    doc: 'how a blocking call waits with --progress inline: poll turns the event loop without sleeping, yielding the core between turns (for up to waitPollMs), as C MPIs do; block sleeps until a socket wakes the thread',
    brief: 'how a blocking call waits in --progress inline: poll or sleep',
  },
  {
    name: 'waitPollMs', env: 'TSMPI_WAIT_POLL_MS', flag: null, kind: int(0, 60_000),
    // Long enough to cover a peer's preemption on a loaded machine (time slices are 3-6 ms), short enough not to burn a core through a long wait.
    defaultValue: () => 20, level: 'tuning',
    doc: 'with --wait poll: milliseconds a thread polls after a blocking call begins, or after it last served a one-sided request during the call, before it sleeps (on a host with more processes than cores it sleeps instead for as long after a rendezvous of 512 KiB or more begins); 0 never polls',
  },
  {
    name: 'threadPollMs', env: 'TSMPI_THREAD_POLL_MS', flag: null, kind: int(0, 60_000),
    // 0: on this 2-core machine under load (load average 20) polling threads cost 6-10x the CPU per message of sleeping ones (docs/adr/0015); idle machines may differ.
    defaultValue: () => 0, level: 'tuning',
    doc: 'with --progress threads and --wait poll: milliseconds user threads poll their completion ring after a blocking call begins, and channel engines their sockets after a frame, yielding the core between turns, before they sleep; 0 sleeps at once (a wake-up per batch)',
  },
  {
    name: 'endpointReceive', env: 'TSMPI_ENDPOINT_RECEIVE', flag: null, kind: oneOf('auto', 'engine', 'thread'),
    // auto: thread for --endpoints >= 2, measured on a quiet machine at 1.66x the engine path's rate at N=2 (docs/adr/0021).
    defaultValue: () => 'auto', level: 'tuning',
    doc: "who reads the messages for an endpoint that a worker thread attached to. engine: the channel's host (an engine in --progress threads, the main thread in inline) reads and matches them and completes the thread's receives through its completion ring (a cross-thread wake-up per message); they progress while the thread computes. thread: a worker thread that attaches (MPI.threadAttach) to an endpoint without a reader becomes its reader: it listens on a same-host socket of its own, the other processes' threads send their eager, synchronous and rendezvous-request frames for the endpoint there once they see its route open (in order across every switch), and it hands the endpoint back when it attaches elsewhere, when its event loop empties and at MPI.finalize, closing once every sender has left. The trade: while a reader computes, messages to its endpoint wait in its socket (as they wait for a single-threaded process that computes), a rendezvous send to it completes only once it runs, and its MPI.finalize waits for it; a reader thread that dies fails the job with ERR_PROC_FAILED. auto (the default): thread in a job with --endpoints 2 or more, engine otherwise. The engine path stays, whatever is asked, with --progress engines, in a single process and in a job on several hosts; each process of a job where thread was asked or chosen logs one info line saying which path applies",
  },
  {
    name: 'waitSpinTurns', env: 'TSMPI_WAIT_SPIN_TURNS', flag: null, kind: int(0, 1_000_000),
    // About one small-message round trip of turns (1-3 us each); UPC++ yields after about 10 empty progress calls (runtime/poll-policy.ts).
    defaultValue: () => 10, level: 'tuning',
    doc: 'with --wait poll, where every process of the host has a core: poll turns of a blocking call that do not yield the core (sched_yield) before every later turn does; on a host with more processes than cores every turn yields, and a blocking call sleeps after this many turns',
  },






  {
    name: 'eagerLimit', env: 'TSMPI_EAGER_LIMIT', flag: '--eager-limit', kind: int(0, MAX_EAGER_LIMIT_BYTES),
    // 64 KiB: below it one copy into the socket beats the extra round trip of rendezvous.
    defaultValue: () => 65536, level: 'tuning',
    doc: 'largest message (bytes) sent eagerly; larger messages use rendezvous (RTS/CTS/DATA). Every rank must use the same value (mpiexec passes it to all): a receiver refuses an eager frame above its own limit. Eager messages above 1 MiB from a thread that does not host their channel go by rendezvous all the same (they would not fit its 4 MiB injection ring)',
    brief: 'largest message sent at once (bytes); larger ones use rendezvous',
  },
  {
    name: 'endpoints', env: 'TSMPI_ENDPOINTS', flag: '--endpoints', kind: int(1, 1024),
    defaultValue: () => 1, level: 'user', doc: 'MPI endpoints per process (COMM_ENDPOINTS has P*J ranks). With 2 or more, a worker thread that attaches to an endpoint reads its messages itself (endpointReceive auto): they wait while that thread computes',
    brief: 'MPI endpoints per process (COMM_ENDPOINTS has P*N ranks)',
  },
  {
    name: 'logLevel', env: 'TSMPI_LOG_LEVEL', flag: '--log-level', kind: oneOf('silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'),
    defaultValue: () => 'warn', level: 'user', doc: 'per-rank logs on stderr, from this level up',
    brief: 'per-rank logs on stderr from this level up',
  },
  {
    name: 'logFormat', env: 'TSMPI_LOG_FORMAT', flag: '--log-format', kind: oneOf('text', 'json'),
    defaultValue: () => 'text', level: 'user', doc: 'text: one line per record for people (tsmpi: rank 1: warn: ...); json: pino NDJSON, for programs that read the logs',
    brief: 'text for people, json (pino NDJSON) for programs',
  },
  {
    name: 'ctxidAlgo', env: 'TSMPI_CTXID_ALGO', flag: null, kind: oneOf('new', 'original'),
    defaultValue: () => 'new', level: 'tuning',
    doc: 'context-id allocation: new (initial synchronization, deadlock-free) or original (Listing 1.1 of the context-id paper, without the barrier)',
  },
  {
    name: 'ctxidEager', env: 'TSMPI_CTXID_EAGER', flag: null, kind: int(0, 1),
    defaultValue: () => 1, level: 'tuning', doc: 'eager context-id allocation (Listing 1.2): 1 on, 0 off',
  },
  {
    name: 'requestSlots', env: 'TSMPI_REQUEST_SLOTS', flag: null, kind: int(64, 1 << 22),
    // Enough for 10,000 unexpected messages plus a deep pipeline of posted requests.
    defaultValue: () => 1 << 16, level: 'tuning', doc: 'request and unexpected-message slots per process (shared memory)',
  },
  {
    name: 'rankNodeFlags', env: 'TSMPI_RANK_NODE_FLAGS', flag: null, kind: { type: 'string' },
    // none: of --interrupt-budget=4096/16384 and --maglev, none made a short run cheaper as a whole (docs/PERFORMANCE.md 4.14).
    defaultValue: () => 'none', level: 'tuning',
    doc: "flags mpiexec puts on the node command line of every .ts/.js rank, space-separated, before the program: V8 flags such as --interrupt-budget=N, which NODE_OPTIONS cannot carry (--dry-run shows the command); 'none' for none. Only mpiexec reads it; on a host with more processes than cores it adds --single-threaded-gc by itself",
  },
  {
    // mpiexec --secure sets it (a flag without a value, so no flag in this table: options.ts); mpiexec's own environment may too.
    name: 'secure', env: 'TSMPI_SECURE', flag: null, kind: oneOf('off', 'on'),
    defaultValue: () => 'off', level: 'user',
    doc: 'on (mpiexec --secure): every TCP connection of the job (rank channels, the wire-up service, the per-host proxies) runs TLS 1.3 keyed by the job key, for jobs across a network others can watch (docs/SECURITY.md); same-host sockets stay plain. Every process of a job must agree: mpiexec hands it to all',
  },
  {
    // mpiexec --trace FILE sets it (its value is a file, so no flag in this table: options.ts).
    name: 'traceEvents', env: 'TSMPI_TRACE_EVENTS', flag: null, kind: int(0, MAX_TRACE_EVENTS),
    defaultValue: () => 0, level: 'tuning',
    doc: 'mpiexec --trace: calls (and as many message ends) each MPI thread records for the trace, dropping later ones; 0: no trace. mpiexec --trace sets 200000 unless given',
  },
  {
    name: 'transport', env: 'TSMPI_TRANSPORT', flag: null, kind: { type: 'string' },
    defaultValue: () => '@tsmpi/transport-tcp', level: 'tuning', doc: 'module that implements @tsmpi/core/transport; mpiexec sets the file URL of its own @tsmpi/transport-tcp unless given',
  },
];

export type Settings = {
  readonly channels: number;
  readonly matching: 'parallel' | 'global';
  readonly refcount: 'naive' | 'predefined' | 'gc';
  readonly progress: 'auto' | Progress;
  readonly wait: 'poll' | 'block';
  readonly waitPollMs: number;
  readonly threadPollMs: number;
  readonly endpointReceive: 'auto' | 'engine' | 'thread';
  readonly waitSpinTurns: number;
  readonly eagerLimit: number;
  readonly endpoints: number;
  readonly logLevel: 'silent' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  readonly logFormat: 'text' | 'json';
  readonly ctxidAlgo: 'new' | 'original';
  readonly ctxidEager: number;
  readonly requestSlots: number;
  readonly rankNodeFlags: string;
  readonly secure: 'off' | 'on';
  readonly traceEvents: number;
  readonly transport: string;
};

/** Parses one value against its row; returns an error text (naming the source) or the value. */
export function parseSetting(row: SettingRow, raw: string | number, source: string): number | string | Error {
  const k = row.kind;
  if (k.type === 'int') {
    const n = typeof raw === 'number' ? raw : Number(raw);
    if (!Number.isInteger(n) || n < k.min || n > k.max) {
      return new Error(`${source} ${row.name}=${raw} is invalid: expected an integer from ${k.min} to ${k.max}`);
    }
    return n;
  }
  if (k.type === 'enum') {
    const s = String(raw);
    if (!k.values.includes(s)) return new Error(`${source} ${row.name}=${raw} is invalid: expected one of ${k.values.join(', ')}`);
    return s;
  }
  return String(raw);
}

/**
 * explicit > environment > default, validated against the table. Throws a plain
 * Error naming the variable and the allowed values (init turns it into MPIError(ERR_ARG)).
 */
export function resolveSettings(explicit: Partial<Record<keyof Settings, string | number>> = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  const out: Record<string, number | string> = {};
  for (const row of SETTINGS) {
    const given = explicit[row.name as keyof Settings];
    const fromEnv = env[row.env];
    let value: number | string | Error;
    if (given !== undefined) value = parseSetting(row, given, 'option');
    else if (fromEnv !== undefined && fromEnv !== '') value = parseSetting(row, fromEnv, `environment ${row.env}:`);
    else value = row.defaultValue();
    if (value instanceof Error) throw value;
    out[row.name] = value;
  }
  return Object.freeze(out) as unknown as Settings;
}
