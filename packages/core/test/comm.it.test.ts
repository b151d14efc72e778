// Communicator management over real mpiexec jobs on loopback TCP (issue 4).
// testlist: comm-create np 4 (default, TSMPI_CTXID_EAGER=0, TSMPI_CTXID_ALGO=original); comm-many np 2;
// comm-idup-overlap np 6, 8 rounds per job, 4 jobs (3 default, 1 --progress threads)
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  if (r.code !== 0 || linesWith(r.stdout, marker).length !== np) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('communicators', () => {
  it.each([
    ['eager allocation (default)', {}],
    ['base allocation only', { TSMPI_CTXID_EAGER: '0' }],
    ['the original algorithm', { TSMPI_CTXID_ALGO: 'original' }],
  ])('dup, idup, split, splitType, create and concurrent createGroup work and are isolated: %s', async (_what, env) => {
    expectOk(await runJob(4, program('comm-create.ts'), { env, flags: ['--timeout', '90'] }), 'comm-create OK', 4);
  });

  // Issue 34: a Comm.free ran while a pending idup of the same thread held the context-id mutex
  // across an await, and slept in lockSync for good (two of six ranks stopped answering until
  // --timeout, in about one job in three). The race depends on timing, so several jobs of
  // several rounds each; every one must finish.
  it.each([
    ['job 1', []],
    ['job 2', []],
    ['job 3', []],
    ['job 4, the general path (progress threads)', ['--progress', 'threads']],
  ])('five pending idups overlapping dup, split, create and createGroup on 6 processes, 8 rounds: %s', async (_what, progress) => {
    const r = await runJob(6, program('comm-idup-overlap.ts'), { args: ['8'], flags: ['--timeout', '100', ...progress], killAfterMs: 115_000 });
    expectOk(r, 'comm-idup-overlap OK', 6);
  }, 130_000);

  it('reuses context ids: 100,000 COMM_SELF dups and 2,000 COMM_WORLD dups; running out is ERR_OTHER', async () => {
    const r = await runJob(2, program('comm-many.ts'), { flags: ['--timeout', '90'] });
    expectOk(r, 'comm-many OK', 2);
    expect(r.stdout).toMatch(/self-dup [\d.]+ us/);
  });
});
