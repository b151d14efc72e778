/**
 * mpiexec --trace FILE end to end (issue 41): real ranks record their calls through the profiling
 * hooks, hand them to mpiexec at finalize, and mpiexec writes one Chrome trace whose flow arrows
 * join each send to the receive that matched it.
 *
 * testlist: { file: 'trace.it.test.ts', np: [3, 4] }
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, runMpiexec } from './run-mpiexec.ts';
import { expectEveryRank, expectTraceRankArrows, readTrace, type TraceEvent } from './trace-checks.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-trace-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('mpiexec --trace', () => {
  it.each([3, 4])('writes every rank\'s calls and an arrow from each send to its receive (np %i)', async (np) => {
    const file = path.join(tmp, `trace-${np}.json`);
    const r = await runMpiexec(['-n', String(np), '--trace', file, `${FIXTURES}/trace-rank.ts`], { deadlineMs: 90_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const doc = readTrace(file);
    const ev = doc.traceEvents;
    expectEveryRank(doc, np);
    const calls = (pid: number, name: string): TraceEvent[] => ev.filter((e) => e.ph === 'X' && e.pid === pid && e.name === name);
    for (let rank = 0; rank < np; rank++) {
      for (const name of ['Comm.sendrecv', 'Comm.Isend', 'Comm.Recv', 'Request.wait', 'Comm.barrier']) expect(calls(rank, name)).toHaveLength(1);
      const recv = calls(rank, 'Comm.Recv')[0]!;
      expect(recv.args).toEqual({ comm: 'COMM_WORLD', peer: (rank + np - 1) % np, tag: 2, bytes: 32 });
    }
    expect(calls(0, 'Comm.recv')).toHaveLength(np - 1);
    expect(calls(0, 'Request.waitall')).toHaveLength(1);
    // Arrows: each starts in a send and ends in its receive (trace-checks.ts).
    expectTraceRankArrows(ev, np);
  }, 120_000);
});
