/**
 * What mpiexec --dashboard's page shows, computed from the job's rank table
 * and one sample (a roll-call that asked for counters: wireup-server.ts):
 * per rank its state (starting, in an MPI call, computing, finalized, ended,
 * failed), the call each of its MPI threads is in, its counters and their
 * rates over the last second. Pure: the sampler (dashboard.ts) feeds it.
 *
 * One snapshot is one WebSocket message of JSON (encodeSnapshot), bounded:
 * at most MAX_RANKS ranks and MAX_THREADS threads per rank (the rest are
 * counted), every string cut to MAX_TEXT characters.
 */
import type { BlockedIn, RankCounters } from '@tsmpi/core/pmi';
import { callViews, JobTraffic, type JobViews } from './dashboard-views.ts';
import type { RollCallAnswer } from './wireup-server.ts';

/** Version of the snapshot format (the page checks it). */
export const SNAPSHOT_VERSION = 1;
/** Ranks shown in one snapshot; a bigger job's others are counted in moreRanks. */
export const MAX_RANKS = 1024;
/** Threads shown per rank; others are counted in moreThreads. */
export const MAX_THREADS = 64;
/** Longest string in a snapshot. */
export const MAX_TEXT = 96;
/** Rates are measured over this window. */
export const RATE_WINDOW_MS = 1000;

/** A rank as the job (job.ts) knows it. */
export interface DashboardRank {
  readonly rank: number;
  readonly host: string;
  readonly pid: number | null;
  readonly hasJoined: boolean;
  readonly isInitialized: boolean;
  readonly isFinalized: boolean;
  readonly hasExited: boolean;
  readonly exitCode: number | null;
  readonly signal: string | null;
}

export type RankStateName = 'starting' | 'in MPI' | 'computing' | 'finalized' | 'ended' | 'failed';

/** One MPI thread's call: its text ("Comm.recv (comm COMM_WORLD, peer 1, tag 7)") and the peer it waits for. */
export interface ThreadView {
  /** 'main', or the Node thread id of an MPI.Worker thread */
  readonly thread: string;
  readonly call: string;
  readonly peer: number | null;
}

export interface Rates {
  readonly messagesSent: number;
  readonly messagesReceived: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
}

export interface RankView {
  readonly rank: number;
  readonly host: string;
  readonly pid: number | null;
  readonly state: RankStateName;
  /** what the state means here: "no answer (busy outside MPI's event loop)", "exit code 3"... */
  readonly detail: string;
  /** the threads in an MPI call, main first */
  readonly threads: readonly ThreadView[];
  readonly moreThreads: number;
  readonly counters: RankCounters | null;
  /** per second over the last RATE_WINDOW_MS, null until two samples */
  readonly rates: Rates | null;
}

export interface Snapshot {
  readonly v: number;
  /** mpiexec's clock, ms since the epoch */
  readonly timeMs: number;
  readonly size: number;
  readonly ranks: readonly RankView[];
  readonly moreRanks: number;
  /** the job-wide views: traffic matrix, channels, collectives in flight, who waits for whom (dashboard-views.ts) */
  readonly views: JobViews;
}

