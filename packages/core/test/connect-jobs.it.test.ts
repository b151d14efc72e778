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
// Spawn after a coupling (programs/couple-spawn.ts): A couples with B, then spawns a child C (job A's process
// 2), which couples with B at a second port; messages and an allreduce cross every pair of groups, all
// disconnect and end 0, with and without --secure. Then C fails after its messages with B: B's ranks get
// ERR_PROC_FAILED naming C as job A's process (the first to see it ends job B), and job A ends naming C
// (a spawned process, ADR 0040).
// testlist: two jobs np 2 + np 2 coupled (inline; threads + threads; engines + inline; inline + threads); refused (same user, and the connecting job as uid nobody);
// np 2 + np 2 and a spawned 1, plain and --secure, and failing
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, MPIEXEC, program, runCommand, runJob, type JobResult } from './run-job.ts';

const CONNECT_JOBS = program('connect-jobs.ts');
const COUPLE_JOBS = program('couple-jobs.ts');
const COUPLE_SPAWN = program('couple-spawn.ts');
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

describe('spawn in a job after it coupled with another', () => {
  /** A (UNIVERSE 7: B's 2 twice, C) and B (UNIVERSE 5: A's 2, C) run couple-spawn.ts with `flags` and `extra` arguments. */
  function coupleAndSpawn(flags: string[], extra: string[] = []): Promise<[JobResult, JobResult]> {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-spawn-'));
    const d = dir;
    return Promise.all([
      runJob(2, COUPLE_SPAWN, { args: ['accept', d, ...extra], flags: [...flags, '--timeout', '100'], env: { TSMPI_UNIVERSE: '7' }, killAfterMs: 120_000 }),
      runJob(2, COUPLE_SPAWN, { args: ['connect', d, ...extra], flags: [...flags, '--timeout', '100'], env: { TSMPI_UNIVERSE: '5' }, killAfterMs: 120_000 }),
    ]);
  }

  it.each([['without --secure', []], ['with --secure', ['--secure']]])('%s: the child couples too; messages between all three groups; disconnect; clean exits', async (_name, flags) => {
    const [a, b] = await coupleAndSpawn(flags);
    const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
    expect(a.code, both).toBe(0);
    expect(b.code, both).toBe(0);
    expect(linesWith(a.stdout, 'couple-spawn OK ').sort(), both).toEqual(['couple-spawn OK A 0/2', 'couple-spawn OK A 1/2', 'couple-spawn OK C 0/1']);
    expect(linesWith(b.stdout, 'couple-spawn OK ').sort(), both).toEqual(['couple-spawn OK B 0/2', 'couple-spawn OK B 1/2']);
  }, 130_000);

  it('the child fails after its messages with B: B\'s ranks get ERR_PROC_FAILED naming it as job A\'s process; job A ends naming it', async () => {
    const [a, b] = await coupleAndSpawn([], ['fail']);
    const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
    expect(a.code, both).not.toBe(0);
    expect(b.code, both).toBe(3);
    const named = /^couple-spawn B [01]: MPI_ERR_PROC_FAILED: .*process 2 \(process 2 of the job coupled at (a port|port tsmpi-port:[0-9a-f]{16}@127\.0\.0\.1:\d+)\)/;
    // The first B rank to see it prints it and exits 3, and B's mpiexec then stops the other, which may not
    // have printed yet, or may have seen that rank's exit before C's failure reached it: its error then names
    // B's own process that ended (true too, but racy), so only one line must name C.
    const seen = linesWith(b.stdout, 'couple-spawn B ');
    expect(seen.filter((line) => named.test(line)).length, both).toBeGreaterThanOrEqual(1);
    for (const line of seen) expect(line, both).toMatch(/^couple-spawn B [01]: MPI_ERR_PROC_FAILED: /);
    expect(a.stderr, both).toMatch(/mpiexec: rank 2 \(host .*, pid \d+\) exited with code 1; aborting the job \(3 processes\)/);
  }, 130_000);
});
