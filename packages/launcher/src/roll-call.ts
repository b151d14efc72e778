/**
 * Text of the --timeout roll-call: one line per rank saying what it is
 * blocked in, as reported by its PMI client's roll-call handler.
 */
import type { BlockedIn } from '@tsmpi/core/pmi';
import type { RollCallAnswer } from './wireup-server.ts';

/** "recv (comm COMM_WORLD, peer 2, tag 42)". */
export function describeBlockedIn(b: BlockedIn): string {
  const one = (x: { call: string; comm: string; peer: number | null; tag: number | null }): string => {
    const parts = x.comm === '' ? [] : [`comm ${x.comm}`];
    // -1 is MPI's ANY_SOURCE / ANY_TAG (API.md constants).
    if (x.peer !== null) parts.push(`peer ${x.peer === -1 ? 'ANY_SOURCE' : x.peer}`);
    if (x.tag !== null) parts.push(`tag ${x.tag === -1 ? 'ANY_TAG' : x.tag}`);
    return parts.length === 0 ? x.call : `${x.call} (${parts.join(', ')})`;
  };
  const main = `blocked in ${one(b)}`;
  if (b.threads === undefined || b.threads.length === 0) return main;
  return `${main}; ${b.threads.map((t) => `thread ${t.thread} blocked in ${one(t)}`).join('; ')}`;
}

/** One rank's state at roll-call time. */
export interface RollCallRank {
  readonly rank: number;
  readonly host: string;
  readonly pid: number | null;
  /** Set when the process already ended: "exited with code 0". */
  readonly ended: string | null;
}

/** A supervised rank (job.ts) as the roll-call shows it. */
export function rollCallRank(s: { readonly rank: number; readonly host: string; readonly pid: number | null; readonly hasExited: boolean; readonly signal: NodeJS.Signals | null; readonly exitCode: number | null }): RollCallRank {
  const ended = !s.hasExited ? null : s.signal !== null ? `ended (killed by signal ${s.signal})` : `ended (exit code ${s.exitCode ?? '?'})`;
  return { rank: s.rank, host: s.host, pid: s.pid, ended };
}

/** The roll-call lines, without trailing newlines. */
export function rollCallLines(ranks: readonly RollCallRank[], answers: ReadonlyMap<number, RollCallAnswer>): string[] {
  return ranks.map((r) => {
    const who = `rank ${r.rank} (host ${r.host}, pid ${r.pid ?? '-'})`;
    let what: string;
    if (r.ended !== null) what = r.ended;
    else {
      const a = answers.get(r.rank) ?? { kind: 'noAnswer' };
      if (a.kind === 'blocked') what = describeBlockedIn(a.blockedIn);
      else if (a.kind === 'notInMpi') what = 'not in MPI';
      else what = 'no answer (busy outside MPI or not connected)';
    }
    return `mpiexec:   ${who}: ${what}`;
  });
}
