/**
 * mpiexec leaves no same-host directory behind (transport-tcp same-host.ts, docs/adr/0029): the job's
 * /tmp/tsmpi-<32 hex> goes when the job ends normally, when a rank exits non-zero, and when a rank is
 * killed by SIGKILL (it runs no exit hook; mpiexec survives and removes what it left). Each job runs with
 * TMPDIR set to a directory of this test's own, so other jobs on the machine cannot blur the count.
 *
 * testlist: { file: 'same-host-cleanup.it.test.ts', np: [3] }
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURES, runMpiexec } from './run-mpiexec.ts';

const RANK = `${FIXTURES}/same-host-rank.ts`;
let tmp: string | null = null;

afterEach(() => {
  if (tmp !== null) rmSync(tmp, { recursive: true, force: true });
  tmp = null;
});

describe('the same-host directory after a job', () => {
  it.each([
    ['finalize', 0],
    ['exit1', 1],
    ['kill', 137],
  ] as const)('is gone once mpiexec ends (rank 1: %s)', async (how, status) => {
    // Short, under /tmp: a socket path must fit a sockaddr_un (same-host.ts falls back to /tmp otherwise).
    tmp = mkdtempSync('/tmp/sh-cleanup-');
    const r = await runMpiexec(['-n', '3', RANK, how], { env: { TMPDIR: tmp }, deadlineMs: 90_000 });
    const both = `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
    expect(r.timedOut, both).toBe(false);
    expect(r.status, both).toBe(status);
    // The job did use one (else the check below proves nothing) ...
    expect(r.stdout, both).toContain('same-host directories during the job: 1');
    // ... and nothing of it is left: no directory, no socket file.
    expect(readdirSync(tmp).filter((n) => n.startsWith('tsmpi-')), both).toEqual([]);
  }, 120_000);
});
