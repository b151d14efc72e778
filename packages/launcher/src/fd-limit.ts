/**
 * Whether mpiexec has enough open files for the job: each rank forked here
 * holds three descriptors in mpiexec for the whole job (its stdout and stderr,
 * its wire-up link), each other host a few (ssh's pipes, the proxy's link),
 * on top of mpiexec's own. Past the soft limit (ulimit -n) a rank's link is
 * refused and the job dies with an error far from its cause, so mpiexec
 * refuses such a job first, naming the limit (issue 38). The ranks' own needs
 * depend on whom they talk to (channels open on first use), so they are not
 * judged here. The limit comes from /proc/self/limits (Linux); elsewhere
 * nothing is checked. Node raises its own soft limit to the hard limit when
 * it starts, so what stops a job is in practice the hard limit (ulimit -Hn).
 * Pure apart from reading that file.
 */
import { readFileSync } from 'node:fs';

/** Descriptors of mpiexec itself: node's own, the wire-up service, its output, a margin. */
const BASE_FDS = 32;
/** Per rank forked here: stdout, stderr, the wire-up link (measured: 3). */
const FDS_PER_LOCAL_RANK = 3;
/** Per other host: ssh's stdin, stdout, stderr and the proxy's link. */
const FDS_PER_REMOTE_HOST = 4;

/** The open-file limits of this process, or null where they cannot be read. */
export interface FileLimit {
  readonly soft: number;
  /** null: unlimited. */
  readonly hard: number | null;
}

/** Parses the "Max open files" line of /proc/self/limits; null when absent or unlimited. */
export function parseFileLimit(limitsText: string): FileLimit | null {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limitsText);
  if (m === null || m[1] === 'unlimited') return null;
  const soft = Number(m[1]);
  if (!Number.isFinite(soft)) return null;
  return { soft, hard: m[2] === 'unlimited' ? null : Number(m[2]) };
}

/** This process's open-file limit (Linux), or null. */
export function readFileLimit(): FileLimit | null {
  try {
    return parseFileLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return null;
  }
}

/** Descriptors mpiexec holds during a job with `localRanks` ranks here and `remoteHosts` other hosts. */
export function fdsNeeded(localRanks: number, remoteHosts: number): number {
  return BASE_FDS + FDS_PER_LOCAL_RANK * localRanks + FDS_PER_REMOTE_HOST * remoteHosts;
}

/**
 * @returns null when the job fits in `limit`, else one line (without "mpiexec: ") naming the limit and the way out
 */
export function fileLimitProblem(localRanks: number, remoteHosts: number, limit: FileLimit | null): string | null {
  if (limit === null) return null;
  const need = fdsNeeded(localRanks, remoteHosts);
  if (need <= limit.soft) return null;
  // Node raises its soft limit to the hard one at start-up, so a low soft limit alone is rarely what stops it.
  const raise = limit.hard === null || limit.hard >= need ? `raise it (ulimit -n ${need})` : `that is the hard limit (ulimit -Hn): have it raised (limits.conf, LimitNOFILE for a service, the container's nofile) or place fewer ranks on this host`;
  return `${localRanks} ranks on this host need about ${need} open files in mpiexec, but its limit of open files is ${limit.soft}; ${raise}`;
}
