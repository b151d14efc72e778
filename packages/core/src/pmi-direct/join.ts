/**
 * Direct launch (docs/adr/0035-pmi-direct-launch.md): a process started by a
 * foreign launcher that speaks PMI joins its job here. Which launcher: PMI_FD
 * with PMI_JOBID is Slurm's `srun --mpi=pmi2` (PMI-2); PMI_FD (or PMI_PORT)
 * without it is PMI-1 (MPICH's Hydra, Flux). The process then learns its rank,
 * size and node layout from the launcher, agrees on the job key (rank 0 makes
 * it and puts it in the launcher's key/value space: one fence), and hands back
 * the JobEnv and wire-up client that runtime/bootstrap.ts would get from
 * tsmpi's own mpiexec, and the transport module mpiexec would have named
 * (transport-module.ts).
 *
 * The PMI variables leave process.env here (as the job key does under
 * mpiexec): a child this rank starts must not talk to the launcher on a
 * descriptor it does not own.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { JOB_ENV, parsePortRange, type JobEnv } from '../config/index.ts';
import type { PmiClient } from '../pmi/index.ts';
import { ERR_OTHER, mpiError } from '../util/index.ts';
import { DirectPmiClient, type PmiDialect, type PmiIdentity } from './direct-client.ts';
import type { PmiEndpoint } from './pmi-connection.ts';
import { localPlace, parseProcessMapping } from './process-mapping.ts';
import { resolveDirectTransport } from './transport-module.ts';

/** Which PMI the environment offers, or null when no PMI launcher started this process. */
export interface PmiLaunch {
  readonly version: 1 | 2;
  readonly endpoint: PmiEndpoint;
  readonly rank: number;
  readonly size: number;
  readonly jobId: string;
  readonly pmiId: string | null;
}

/** Reads the PMI variables (pure); null without PMI_FD and PMI_PORT. */
export function detectPmiLaunch(env: NodeJS.ProcessEnv): PmiLaunch | null {
  const fdText = env['PMI_FD'];
  const portText = env['PMI_PORT'];
  if ((fdText === undefined || fdText === '') && (portText === undefined || portText === '')) return null;
  const rank = Number(env['PMI_RANK'] ?? 0);
  const size = Number(env['PMI_SIZE'] ?? 1);
  let endpoint: PmiEndpoint;
  if (fdText !== undefined && fdText !== '') {
    if (!/^\d{1,9}$/.test(fdText)) throw mpiError(ERR_OTHER, 'init', `PMI_FD=${fdText} is not a file descriptor number`);
    endpoint = { fd: Number(fdText) };
  } else {
    const m = /^(.+):(\d{1,5})$/.exec(portText!);
    const port = m === null ? 0 : Number(m[2]);
    if (m === null || port < 1 || port > 65535) throw mpiError(ERR_OTHER, 'init', `PMI_PORT=${portText} is not host:port`);
    endpoint = { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
  }
  const jobId = env['PMI_JOBID'] ?? '';
  // Slurm's pmi2 plugin sets PMI_JOBID; Hydra's and Flux's PMI-1 do not.
  const version = jobId !== '' && 'fd' in endpoint ? 2 : 1;
  return { version, endpoint, rank, size, jobId, pmiId: env['PMI_ID'] ?? null };
}

/** Removes the PMI variables from `env` (children of this rank do not inherit them). */
function forgetPmiEnv(env: NodeJS.ProcessEnv): void {
  for (const name of ['PMI_FD', 'PMI_PORT', 'PMI_ID']) delete env[name];
}

/**
 * Joins the job the PMI launcher started: init, the node layout, the job key.
 * @throws MPIError(ERR_OTHER) when the launcher cannot be reached or answers something unusable
 */
export async function joinByPmi(launch: PmiLaunch, env: NodeJS.ProcessEnv = process.env): Promise<{ job: JobEnv; pmi: PmiClient; transport: string | null }> {
  forgetPmiEnv(env);
  let dialect: PmiDialect;
  let id: PmiIdentity;
  if (launch.version === 2) {
    const { Pmi2Dialect } = await import('./pmi2-client.ts');
    const d = await Pmi2Dialect.open(launch.endpoint);
    dialect = d;
    id = await d.init({ rank: launch.rank, jobId: launch.jobId });
  } else {
    const { Pmi1Dialect } = await import('./pmi1-client.ts');
    const d = await Pmi1Dialect.open(launch.endpoint);
    dialect = d;
    id = await d.init({ rank: launch.rank, size: launch.size, pmiId: launch.pmiId });
  }
  if (!Number.isInteger(id.size) || id.size < 1 || !Number.isInteger(id.rank) || id.rank < 0 || id.rank >= id.size) {
    throw mpiError(ERR_OTHER, 'init', `the PMI-${launch.version} server gave rank ${id.rank} of size ${id.size}`);
  }
  const pmi = new DirectPmiClient(id.rank, id.size, dialect);
  const nodeOf = id.mapping === null ? null : parseProcessMapping(id.mapping, id.size);
  // Without a mapping every rank is taken to be on this host, as tsmpi's mpiexec assumes of an older launcher.
  const place = nodeOf === null ? { localRank: id.rank, localSize: id.size, nodes: 1 } : localPlace(nodeOf, id.rank);
  const jobKey = await agreeJobKey(pmi);
  const job: JobEnv = {
    rank: id.rank,
    size: id.size,
    localRank: place.localRank,
    localSize: place.localSize,
    pmiUrl: `pmi-${launch.version}`,
    jobKey,
    listenHost: listenHost(env, place.nodes),
    portRange: parsePortRange(env[JOB_ENV.portRange] ?? ''),
  };
  return { job, pmi, transport: resolveDirectTransport(env, process.argv[1]) };
}

/**
 * The job key (docs/adr/0035-pmi-direct-launch.md): rank 0 makes 32 random bytes and puts them in the launcher's
 * key/value space; after the fence every rank reads them. The space is reached only through
 * each process's own PMI connection (an inherited socket under PMI_FD), so only the job's
 * processes (and the launcher, and root) learn the key.
 */
async function agreeJobKey(pmi: PmiClient): Promise<string> {
  if (pmi.size === 1) return randomBytes(32).toString('hex');
  const mine = pmi.rank === 0 ? randomBytes(32).toString('hex') : null;
  if (mine !== null) pmi.put('job-key', mine);
  await pmi.fence();
  const key = mine ?? (await pmi.get('job-key'));
  if (!/^[0-9a-f]{64}$/.test(key)) throw mpiError(ERR_OTHER, 'init', 'the job key in the PMI key/value space is not one rank 0 made');
  return key;
}

/**
 * Where this rank listens: TSMPI_LISTEN_HOST when set; loopback when the whole job is on this
 * host; else this host's first non-loopback IPv4 address (a namespace or pod has one).
 */
function listenHost(env: NodeJS.ProcessEnv, nodes: number): string {
  const asked = env[JOB_ENV.listenHost];
  if (asked !== undefined && asked !== '') return asked;
  if (nodes <= 1) return '127.0.0.1';
  for (const infos of Object.values(os.networkInterfaces())) {
    for (const info of infos ?? []) if (info.family === 'IPv4' && !info.internal) return info.address;
  }
  throw mpiError(ERR_OTHER, 'init', 'the job spans several hosts but this host has no non-loopback IPv4 address to listen on (set TSMPI_LISTEN_HOST)');
}
