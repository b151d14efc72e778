/**
 * Test helper: what the --trace tests check of a trace file written for fixtures/trace-rank.ts (a
 * ring, ANY_SOURCE receives at rank 0, a barrier), shared by one host (trace.it.test.ts; sliceAt by trace-threads.it.test.ts too), hosts of
 * a namespace cluster (trace-multihost.it.test.ts) and Slurm nodes (slurm-trace.it.test.ts):
 *
 *   const doc = readTrace(file);                 // parses as Chrome trace JSON
 *   expectEveryRank(doc, np, hosts);             // every rank traced, named with its host
 *   const arrows = expectTraceRankArrows(doc.traceEvents, np);
 *   expectArrowsForward(arrows, 1000);           // no receive ends before its send began
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/** A Chrome trace event as mpiexec writes it (trace-file.ts). */
export interface TraceEvent {
  readonly name: string;
  readonly ph: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts?: number;
  readonly dur?: number;
  readonly id?: number;
  readonly bp?: string;
  readonly args?: Record<string, unknown>;
}

export interface TraceDoc {
  readonly traceEvents: TraceEvent[];
  readonly otherData: { readonly ranksWithoutTrace: number[] };
}

/** One flow arrow: its start ('s', in the send's slice) and end ('f', in the slice that completed the receive), and those slices. */
export interface Arrow {
  readonly start: TraceEvent;
  readonly end: TraceEvent;
  readonly send: TraceEvent;
  readonly receive: TraceEvent;
}

/** The trace file `file`, parsed as the JSON object form of the Chrome trace event format. */
export function readTrace(file: string): TraceDoc {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as TraceDoc;
  expect(Array.isArray(doc.traceEvents)).toBe(true);
  return doc;
}

/** The X event of pid enclosing time ts (µs) on that process's threads, or on its thread `tid` only. */
export function sliceAt(events: readonly TraceEvent[], pid: number, ts: number, tid?: number): TraceEvent | undefined {
  return events.find((e) => e.ph === 'X' && e.pid === pid && (tid === undefined || e.tid === tid) && e.ts! <= ts && ts <= e.ts! + e.dur!);
}

/**
 * Every rank 0..np-1 handed its trace and has calls in it; with `hosts` (by rank), each is named
 * `rank R (HOST)`, so that the file says which host each process ran on.
 */
export function expectEveryRank(doc: TraceDoc, np: number, hosts?: readonly string[]): void {
  expect(doc.otherData.ranksWithoutTrace).toEqual([]);
  const names = doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').sort((a, b) => a.pid - b.pid);
  expect(names.map((e) => e.pid)).toEqual(Array.from({ length: np }, (_, r) => r));
  if (hosts !== undefined) expect(names.map((e) => e.args!['name'])).toEqual(hosts.map((h, r) => `rank ${r} (${h})`));
  for (let rank = 0; rank < np; rank++) {
    const calls = doc.traceEvents.filter((e) => e.ph === 'X' && e.pid === rank);
    expect(calls.map((e) => e.name)).toContain('Comm.barrier');
    for (const e of calls) expect(e.dur!).toBeGreaterThanOrEqual(0);
  }
}

/**
 * The arrows of trace-rank.ts's np ranks: one from each send to the receive that matched it, and
 * only those: ring sendrecv (np) + ring Isend->Recv (np) + send->recv(ANY_SOURCE) at rank 0 (np-1) +
 * Send->Irecv completed by waitall at rank 0 (np-1). A receive names its sender as its peer and the
 * send's tag; every ANY_SOURCE receive is joined to a different sender.
 */
export function expectTraceRankArrows(ev: readonly TraceEvent[], np: number): Arrow[] {
  const starts = new Map(ev.filter((e) => e.ph === 's').map((e) => [e.id!, e]));
  const ends = ev.filter((e) => e.ph === 'f');
  expect(ends).toHaveLength(4 * np - 2);
  expect(starts.size).toBe(ends.length);
  const arrows: Arrow[] = [];
  const seen = new Map<string, number>();
  for (const end of ends) {
    expect(end.bp).toBe('e');
    const start = starts.get(end.id!);
    expect(start, `arrow ${end.id} has no start`).toBeDefined();
    const send = sliceAt(ev, start!.pid, start!.ts!)!;
    const receive = sliceAt(ev, end.pid, end.ts!)!;
    expect(send.name).toMatch(/^Comm\.(sendrecv|Isend|send|Send)$/);
    expect(receive.name).toMatch(/^(Comm\.(sendrecv|Recv|recv)|Request\.waitall)$/);
    // a receive names the sender as its peer (a sendrecv row names its destination, a waitall row none)
    if (receive.name === 'Comm.Recv' || receive.name === 'Comm.recv') expect(receive.args!['peer']).toBe(start!.pid);
    if (receive.name === 'Comm.sendrecv') expect(send.args!['peer']).toBe(end.pid);
    // the tag of the send is the tag of its receive
    if (receive.name !== 'Request.waitall') expect(receive.args!['tag']).toBe(send.args!['tag']);
    const key = `${send.name}>${receive.name}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    arrows.push({ start: start!, end, send, receive });
  }
  expect(Object.fromEntries(seen)).toEqual({
    'Comm.sendrecv>Comm.sendrecv': np, 'Comm.Isend>Comm.Recv': np, 'Comm.send>Comm.recv': np - 1, 'Comm.Send>Request.waitall': np - 1,
  });
  const anySenders = arrows.filter((a) => a.end.pid === 0 && a.receive.name === 'Comm.recv').map((a) => a.start.pid).sort();
  expect(anySenders).toEqual(Array.from({ length: np - 1 }, (_, i) => i + 1));
  return arrows;
}

/**
 * With the ranks' clocks aligned (each rank's offset to mpiexec, measured at wire-up), no arrow
 * ends (the receive completed) before it starts (the send was called), up to `errorUs`: the
 * alignment's error is at most half a round trip to mpiexec.
 */
export function expectArrowsForward(arrows: readonly Arrow[], errorUs: number): void {
  for (const a of arrows) expect(a.end.ts! + errorUs, `arrow ${a.start.pid}>${a.end.pid} ${a.send.name}>${a.receive.name}`).toBeGreaterThanOrEqual(a.start.ts!);
}

/** The arrows between processes on different hosts (`hosts` by rank), as "sender>receiver", sorted. */
export function crossHostArrows(arrows: readonly Arrow[], hosts: readonly string[]): string[] {
  return arrows.filter((a) => hosts[a.start.pid] !== hosts[a.end.pid]).map((a) => `${a.start.pid}>${a.end.pid}`).sort();
}
