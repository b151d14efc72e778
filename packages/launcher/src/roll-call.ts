/**
 * Text of the --timeout roll-call: one line per rank saying what it is
 * blocked in, as reported by its PMI client's roll-call handler.
 */
import type { BlockedIn } from '@tsmpi/core/pmi';
import type { RollCallAnswer } from './wireup-server.ts';

/** "recv (comm COMM_WORLD, peer 2, tag 42)". */
export function describeBlockedIn(b: BlockedIn): string {
  const parts = [`comm ${b.comm}`];
  // -1 is MPI's ANY_SOURCE / ANY_TAG (API.md constants).
  if (b.peer !== null) parts.push(`peer ${b.peer === -1 ? 'ANY_SOURCE' : b.peer}`);
  if (b.tag !== null) parts.push(`tag ${b.tag === -1 ? 'ANY_TAG' : b.tag}`);
  return `blocked in ${b.call} (${parts.join(', ')})`;
}

/** One rank's state at roll-call time. */
export interface RollCallRank {
  readonly rank: number;
  readonly host: string;
  readonly pid: number | null;
  /** Set when the process already ended: "exited with code 0". */
  readonly ended: string | null;
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
