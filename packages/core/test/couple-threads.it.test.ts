// Coupling two mpiexec jobs from MPI.Worker threads (issue 37; docs/adr/0043-connect-two-jobs.md), through real
// jobs (programs/couple-threads.ts, couple-threads-worker.ts): in each process a worker thread accepts or
// connects (its main thread carries the requests to mpiexec and installs the other job's processes in every
// thread and engine), exchanges messages, a bcast and an allreduce; a second worker thread of the same process,
// started afterwards, uses the intercommunicator (messages, merge, allreduce) and disconnects. Before this a
// worker thread's accept or connect to another job was ERR_PORT.
// 'fail': the connecting job's rank 1 fails while the accepting job's second worker threads are blocked in a
// receive from it: each receive ends with ERR_PROC_FAILED naming the process as the other job's (its mpiexec's
// word reaches the worker threads: runtime/worker-peers.ts), not at --timeout.
// testlist: two jobs np 2 + np 2 coupled from worker threads (threads + threads, inline + engines); the other job's rank fails under a worker's receive
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, program, runJob, type JobResult } from './run-job.ts';

const COUPLE_THREADS = program('couple-threads.ts');
let dir: string | null = null;

afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

async function runPair(mode: 'ok' | 'fail', progressA: string, progressB: string): Promise<{ a: JobResult; b: JobResult; both: string }> {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-threads-'));
  const env = { TSMPI_UNIVERSE: '4' };
  const [a, b] = await Promise.all([
    runJob(2, COUPLE_THREADS, { args: ['accept', dir, mode], flags: ['--progress', progressA, '--timeout', '100'], env, killAfterMs: 120_000 }),
    runJob(2, COUPLE_THREADS, { args: ['connect', dir, mode], flags: ['--progress', progressB, '--timeout', '100'], env, killAfterMs: 120_000 }),
  ]);
  return { a, b, both: `${jobReport('job A', a)}\n${jobReport('job B', b)}` };
}

describe('coupling two jobs from MPI.Worker threads', () => {
  it.each([
    ['threads', 'threads'],
    ['inline', 'engines'],
  ])('worker threads accept and connect; a later worker uses the intercommunicator and disconnects (A --progress %s, B --progress %s)', async (progressA, progressB) => {
    const { a, b, both } = await runPair('ok', progressA, progressB);
    expect(a.code, both).toBe(0);
    expect(b.code, both).toBe(0);
    expect(linesWith(a.stdout, 'couple-threads OK ').sort(), both).toEqual(['couple-threads OK A 0/2', 'couple-threads OK A 1/2']);
    expect(linesWith(b.stdout, 'couple-threads OK ').sort(), both).toEqual(['couple-threads OK B 0/2', 'couple-threads OK B 1/2']);
  }, 130_000);

  it('the other job\'s failure reaches a worker thread blocked in a receive from it: ERR_PROC_FAILED naming it as the other job\'s', async () => {
    // A inline: a lost peer only arms the quiet stop there, so the worker's error is seen (under engines the engine ends the process).
    const { a, b, both } = await runPair('fail', 'inline', 'threads');
    expect(b.code, both).toBe(1);
    expect(b.stderr.trimEnd().split('\n').at(-1), both).toMatch(/^mpiexec: rank 1 \(host .*, pid \d+\) exited with code 1: Error: coupled process fails on purpose at .*; aborting the job \(2 processes\)$/);
    expect(a.code, both).toBe(1);
    expect(a.stderr, both).not.toMatch(/--timeout/);
    // Both wait for B's rank 1 (process 3 of A's universe); B's rank 0 may be reported first when it ended first.
    const told = (r: number): RegExp => new RegExp(`^couple-threads A ${r} thread: MPI_ERR_PROC_FAILED: .*process [23] \\(process [01] of the job coupled at (port tsmpi-port:[0-9a-f]{16}@127\\.0\\.0\\.1:\\d+\\) failed: |a port\\) )`);
    expect(linesWith(a.stdout, 'couple-threads A 0 thread: '), both).toEqual([expect.stringMatching(told(0)) as string]);
    expect(linesWith(a.stdout, 'couple-threads A 1 thread: '), both).toEqual([expect.stringMatching(told(1)) as string]);
    expect(linesWith(a.stdout, 'couple-threads OK'), both).toEqual([]);
    // The port's secret appears nowhere.
    expect(`${a.stdout}${a.stderr}`, both).not.toMatch(/[0-9a-f]{32}/);
  }, 130_000);
});
