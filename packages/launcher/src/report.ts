/**
 * The --report-json document: the job's outcome and, per rank, how it ended
 * and the message counts it reported at finalize.
 */
import { writeFile } from 'node:fs/promises';
import type { FinalizeReport } from '@tsmpi/core/pmi';

export interface RankReport {
  readonly rank: number;
  readonly host: string;
  readonly pid: number | null;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly durationMs: number | null;
  readonly initialized: boolean;
  readonly finalized: boolean;
  /** From reportFinalized; null when the rank did not finalize. */
  readonly messages: FinalizeReport | null;
}

export interface JobReport {
  readonly program: string;
  readonly args: readonly string[];
  readonly size: number;
  readonly exitStatus: number;
  readonly failure: { readonly rank: number | null; readonly reason: string } | null;
  readonly durationMs: number;
  readonly ranks: readonly RankReport[];
}

/** Writes the report as pretty JSON. */
export async function writeJobReport(file: string, report: JobReport): Promise<void> {
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

/** A supervised rank as the report shows it (job.ts's rank-state.ts RankState). */
export interface ReportedRank {
  readonly rank: number;
  readonly host: string;
  readonly pid: number | null;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly startedAt: number;
  readonly endedAt: number | null;
  readonly isInitialized: boolean;
  readonly isFinalized: boolean;
  readonly report: FinalizeReport | null;
}

/** Each rank's line of the report; durations from performance.now() marks. */
export function rankReports(ranks: readonly ReportedRank[]): RankReport[] {
  return ranks.map((s) => ({
    rank: s.rank,
    host: s.host,
    pid: s.pid,
    exitCode: s.exitCode,
    signal: s.signal,
    durationMs: s.endedAt === null ? null : Math.round(s.endedAt - s.startedAt),
    initialized: s.isInitialized,
    finalized: s.isFinalized,
    messages: s.report,
  }));
}
