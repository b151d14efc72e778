// A process of a coupled job dies (issue 37; docs/adr/0043-connect-two-jobs.md, "Failures"): two
// mpiexec jobs of 2 coupled at a port (programs/couple-fail.ts), B's rank 1 throws, B ends as any
// failed job. 'talked': A's rank 1 had exchanged a message with B's rank 1, so it holds a connection
// to it: its waiting receive ends at once with ERR_PROC_FAILED naming the peer by A's number for it
// and B's ("process 3 (process 1 of the job coupled at a port)"), and A's mpiexec blames the loss of that process as the other job's ("process 3
// (process 1 of the job coupled at port tsmpi-port:TAG@HOST:PORT)", never the port's secret).
// 'silent': no frame crossed before the failure, so A's ranks have no connection that could end: B's
// mpiexec tells A's over the port link they kept (coupled-links.ts), and A's mpiexec fails the peer in
// each of A's processes (wire-up peerFailed): their receives end with ERR_PROC_FAILED naming it ("process 3
// (process 1 of the job coupled at port tsmpi-port:TAG@HOST:PORT) failed: ..."), long before A's --timeout.
// 'disconnected': the groups talked, then disconnected (MPI 4.0 11.10.4: independent from then on); B's
// rank 1 then fails and B ends, while A goes on to a clean exit (neither its connections' end nor B's
// mpiexec's word fails anything in A).
// 'silent' and 'disconnected' run again with A under --progress threads and B under engines (issue 37, channel engines).
// testlist: two jobs np 2 + np 2 coupled, B's rank 1 fails (talked, silent, disconnected; silent and disconnected also threads + engines)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, program, runJob, type JobResult } from './run-job.ts';

const COUPLE_FAIL = program('couple-fail.ts');
let dir: string | null = null;

afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

async function runPair(mode: 'talked' | 'silent' | 'disconnected', timeoutA: number, flagsA: string[] = [], flagsB: string[] = []): Promise<{ a: JobResult; b: JobResult; both: string }> {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-fail-'));
  const env = { TSMPI_UNIVERSE: '4' };
  const [a, b] = await Promise.all([
    runJob(2, COUPLE_FAIL, { args: ['accept', dir, mode], flags: [...flagsA, '--timeout', String(timeoutA)], env, killAfterMs: 120_000 }),
    runJob(2, COUPLE_FAIL, { args: ['connect', dir, mode], flags: [...flagsB, '--timeout', '100'], env, killAfterMs: 120_000 }),
  ]);
  return { a, b, both: `${jobReport('job A', a)}\n${jobReport('job B', b)}` };
}

/** B ends as a job whose rank 1 threw. */
function expectBFailed(b: JobResult, both: string): void {
  expect(b.code, both).toBe(1);
  expect(b.stderr.trimEnd().split('\n').at(-1), both).toMatch(/^mpiexec: rank 1 \(host .*, pid \d+\) exited with code 1: Error: coupled process fails on purpose at .*; aborting the job \(2 processes\)$/);
}

describe('a coupled job\'s process fails', () => {
  it('a rank that talked to it gets ERR_PROC_FAILED naming the peer; its mpiexec names the other job\'s process', async () => {
    const { a, b, both } = await runPair('talked', 100);
    expectBFailed(b, both);
    expect(a.code, both).toBe(1);
    // Its connection's end names the peer; B's mpiexec's word (which may come first) names it with the port.
    expect(linesWith(a.stdout, 'couple-fail A 1: '), both).toEqual([expect.stringMatching(/^couple-fail A 1: MPI_ERR_PROC_FAILED: .*(lost the connection to process 3 \(process 1 of the job coupled at a port\) \(|process 3 \(process 1 of the job coupled at port tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+\) failed: )/) as string]);
    const last = a.stderr.trimEnd().split('\n').at(-1)!;
    expect(last, both).toMatch(/^mpiexec: rank [01] \(host .*, pid \d+\) exited with code 1 after losing its connection to process [23] \(process [01] of the job coupled at port tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+\); aborting the job \(2 processes\)$/);
  }, 130_000);

  it.each([
    ['inline', 'inline'],
    ['threads', 'engines'],
  ])('a rank with no connection to it gets ERR_PROC_FAILED naming it too, from its mpiexec, without --timeout (A --progress %s, B --progress %s)', async (progressA, progressB) => {
    const { a, b, both } = await runPair('silent', 100, ['--progress', progressA], ['--progress', progressB]);
    expectBFailed(b, both);
    expect(a.code, both).toBe(1);
    expect(a.stderr, both).not.toMatch(/--timeout/);
    // Rank 1 waits for process 3, rank 0 for process 2; both hear of process 3 first: B's mpiexec tells the cause first, its
    // exit or, when B's rank 0 ended first because it lost its connection to B's rank 1, that loss.
    const told = /^couple-fail A [01]: MPI_ERR_PROC_FAILED: .*process 3 \(process 1 of the job coupled at port tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+\) failed: (it exited with code 1 before MPI\.finalize|process 0 of its job lost its connection to it) \(as its job's mpiexec says\)/;
    expect(linesWith(a.stdout, 'couple-fail A 1: '), both).toEqual([expect.stringMatching(told) as string]);
    expect(linesWith(a.stdout, 'couple-fail A 0: '), both).toEqual([expect.stringMatching(/^couple-fail A 0: MPI_ERR_PROC_FAILED: .*process [23] \(process [01] of the job coupled at port tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+\) failed: /) as string]);
    expect(a.stderr.trimEnd().split('\n').at(-1), both).toMatch(/^mpiexec: rank [01] \(host .*, pid \d+\) exited with code 1 after losing its connection to process [23] \(process [01] of the job coupled at port tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+\); aborting the job \(2 processes\)$/);
    // The port's secret appears nowhere.
    expect(`${a.stdout}${a.stderr}`, both).not.toMatch(/[0-9a-f]{32}/);
  }, 130_000);

  it.each([
    ['inline', 'inline'],
    ['threads', 'engines'],
  ])('after both groups disconnected, B\'s failure leaves A running to a clean exit (A --progress %s, B --progress %s)', async (progressA, progressB) => {
    // Under channel engines the release reaches every engine: the end of B's connections fails nothing in A.
    const { a, b, both } = await runPair('disconnected', 100, ['--progress', progressA], ['--progress', progressB]);
    expectBFailed(b, both);
    expect(a.code, both).toBe(0);
    expect(linesWith(a.stdout, 'couple-fail A ').sort(), both).toEqual(['couple-fail A 0: went on after B failed', 'couple-fail A 1: went on after B failed']);
    expect(a.stderr, both).not.toMatch(/PROC_FAILED|aborting/);
  }, 130_000);
});
