/**
 * mpiexec --dashboard's job-wide views, computed from the samples (pure; the
 * per-rank table is dashboard-state.ts): the rank × rank traffic matrix (the
 * bytes each process's sockets wrote to each other process, kept from the
 * changed entries the samples carry), the traffic per channel summed over the
 * job, the collectives in flight (which ranks are in which collective on which
 * communicator, and on COMM_WORLD who has not arrived), and who waits for whom
 * in point-to-point calls, with the wait-for cycles (a deadlock) among them.
 */
import type { BlockedIn, RankCounters } from '@tsmpi/core/pmi';
import type { RollCallAnswer } from './wireup-server.ts';

/** Largest job whose matrix a snapshot carries (its size is the square of this). */
export const MAX_MATRIX = 64;
/** Most collectives, wait edges and cycles a snapshot lists. */
export const MAX_LISTED = 64;

/** bytes[from][to]: what process `from`'s sockets wrote to process `to` so far. */
export interface TrafficMatrix {
  readonly size: number;
  readonly bytes: readonly (readonly number[])[];
}

export interface ChannelTraffic {
  readonly channel: number;
  readonly framesSent: number;
  readonly framesReceived: number;
}

export interface CollectiveInFlight {
  readonly comm: string;
  readonly call: string;
  /** ranks (in the job) in this call now */
  readonly arrived: readonly number[];
  /** on COMM_WORLD, the running ranks not in it (null: the communicator's members are not known here) */
  readonly missing: readonly number[] | null;
}

/** Rank `from` waits in `call` for rank `to` (a point-to-point call on COMM_WORLD that names its peer). */
export interface WaitEdge {
  readonly from: number;
  readonly to: number;
  readonly call: string;
}

export interface JobViews {
  /** null when the job has more than MAX_MATRIX processes */
  readonly matrix: TrafficMatrix | null;
  readonly channels: readonly ChannelTraffic[];
  readonly collectives: readonly CollectiveInFlight[];
  readonly waits: readonly WaitEdge[];
  /** each a list of ranks, every one waiting for the next and the last for the first */
  readonly cycles: readonly (readonly number[])[];
}

const COLLECTIVES = new Set([
  'barrier', 'bcast', 'reduce', 'allreduce', 'gather', 'gatherv', 'scatter', 'scatterv', 'allgather', 'allgatherv',
  'alltoall', 'alltoallv', 'alltoallw', 'scan', 'exscan', 'reduce_scatter', 'reduce_scatter_block', 'reducescatter',
  'reducescatterblock', 'neighbor_allgather', 'neighbor_alltoall', 'dup', 'split', 'split_type', 'create', 'create_group',
]);

/** Whether a roll-call's call name is a collective ("barrier", "Comm.Allreduce", "Ibcast"). */
export function isCollective(call: string): boolean {
  const name = call.slice(call.lastIndexOf('.') + 1).toLowerCase();
  return COLLECTIVES.has(name) || (name.startsWith('i') && COLLECTIVES.has(name.slice(1)));
}

/** Every call a rank's answer names: its main thread's (when in MPI) and its other threads'. */
function callsOf(b: BlockedIn): { call: string; comm: string; peer: number | null }[] {
  const out = b.call.startsWith('(') ? [] : [{ call: b.call, comm: b.comm, peer: b.peer }];
  for (const t of b.threads ?? []) out.push({ call: t.call, comm: t.comm, peer: t.peer });
  return out;
}

/** Keeps the traffic matrix and the per-channel counts from sample to sample. */
export class JobTraffic {
  readonly #rows = new Map<number, number[]>();
  readonly #channels = new Map<number, readonly { readonly sent: number; readonly received: number }[]>();

  /** Takes one rank's counters from a sample (its changed matrix entries, its channels). */
  add(rank: number, c: RankCounters, size: number): void {
    if (c.channels !== undefined) this.#channels.set(rank, c.channels);
    if (c.peerBytes === undefined || size > MAX_MATRIX || rank >= size) return;
    let row = this.#rows.get(rank);
    if (row === undefined) this.#rows.set(rank, (row = new Array<number>(size).fill(0)));
    for (const [to, bytes] of c.peerBytes) if (to < size) row[to] = bytes;
  }

  matrix(size: number): TrafficMatrix | null {
    if (size > MAX_MATRIX) return null;
    const bytes = Array.from({ length: size }, (_, r) => {
      const row = this.#rows.get(r);
      return Array.from({ length: size }, (_, c) => row?.[c] ?? 0);
    });
    return { size, bytes };
  }

  channels(): ChannelTraffic[] {
    const out: ChannelTraffic[] = [];
    for (const per of this.#channels.values()) {
      per.forEach((x, channel) => {
        const o = out[channel] ?? { channel, framesSent: 0, framesReceived: 0 };
        out[channel] = { channel, framesSent: o.framesSent + x.sent, framesReceived: o.framesReceived + x.received };
      });
    }
    return out.filter((x) => x !== undefined);
  }
}

/**
 * The collectives in flight and the wait-for graph of one sample.
 * @param running - the ranks that are running now (not ended): on COMM_WORLD, those not in a collective are missing from it
 */
export function callViews(answers: ReadonlyMap<number, RollCallAnswer>, running: readonly number[]): Pick<JobViews, 'collectives' | 'waits' | 'cycles'> {
  const byKey = new Map<string, { comm: string; call: string; arrived: number[] }>();
  const waits: WaitEdge[] = [];
  for (const [rank, a] of [...answers].sort((x, y) => x[0] - y[0])) {
    if (a.kind !== 'blocked') continue;
    for (const c of callsOf(a.blockedIn)) {
      if (isCollective(c.call)) {
        const key = `${c.comm}\u0000${c.call}`;
        const e = byKey.get(key) ?? { comm: c.comm, call: c.call, arrived: [] };
        if (!e.arrived.includes(rank)) e.arrived.push(rank);
        byKey.set(key, e);
      } else if (c.peer !== null && c.peer >= 0 && c.comm === 'COMM_WORLD' && c.peer !== rank) {
        waits.push({ from: rank, to: c.peer, call: c.call });
      }
    }
  }
  const collectives = [...byKey.values()].slice(0, MAX_LISTED).map((e) => ({
    ...e, missing: e.comm === 'COMM_WORLD' ? running.filter((r) => !e.arrived.includes(r)) : null,
  }));
  return { collectives, waits: waits.slice(0, MAX_LISTED), cycles: waitCycles(waits).slice(0, MAX_LISTED) };
}

/** The cycles of a wait-for graph, each once, starting at its smallest rank. */
export function waitCycles(edges: readonly WaitEdge[]): number[][] {
  const next = new Map<number, number[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const cycles = new Map<string, number[]>();
  // Depth-first from each rank along its edges; a path that returns to its start is a cycle.
  const walk = (start: number, at: number, path: number[]): void => {
    for (const to of next.get(at) ?? []) {
      if (to === start) {
        const min = Math.min(...path);
        const i = path.indexOf(min);
        const c = [...path.slice(i), ...path.slice(0, i)];
        cycles.set(c.join(','), c);
      } else if (to > start && !path.includes(to) && path.length < MAX_LISTED && cycles.size < MAX_LISTED) {
        walk(start, to, [...path, to]);
      }
    }
  };
  for (const start of [...next.keys()].sort((a, b) => a - b)) walk(start, start, [start]);
  return [...cycles.values()];
}