function cut(s: string): string {
  return s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT - 1)}…`;
}

type OneCall = { readonly call: string; readonly comm: string; readonly peer: number | null; readonly tag: number | null };

/** "Comm.recv (comm COMM_WORLD, peer 1, tag 7)"; -1 is ANY_SOURCE / ANY_TAG. */
export function callText(x: OneCall): string {
  const parts = x.comm === '' ? [] : [`comm ${x.comm}`];
  if (x.peer !== null) parts.push(`peer ${x.peer === -1 ? 'ANY_SOURCE' : x.peer}`);
  if (x.tag !== null) parts.push(`tag ${x.tag === -1 ? 'ANY_TAG' : x.tag}`);
  return cut(parts.length === 0 ? x.call : `${x.call} (${parts.join(', ')})`);
}

function threadViews(b: BlockedIn): { threads: ThreadView[]; more: number } {
  const threads: ThreadView[] = [];
  // A worker thread blocked while the main thread is not: the roll-call names the main thread's row so.
  if (!b.call.startsWith('(')) threads.push({ thread: 'main', call: callText(b), peer: b.peer !== null && b.peer >= 0 ? b.peer : null });
  const others = b.threads ?? [];
  const room = MAX_THREADS - threads.length;
  for (const t of others.slice(0, room)) threads.push({ thread: String(t.thread), call: callText(t), peer: t.peer !== null && t.peer >= 0 ? t.peer : null });
  return { threads, more: Math.max(0, others.length - room) };
}

function stateOf(r: DashboardRank, a: RollCallAnswer | undefined): { state: RankStateName; detail: string } {
  if (r.hasExited) {
    if (r.signal !== null) return { state: 'failed', detail: `killed by signal ${r.signal}` };
    if (r.exitCode !== null && r.exitCode !== 0) return { state: 'failed', detail: `exit code ${r.exitCode}` };
    return r.isFinalized ? { state: 'finalized', detail: 'exited' } : { state: 'ended', detail: `exit code ${r.exitCode ?? '?'}` };
  }
  if (r.isFinalized) return { state: 'finalized', detail: '' };
  if (!r.isInitialized) return { state: 'starting', detail: r.hasJoined ? 'in MPI.init' : r.pid === null ? 'not started' : 'loading' };
  if (a === undefined || a.kind === 'noAnswer') return { state: 'computing', detail: 'no answer: busy outside MPI' };
  if (a.kind === 'notInMpi') return { state: 'computing', detail: 'not in an MPI call' };
  return { state: 'in MPI', detail: '' };
}

function withoutPeerBytes(c: RankCounters): RankCounters {
  const { peerBytes: _, ...rest } = c;
  return rest;
}

interface Point {
  readonly timeMs: number;
  readonly c: RankCounters;
}

/** Turns samples into snapshots; keeps each rank's counters of the last second for its rates. */
export class DashboardState {
  readonly #history = new Map<number, Point[]>();
  /** The last counters a rank reported (a rank that finalized reports none, and keeps these). */
  readonly #last = new Map<number, RankCounters>();
  readonly #traffic = new JobTraffic();

  /**
   * @param ranks - the job's ranks now
   * @param answers - the sample's answers by rank (empty: no sample, e.g. no rank connected yet)
   * @param timeMs - when the sample was taken (ms)
   */
  update(ranks: readonly DashboardRank[], answers: ReadonlyMap<number, RollCallAnswer>, timeMs: number): Snapshot {
    const views: RankView[] = [];
    for (const r of ranks.slice(0, MAX_RANKS)) {
      const a = answers.get(r.rank);
      const { state, detail } = stateOf(r, a);
      const sampled = a !== undefined && a.kind !== 'noAnswer' && a.counters !== undefined ? a.counters : null;
      if (sampled !== null) this.#traffic.add(r.rank, sampled, ranks.length);
      // The matrix's entries live in the views; a rank's row keeps its totals and channels.
      const counters = sampled === null ? null : withoutPeerBytes(sampled);
      if (counters !== null) this.#last.set(r.rank, counters);
      const { threads, more } = state === 'in MPI' && a?.kind === 'blocked' ? threadViews(a.blockedIn) : { threads: [], more: 0 };
      views.push({
        rank: r.rank, host: cut(r.host), pid: r.pid, state, detail: cut(detail), threads, moreThreads: more,
        counters: this.#last.get(r.rank) ?? null,
        rates: this.#rates(r.rank, counters, timeMs),
      });
    }
    const running = ranks.filter((r) => !r.hasExited && !r.isFinalized).map((r) => r.rank);
    const jobViews: JobViews = { matrix: this.#traffic.matrix(ranks.length), channels: this.#traffic.channels(), ...callViews(answers, running) };
    return { v: SNAPSHOT_VERSION, timeMs, size: ranks.length, ranks: views, moreRanks: Math.max(0, ranks.length - MAX_RANKS), views: jobViews };
  }

  #rates(rank: number, c: RankCounters | null, timeMs: number): Rates | null {
    const h = this.#history.get(rank) ?? [];
    if (c !== null) h.push({ timeMs, c });
    // Keep the newest point at least RATE_WINDOW_MS old (the window's start) and everything after it.
    while (h.length > 2 && h[1]!.timeMs <= timeMs - RATE_WINDOW_MS) h.shift();
    this.#history.set(rank, h);
    if (c === null || h.length < 2) return null;
    const first = h[0]!;
    const dt = (timeMs - first.timeMs) / 1000;
    if (dt <= 0) return null;
    const per = (k: keyof Rates): number => Math.max(0, (c[k] - first.c[k]) / dt);
    return { messagesSent: per('messagesSent'), messagesReceived: per('messagesReceived'), bytesSent: per('bytesSent'), bytesReceived: per('bytesReceived') };
  }
}

/** The snapshot as one WebSocket text message. */
export function encodeSnapshot(s: Snapshot): string {
  return JSON.stringify(s);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses a snapshot (the page's reading of it, for tests and tools); null when malformed or of another version. */
export function decodeSnapshot(text: string): Snapshot | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObj(v) || v['v'] !== SNAPSHOT_VERSION || typeof v['timeMs'] !== 'number' || typeof v['size'] !== 'number' || !Array.isArray(v['ranks'])) return null;
  for (const r of v['ranks'] as unknown[]) {
    if (!isObj(r) || typeof r['rank'] !== 'number' || typeof r['state'] !== 'string' || !Array.isArray(r['threads'])) return null;
    for (const t of r['threads'] as unknown[]) if (!isObj(t) || typeof t['thread'] !== 'string' || typeof t['call'] !== 'string') return null;
  }
  return v as unknown as Snapshot;
}
