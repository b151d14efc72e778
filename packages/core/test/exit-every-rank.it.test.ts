// Every rank of a job exits with code 1 (programs/exit-every-rank.ts): before MPI.init, after it, from an MPI.Worker
// thread, and after coupling with another job at a port (from the main thread and from worker threads). mpiexec must
// end the job at the first non-zero exit with its failure line, as MPICH's and Open MPI's launchers do, and never
// wait for --timeout (a helper once saw a coupled job's mpiexec wait there after both its ranks had exited 1). The
// --timeout given is generous; the test asserts that it never fired (no roll-call, no status 124), not a time.
// testlist: np 2 per job; one job, or two jobs coupled at a port (--progress threads and inline + engines)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, program, runJob, type JobResult } from './run-job.ts';

const EXIT_EVERY_RANK = program('exit-every-rank.ts');
const TIMEOUT = ['--timeout', '100'];
/** mpiexec's last line when a rank's exit 1 ended the job (docs/ERRORS.md). */
const EXITED_1 = /^mpiexec: rank [01] \(host [^,]+, pid \d+\) exited with code 1\b.*; aborting the job \(2 processes\)$/;
let dir: string | null = null;

afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

/** The job ended by its own failure: status 1, the failure line last, no --timeout roll-call. */
function expectEndedAtExit(r: JobResult, line: RegExp, report: string): void {
  expect(r.stderr, report).not.toMatch(/--timeout|roll-call|\[run-job\] killed/);
  expect(r.code, report).toBe(1);
  expect(r.stderr.trimEnd().split('\n').at(-1), report).toMatch(line);
}

describe('mpiexec ends the job when every rank exits 1', () => {
  it.each(['before-init', 'after-init', 'worker'])('%s', async (stage) => {
    const r = await runJob(2, EXIT_EVERY_RANK, { args: [stage], flags: TIMEOUT, killAfterMs: 120_000 });
    expectEndedAtExit(r, EXITED_1, jobReport(`job (${stage})`, r));
    if (stage === 'worker') expect(r.stderr, jobReport('job', r)).toContain('the worker thread fails on purpose');
  }, 130_000);

  it.each([
    ['couple', 'threads', 'threads'],
    ['couple', 'inline', 'engines'],
    ['couple-worker', 'threads', 'threads'],
    ['couple-worker', 'inline', 'engines'],
  ])('%s: the accepting job\'s ranks exit 1 (A --progress %s, B --progress %s); the connecting job ends too', async (stage, progressA, progressB) => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-exit-every-rank-'));
    const env = { TSMPI_UNIVERSE: '4' };
    const [a, b] = await Promise.all([
      runJob(2, EXIT_EVERY_RANK, { args: [stage, 'accept', dir], flags: ['--progress', progressA, ...TIMEOUT], env, killAfterMs: 120_000 }),
      runJob(2, EXIT_EVERY_RANK, { args: [stage, 'connect', dir], flags: ['--progress', progressB, ...TIMEOUT], env, killAfterMs: 120_000 }),
    ]);
    const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
    // Both coupled before A's ranks exited: the exits are the ones under test, not a failed start.
    expect(linesWith(a.stdout, 'exit-every-rank accept ').sort(), both).toEqual(['exit-every-rank accept 0: coupled', 'exit-every-rank accept 1: coupled']);
    expectEndedAtExit(a, EXITED_1, both);
    // B's ranks lost A's processes: B ends on its own with a failure line, not at its --timeout.
    expect(b.stderr, both).not.toMatch(/--timeout|roll-call|\[run-job\] killed/);
    expect(b.code, both).not.toBe(0);
    expect(b.stderr.trimEnd().split('\n').at(-1), both).toMatch(/^mpiexec: rank [01] \(host [^,]+, pid \d+\) .*; aborting the job \(2 processes\)$/);
  }, 130_000);
});
