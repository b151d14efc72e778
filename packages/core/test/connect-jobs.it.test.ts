// Two separately started mpiexec jobs and a port (issue 37, "coupling two jobs";
// docs/adr/0043-connect-two-jobs.md).
// Coupled: job A accepts at a port it writes to a file, job B reads it and connects (both with spare
// universe slots): a wrong secret first (ERR_PORT, A unharmed), then the port: point-to-point both
// ways, an intercomm bcast (MPI.ROOT) and allreduce, merge, disconnect, and each job goes on and ends 0
// (programs/couple-jobs.ts asserts it in every process).
// Refused: B knows only what a stranger may (the port string with another secret): the proof fails, B's
// connect is ERR_PORT naming the port; A's accept ends with ERR_PORT when A closes the port, and A goes
// on and ends 0 (programs/connect-jobs.ts). The same with B run by another user (uid nobody through
// setpriv, as the launcher's security tests do).
// The coupled case again under channel engines: both jobs --progress threads, one engines and one inline, one inline and
// one threads.
// testlist: two jobs np 2 + np 2 coupled (inline; threads + threads; engines + inline; inline + threads); refused (same user, and the connecting job as uid nobody)
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, MPIEXEC, program, runCommand, runJob, type JobResult } from './run-job.ts';

const CONNECT_JOBS = program('connect-jobs.ts');
const COUPLE_JOBS = program('couple-jobs.ts');
const isRoot = process.getuid?.() === 0;
let dir: string | null = null;

afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function expectOutcome(a: JobResult, b: JobResult): void {
  const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
  expect(a.code, both).toBe(0);
  expect(b.code, both).toBe(0);
  expect(linesWith(a.stdout, 'accept closed OK ').sort(), both).toEqual(['accept closed OK 0/2', 'accept closed OK 1/2']);
  expect(linesWith(b.stdout, 'connect refused OK ').sort(), both).toEqual(['connect refused OK 0/2', 'connect refused OK 1/2']);
}

describe('connect between two mpiexec jobs', () => {
  it('two jobs couple at a port: pt2pt both ways, intercomm collectives, merge, disconnect; a wrong secret is refused first', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-jobs-'));
    const env = { TSMPI_UNIVERSE: '4' };
    const [a, b] = await Promise.all([
      runJob(2, COUPLE_JOBS, { args: ['accept', dir], flags: ['--timeout', '100'], env, killAfterMs: 120_000 }),
      runJob(2, COUPLE_JOBS, { args: ['connect', dir], flags: ['--timeout', '100'], env, killAfterMs: 120_000 }),
    ]);
    const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
    expect(a.code, both).toBe(0);
    expect(b.code, both).toBe(0);
    expect(linesWith(a.stdout, 'coupled OK ').sort(), both).toEqual(['coupled OK A 0/2', 'coupled OK A 1/2']);
    expect(linesWith(b.stdout, 'coupled OK ').sort(), both).toEqual(['coupled OK B 0/2', 'coupled OK B 1/2']);
    // The wrong secret's link was refused and logged by A's mpiexec, with its remote address.
    expect(a.stderr, both).toMatch(/proof matches no open port/);
  }, 130_000);

  // Channel engines (issue 37): each job's engines and user threads' routes learn the other job's processes, an
  // inline job dials an engines job's process per channel at that channel's engine (ForeignPeer.channelAddresses).
  it.each([
    ['threads', 'threads'],
    ['engines', 'inline'],
    ['inline', 'threads'],
  ])('the same with the accepting job under --progress %s and the connecting job under --progress %s', async (progressA, progressB) => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-jobs-'));
    const env = { TSMPI_UNIVERSE: '4' };
    const [a, b] = await Promise.all([
      runJob(2, COUPLE_JOBS, { args: ['accept', dir], flags: ['--progress', progressA, '--timeout', '100'], env, killAfterMs: 120_000 }),
      runJob(2, COUPLE_JOBS, { args: ['connect', dir], flags: ['--progress', progressB, '--timeout', '100'], env, killAfterMs: 120_000 }),
    ]);
    const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
    expect(a.code, both).toBe(0);
    expect(b.code, both).toBe(0);
    expect(linesWith(a.stdout, 'coupled OK ').sort(), both).toEqual(['coupled OK A 0/2', 'coupled OK A 1/2']);
    expect(linesWith(b.stdout, 'coupled OK ').sort(), both).toEqual(['coupled OK B 0/2', 'coupled OK B 1/2']);
  }, 130_000);

  it('a port without its secret (what a stranger may know) is ERR_PORT naming the port; the accepting job goes on', async () => {
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
