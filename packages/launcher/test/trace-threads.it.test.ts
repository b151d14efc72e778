/**
 * mpiexec --trace of a program with an MPI.Worker thread per process (issue 41): both threads'
 * calls are in the file, each thread on its own track of its rank, and the arrows join a worker
 * thread's sends to the main thread that received them, and back.
 *
 * testlist: { file: 'trace-threads.it.test.ts', np: [2, 3] }
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, runMpiexec } from './run-mpiexec.ts';
import { readTrace, sliceAt } from './trace-checks.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-trace-threads-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('mpiexec --trace with worker threads', () => {
  it.each([2, 3])('shows both threads of every rank and the arrows between them (np %i)', async (np) => {
    const file = path.join(tmp, `trace-${np}.json`);
    const r = await runMpiexec(['-n', String(np), '--trace', file, `${FIXTURES}/trace-threads.ts`], { deadlineMs: 110_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const doc = readTrace(file);
    const ev = doc.traceEvents;
    expect(doc.otherData.ranksWithoutTrace).toEqual([]);
    const workerTid = new Map<number, number>();
    for (let rank = 0; rank < np; rank++) {
      const threads = ev.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.pid === rank);
      expect(threads).toHaveLength(2);
      expect(threads.find((t) => t.tid === 0)!.args!['name']).toBe('main');
      expect(threads.find((t) => t.tid !== 0)!.args!['name']).toMatch(/^thread \d+$/);
      const tid = threads.find((t) => t.tid !== 0)!.tid;
      workerTid.set(rank, tid);
      const names = (t: number): string[] => ev.filter((e) => e.ph === 'X' && e.pid === rank && e.tid === t).map((e) => e.name);
      expect(names(0)).toEqual(expect.arrayContaining(['Comm.Recv', 'Comm.Send']));
      expect(names(tid)).toEqual(['Comm.Send', 'Comm.Recv']);
    }
    const starts = new Map(ev.filter((e) => e.ph === 's').map((e) => [e.id!, e]));
    const ends = ev.filter((e) => e.ph === 'f');
    const joined = ends.map((f) => {
      const s = starts.get(f.id!)!;
      const from = sliceAt(ev, s.pid, s.ts!, s.tid)!;
      const to = sliceAt(ev, f.pid, f.ts!, f.tid)!;
      return `${s.pid}/${s.tid === 0 ? 'main' : 'worker'} ${from.name} tag ${String(from.args!['tag'])} -> ${f.pid}/${f.tid === 0 ? 'main' : 'worker'} ${to.name} tag ${String(to.args!['tag'])}`;
    }).sort();
    const want: string[] = [];
    for (let rank = 0; rank < np; rank++) {
      const right = (rank + 1) % np;
      want.push(`${rank}/worker Comm.Send tag 5 -> ${right}/main Comm.Recv tag 5`, `${rank}/main Comm.Send tag 6 -> ${right}/worker Comm.Recv tag 6`);
    }
    expect(joined).toEqual(want.sort());
    for (const e of ends) expect(e.tid === 0 || e.tid === workerTid.get(e.pid)).toBe(true);
  }, 120_000);
});
