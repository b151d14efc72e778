/**
 * mpiexec --trace FILE end to end (issue 41): real ranks record their calls through the profiling
 * hooks, hand them to mpiexec at finalize, and mpiexec writes one Chrome trace whose flow arrows
 * join each send to the receive that matched it.
 *
 * testlist: { file: 'trace.it.test.ts', np: [3, 4] }
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, runMpiexec } from './run-mpiexec.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-trace-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Ev { name: string; ph: string; pid: number; tid: number; ts?: number; dur?: number; id?: number; bp?: string; args?: Record<string, unknown> }

/** The X event of pid enclosing time ts (µs) on that process's thread. */
function sliceAt(events: Ev[], pid: number, ts: number): Ev | undefined {
  return events.find((e) => e.ph === 'X' && e.pid === pid && e.ts! <= ts && ts <= e.ts! + e.dur!);
}

describe('mpiexec --trace', () => {
  it.each([3, 4])('writes every rank\'s calls and an arrow from each send to its receive (np %i)', async (np) => {
    const file = path.join(tmp, `trace-${np}.json`);
    const r = await runMpiexec(['-n', String(np), '--trace', file, `${FIXTURES}/trace-rank.ts`], { deadlineMs: 90_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: Ev[]; otherData: { ranksWithoutTrace: number[] } };
    const ev = doc.traceEvents;
    expect(doc.otherData.ranksWithoutTrace).toEqual([]);
    const calls = (pid: number, name: string): Ev[] => ev.filter((e) => e.ph === 'X' && e.pid === pid && e.name === name);
    for (let rank = 0; rank < np; rank++) {
      expect(ev.some((e) => e.ph === 'M' && e.name === 'process_name' && e.pid === rank)).toBe(true);
      for (const name of ['Comm.sendrecv', 'Comm.Isend', 'Comm.Recv', 'Request.wait', 'Comm.barrier']) expect(calls(rank, name)).toHaveLength(1);
      const recv = calls(rank, 'Comm.Recv')[0]!;
      expect(recv.args).toEqual({ comm: 'COMM_WORLD', peer: (rank + np - 1) % np, tag: 2, bytes: 32 });
      for (const e of ev.filter((x) => x.ph === 'X' && x.pid === rank)) expect(e.dur!).toBeGreaterThanOrEqual(0);
    }
    expect(calls(0, 'Comm.recv')).toHaveLength(np - 1);
    expect(calls(0, 'Request.waitall')).toHaveLength(1);
    // Arrows: ring sendrecv (np) + ring Isend (np) + tag 3 (np-1) + tag 4 (np-1); each starts in a send and ends in its receive.
    const starts = new Map(ev.filter((e) => e.ph === 's').map((e) => [e.id!, e]));
    const ends = ev.filter((e) => e.ph === 'f');
    expect(ends).toHaveLength(4 * np - 2);
    expect(starts.size).toBe(ends.length);
    const seen = new Map<string, number>();
    for (const f of ends) {
      expect(f.bp).toBe('e');
      const s = starts.get(f.id!)!;
      const from = sliceAt(ev, s.pid, s.ts!)!;
      const to = sliceAt(ev, f.pid, f.ts!)!;
      expect(from.name).toMatch(/^Comm\.(sendrecv|Isend|send|Send)$/);
      expect(to.name).toMatch(/^(Comm\.(sendrecv|Recv|recv)|Request\.waitall)$/);
      // a receive names the sender as its peer (a sendrecv row names its destination, a waitall row none)
      if (to.name === 'Comm.Recv' || to.name === 'Comm.recv') expect(to.args!['peer']).toBe(s.pid);
      if (to.name === 'Comm.sendrecv') expect(from.args!['peer']).toBe(f.pid);
      const key = `${from.name}>${to.name}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      // the tag of the send is the tag of its receive
      if (to.name !== 'Request.waitall') expect(to.args!['tag']).toBe(from.args!['tag']);
    }
    expect(Object.fromEntries(seen)).toEqual({
      'Comm.sendrecv>Comm.sendrecv': np, 'Comm.Isend>Comm.Recv': np, 'Comm.send>Comm.recv': np - 1, 'Comm.Send>Request.waitall': np - 1,
    });
    // every ANY_SOURCE receive at rank 0 is joined to a different sender
    const anySenders = ends.filter((f) => f.pid === 0 && sliceAt(ev, 0, f.ts!)!.name === 'Comm.recv').map((f) => starts.get(f.id!)!.pid).sort();
    expect(anySenders).toEqual(Array.from({ length: np - 1 }, (_, i) => i + 1));
  }, 120_000);
});
