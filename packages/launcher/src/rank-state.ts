/**
 * One supervised rank as job.ts tracks it (spawned -> joined -> initialized ->
 * finalized -> exited -> closed), with the pure questions asked of it: how its
 * exit counts (classifyExit) and how its --output-dir files open and close.
 * Moved out of job.ts (issue 34) so that the supervisor holds only its decisions.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FinalizeReport } from '@tsmpi/core/pmi';
import { LineForwarder, type OutputSink } from './output-forwarder.ts';
import type { Placement } from './process-map.ts';
import type { RankLauncher } from './rank-launcher.ts';

export interface RankState {
  readonly rank: number;
  /** Where it runs; a placeholder is replaced by the Slurm node name once its proxy linked. */
  host: string;
  /** The backend that starts and signals it. */
  launcher: RankLauncher | null;
  pid: number | null;
  startedAt: number;
  endedAt: number | null;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  hasExited: boolean;
  isClosed: boolean;
  hasJoined: boolean;
  isInitialized: boolean;
  isFinalized: boolean;
  report: FinalizeReport | null;
  /** The process this rank reported losing its connection to, if any. */
  lostPeer: number | null;
  readonly out: LineForwarder;
  readonly err: LineForwarder;
  outFile: WriteStream | null;
  errFile: WriteStream | null;
  /** The end of its stderr (STDERR_TAIL_CHARS in job.ts), where Node prints an uncaught error. */
  errTail: string;
}

export function signalNumber(sig: NodeJS.Signals): number {
  return os.constants.signals[sig] ?? 0;
}

/**
 * A rank not yet started; its output lines go to the job's sinks.
 * @param prefix - what each output line starts with (--tag-output, --timestamp-output), or null
 */
/** `writeErr` gets the rank's stderr lines without the prefix (job.ts shows repeated stderr once: repeated-stderr.ts prefixes what it shows). */
export function newRankState(p: Placement, prefix: (() => string) | null, outSink: OutputSink, writeErr: (line: Buffer) => void): RankState {
  return {
    rank: p.rank, host: p.host, launcher: null, pid: null, startedAt: 0, endedAt: null,
    exitCode: null, signal: null, hasExited: false, isClosed: false, hasJoined: false, isInitialized: false,
    isFinalized: false, report: null, lostPeer: null,
    out: new LineForwarder((b) => outSink.write(b), prefix),
    err: new LineForwarder(writeErr, null),
    outFile: null, errFile: null, errTail: '',
  };
}

/**
 * How a rank's exit counts: null when it is not a failure (job.ts's file comment lists the rules).
 * @param ranks - every rank of the job (a rank leaving before MPI.init fails only while another joined)
 */
export function classifyExit(s: RankState, ranks: readonly RankState[]): { reason: string; status: number } | null {
  if (s.signal !== null) return { reason: `was killed by signal ${s.signal}`, status: 128 + signalNumber(s.signal) };
  if (s.exitCode !== null && s.exitCode !== 0) return { reason: `exited with code ${s.exitCode}`, status: s.exitCode };
  if (s.isFinalized) return null;
  if (s.isInitialized) return { reason: 'exited with code 0 without calling MPI.finalize', status: 1 };
  if (s.hasJoined) return { reason: 'exited with code 0 during MPI.init', status: 1 };
  if (ranks.some((r) => r.hasJoined)) return { reason: 'exited with code 0 before calling MPI.init, while other ranks did', status: 1 };
  return null;
}

/** --output-dir: a process's files are named by its process number in the job (rank.N.out, rank.N.err). */
export function openOutputFilesOf(s: RankState, dir: string): void {
  s.outFile = createWriteStream(path.join(dir, `rank.${s.rank}.out`));
  s.errFile = createWriteStream(path.join(dir, `rank.${s.rank}.err`));
  s.outFile.on('error', () => undefined);
  s.errFile.on('error', () => undefined);
}

export function closeFile(f: WriteStream | null): Promise<void> {
  if (f === null) return Promise.resolve();
  return new Promise((resolve) => f.end(() => resolve()));
}
