/**
 * The lines that end a failed job, as Open MPI and Hydra end theirs: one line for
 * the ranks stopped because of the failure (and the ranks that failed on their
 * own), then the failure itself, naming the error the rank printed and where in
 * the user's code, last. Pure: job.ts writes them once every rank ended.
 * Moved out of job.ts (issue 34).
 */
import { failureCause } from './failure-cause.ts';
import type { RankState } from './rank-state.ts';

/** The rank job.ts blamed for the failure, and its line. */
export interface BlamedRank {
  readonly s: RankState;
  readonly text: string;
  readonly reason: string;
  /** The line names the error the rank printed (failure-cause.ts). */
  readonly withCause: boolean;
  /** How the summary line says why the other ranks stopped. */
  readonly stoppedBecause: string;
}

/**
 * @param b - the blamed rank, null when the job did not fail (only repeated stderr is then said)
 * @param ranks - every rank of the job, ended
 * @param cwd - the job's working directory (the cause's place is shown relative to it)
 * @param repeated - ranks whose stderr was dropped as a copy of another's (rank -> rank shown; repeated-stderr.ts)
 * @returns the lines, each ending in a newline
 */
export function failureLines(b: BlamedRank | null, ranks: readonly RankState[], cwd: string, repeated: ReadonlyMap<number, number> = new Map()): string[] {
  if (b === null) return repeatedLines(repeated, []);
  const { s } = b;
  const cause = b.withCause ? failureCause(s.errTail, cwd) : null;
  const ended = ranks.filter((r) => r !== s && r.pid !== null && !(r.isFinalized && r.exitCode === 0 && r.signal === null));
  // A rank that exited with an error of its own (every rank hit the same bug, or both sides of a
  // mismatch saw it) is not one stopped because of the failure: its error is above, like the blamed one's.
  const ownCause = new Map(ended.map((r) => [r, r.exitCode !== null && r.exitCode !== 0 ? failureCause(r.errTail, cwd) : null]));
  const same = ended.filter((r) => ownCause.get(r) !== null && ownCause.get(r) === cause).map((r) => r.rank);
  const other = ended.filter((r) => ownCause.get(r) !== null && ownCause.get(r) !== cause);
  const stopped = ended.filter((r) => ownCause.get(r) === null).map((r) => r.rank);
  // Those whose identical output was dropped are said here; the blamed rank's line and "failed the same way" cover theirs.
  const lines = repeatedLines(repeated, [s.rank, ...same]);
  if (stopped.length > 0) lines.push(`mpiexec: rank${stopped.length === 1 ? '' : 's'} ${stopped.join(', ')} stopped (${b.stoppedBecause})\n`);
  for (const r of other) lines.push(`mpiexec: rank ${r.rank} failed too: ${ownCause.get(r)!}\n`);
  if (same.length > 0) lines.push(`mpiexec: rank${same.length === 1 ? '' : 's'} ${same.join(', ')} failed the same way\n`);
  const text = cause !== null && b.text.startsWith(b.reason) ? `${b.reason}: ${cause}${b.text.slice(b.reason.length)}` : b.text;
  lines.push(`mpiexec: rank ${s.rank} (host ${s.host}, pid ${s.pid ?? '-'}) ${text}\n`);
  return lines;
}

/** One line per shown stderr whose copies, from ranks not in `said`, were dropped. */
function repeatedLines(repeated: ReadonlyMap<number, number>, said: readonly number[]): string[] {
  const byShown = new Map<number, number[]>();
  for (const [r, shown] of repeated) if (!said.includes(r)) byShown.set(shown, [...(byShown.get(shown) ?? []), r]);
  return [...byShown].map(([shown, rs]) => `mpiexec: rank${rs.length === 1 ? '' : 's'} ${rs.join(', ')} printed the same error output as rank ${shown} (shown once; --output-dir keeps every copy)\n`);
}
