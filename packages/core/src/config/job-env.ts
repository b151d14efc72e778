/**
 * The process's place in the job, as the launcher put it in the environment.
 * Absent TSMPI_PMI_URL means singleton init: a job of size 1 with no launcher.
 */
export const JOB_ENV = {
  rank: 'TSMPI_RANK',
  size: 'TSMPI_SIZE',
  localRank: 'TSMPI_LOCAL_RANK',
  localSize: 'TSMPI_LOCAL_SIZE',
  pmiUrl: 'TSMPI_PMI_URL',
  jobKey: 'TSMPI_JOB_KEY',
  host: 'TSMPI_HOST',
  listenHost: 'TSMPI_LISTEN_HOST',
  portRange: 'TSMPI_PORT_RANGE',
  /**
   * Dynamic processes (docs/adr/0040-dynamic-processes.md): the job's process numbers (UNIVERSE_SIZE).
   * Also read by mpiexec from its own environment: the user's request for spare slots.
   */
  universe: 'TSMPI_UNIVERSE',
  /** The first process number of this process's world (0 for the world mpiexec started). */
  worldFirst: 'TSMPI_WORLD_FIRST',
  /** In a spawned world: the spawn that started it (mpiexec's id), absent otherwise. */
  parentSpawn: 'TSMPI_PARENT_SPAWN',
  /** In a spawned world: this process's application number (spawnMultiple's command index). */
  appnum: 'TSMPI_APPNUM',
  /** In a spawned world: the progress its parents run (inline, threads or engines), which progress auto follows. */
  parentProgress: 'TSMPI_PARENT_PROGRESS',
  /**
   * Read by mpiexec only, from its own environment: tsmpi-nameserver's file, as `mpiexec --nameserver FILE`
   * (docs/adr/0046-name-server-between-jobs.md). Never passed to the ranks.
   */
  nameserver: 'TSMPI_NAMESERVER',
} as const;

/** A range of TCP ports, both ends included. */
export interface PortRange {
  readonly lo: number;
  readonly hi: number;
}

export interface JobEnv {
  readonly rank: number;
  readonly size: number;
  readonly localRank: number;
  /** Processes of the job on this host (this one included). */
  readonly localSize: number;
  /** tcp://host:port of the launcher's wire-up service (tls:// under mpiexec --secure: TLS keyed by the job; pmi/protocol.ts wireupUrl). */
  readonly pmiUrl: string;
  /** Per-job secret, hex. Proves membership to the wire-up service and to peers. */
  readonly jobKey: string;
  /** Address the transport listens on (loopback for single-host jobs). */
  readonly listenHost: string;
  /** Ports the transport may listen on (mpiexec --port-range); null: any free port. */
  readonly portRange?: PortRange | null;
  /**
   * Dynamic processes: the process numbers the job may ever use (its slots), at least `worldFirst + size`.
   * Every process's device is sized for them. Absent: worldFirst + size (no spawn).
   */
  readonly universe?: number;
  /** The first process number of this process's world: its process number is worldFirst + rank. Absent: 0. */
  readonly worldFirst?: number;
  /** In a spawned world, the id of the spawn that started it; absent in the world mpiexec started. */
  readonly parentSpawn?: number;
  /** spawnMultiple's command index of this process (MPI APPNUM); absent: 0. */
  readonly appnum?: number;
  /**
   * In a spawned world, the progress of the processes that spawned it: an inline process and one with
   * channel engines publish their addresses differently and cannot dial each other (runtime/peer-address.ts).
   */
  readonly parentProgress?: Progress;
}

/** How a process reads its channels, once `auto` is resolved (the setting `progress`). */
export type Progress = 'inline' | 'threads' | 'engines';

/** Whether `x` names a resolved progress (what a spawn request and TSMPI_PARENT_PROGRESS carry). */
export function isProgress(x: unknown): x is Progress {
  return x === 'inline' || x === 'threads' || x === 'engines';
}

/** This process's number in the job: its endpoints are the device's process number `processOf(job)`. */
export function processOf(job: JobEnv | null): number {
  return job === null ? 0 : (job.worldFirst ?? 0) + job.rank;
}

/** The job's process numbers (the device's process count): the universe, never fewer than this world's end. */
export function universeOf(job: JobEnv | null): number {
  if (job === null) return 1;
  const end = (job.worldFirst ?? 0) + job.size;
  return Math.max(end, job.universe ?? end);
}

/** A non-negative integer from the environment, or undefined when absent or malformed. */
function optionalCount(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,9}$/.test(text)) return undefined;
  return Number(text);
}

/** Parses "LO-HI" (1 <= LO <= HI <= 65535); null when malformed. */
export function parsePortRange(text: string): PortRange | null {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (m === null) return null;
  const lo = Number(m[1]);
  const hi = Number(m[2]);
  return lo >= 1 && hi <= 65535 && lo <= hi ? { lo, hi } : null;
}

/** The job environment, or null for a singleton (run without mpiexec). */
export function readJobEnv(env: NodeJS.ProcessEnv = process.env): JobEnv | null {
  const url = env[JOB_ENV.pmiUrl];
  if (url === undefined || url === '') return null;
  return {
    rank: Number(env[JOB_ENV.rank] ?? 0),
    size: Number(env[JOB_ENV.size] ?? 1),
    localRank: Number(env[JOB_ENV.localRank] ?? 0),
    // A launcher that does not say (an older mpiexec): assume every process is here.
    localSize: Number(env[JOB_ENV.localSize] ?? env[JOB_ENV.size] ?? 1),
    pmiUrl: url,
    jobKey: env[JOB_ENV.jobKey] ?? '',
    listenHost: env[JOB_ENV.listenHost] ?? '127.0.0.1',
    portRange: parsePortRange(env[JOB_ENV.portRange] ?? ''),
    ...withCount('universe', env[JOB_ENV.universe]),
    ...withCount('worldFirst', env[JOB_ENV.worldFirst]),
    ...withCount('parentSpawn', env[JOB_ENV.parentSpawn]),
    ...withCount('appnum', env[JOB_ENV.appnum]),
    ...withProgress(env[JOB_ENV.parentProgress]),
  };
}

function withProgress(text: string | undefined): { parentProgress?: Progress } {
  return isProgress(text) ? { parentProgress: text } : {};
}

function withCount<K extends string>(key: K, text: string | undefined): { [k in K]?: number } {
  const n = optionalCount(text);
  return (n === undefined ? {} : { [key]: n }) as { [k in K]?: number };
}

/**
 * The job environment, read once at init: the job key is then removed from
 * `env`, so that it lives only in this process's memory and no process this
 * rank starts (child_process inherits process.env) learns it.
 */
export function takeJobEnv(env: NodeJS.ProcessEnv = process.env): JobEnv | null {
  const job = readJobEnv(env);
  delete env[JOB_ENV.jobKey];
  // A process this rank starts is not a member of its world (a spawned one gets its own from mpiexec).
  delete env[JOB_ENV.parentSpawn];
  return job;
}

/**
 * What tells this process's host apart from the job's other hosts (COMM_TYPE_SHARED groups by it).
 * The host name alone is not enough: several machines may share one (issue 11 section 3). In a
 * multi-host job each rank listens on its own host's address, chosen from its link to mpiexec and
 * never loopback, so name and listen address together differ between hosts and agree within one.
 */
export function hostLabel(hostname: string, env: NodeJS.ProcessEnv = process.env): string {
  return `${hostname}@${env[JOB_ENV.listenHost] ?? ''}`;
}
