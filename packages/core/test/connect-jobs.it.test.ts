// Two separately started mpiexec jobs and a port (issue 37, "coupling two jobs";
// docs/adr/0043-connect-two-jobs.md): job A accepts at a port it writes to a file, job B reads the
// file and connects. Two jobs do not connect yet, so B's connect is ERR_PORT from Comm.connect
// naming the port and saying it is another job's; A's accept then ends with ERR_PORT when A closes
// the port, and A goes on and ends 0 (programs/connect-jobs.ts asserts it in every process).
// The same with B run by another user (uid nobody through setpriv, as the launcher's
// security tests do): the port string alone gives a stranger nothing, and A is unharmed.
// testlist: two jobs np 2 + np 2 (same user, and the connecting job as uid nobody)
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { linesWith, MPIEXEC, program, runCommand, runJob, type JobResult } from './run-job.ts';

const CONNECT_JOBS = program('connect-jobs.ts');
const isRoot = process.getuid?.() === 0;
let dir: string | null = null;

afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function report(name: string, r: JobResult): string {
  return `${name}: exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

function expectOutcome(a: JobResult, b: JobResult): void {
  const both = `${report('job A', a)}\n${report('job B', b)}`;
  expect(a.code, both).toBe(0);
  expect(b.code, both).toBe(0);
  expect(linesWith(a.stdout, 'accept closed OK ').sort(), both).toEqual(['accept closed OK 0/2', 'accept closed OK 1/2']);
  expect(linesWith(b.stdout, 'connect refused OK ').sort(), both).toEqual(['connect refused OK 0/2', 'connect refused OK 1/2']);
}

describe('connect between two mpiexec jobs', () => {
  it('a port of another job is ERR_PORT naming the call and the port; the accepting job goes on', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-connect-jobs-'));
    const [a, b] = await Promise.all([
      runJob(2, CONNECT_JOBS, { args: ['accept', dir], flags: ['--timeout', '100'], killAfterMs: 120_000 }),
      runJob(2, CONNECT_JOBS, { args: ['connect', dir], flags: ['--timeout', '100'], killAfterMs: 120_000 }),
    ]);
    expectOutcome(a, b);
  }, 130_000);

  it.skipIf(!isRoot)('the same when the connecting job is another user (uid nobody)', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-connect-jobs-'));
    chmodSync(dir, 0o777);
    const [a, b] = await Promise.all([
      runJob(2, CONNECT_JOBS, { args: ['accept', dir], flags: ['--timeout', '100'], killAfterMs: 120_000 }),
      runCommand('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', MPIEXEC, '-n', '2', '--timeout', '100', CONNECT_JOBS, 'connect', dir], { HOME: '/tmp' }, 120_000),
    ]);
    expectOutcome(a, b);
  }, 130_000);
});
