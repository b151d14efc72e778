// A failing rank ends the whole job with one line naming it; nothing hangs.
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

// The test only needs the job to end on its own; the bound is far above the 2 s the launcher promises.
const HANG = 60_000;

describe('failure semantics with real MPI programs', () => {
  it('a rank that throws after init ends the job, its stack is printed', async () => {
    const r = await runJob(3, program('fail-throw.ts'), { killAfterMs: HANG });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('deliberate failure in rank 1');
    expect(r.stderr).toMatch(/mpiexec: rank 1 .*pid \d+/);
    expect(r.stderr).not.toMatch(/mpiexec: rank [02] /); // ranks that lost rank 1 are not blamed
    expect(r.stderr).not.toContain('[run-job] killed');
  });

  it('an unhandled rejection ends the job', async () => {
    const r = await runJob(3, program('fail-reject.ts'), { killAfterMs: HANG });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('deliberate rejection in rank 1');
    expect(r.stderr).toMatch(/mpiexec: rank 1 /);
    expect(r.stderr).not.toMatch(/mpiexec: rank [02] /);
    expect(r.stderr).not.toContain('[run-job] killed');
  });

  // The ranks that lose rank 1 fail before it exits; the launcher must still name rank 1.
  it('a rank whose peers fail first because they lost it is named, not them', async () => {
    const r = await runJob(3, program('fail-lost-peer.ts'), { flags: ['--progress', 'inline'], args: ['100'], killAfterMs: HANG });
    expect(r.code).toBe(1);
    // They stop quietly (docs/ERRORS.md "What a failed job prints"): one line lists them, no stack of theirs.
    expect(r.stderr).toContain('mpiexec: ranks 0, 2 stopped (peer failed)');
    expect(r.stderr).not.toContain('MPI_ERR_PROC_FAILED');
    expect(r.stderr).toMatch(/mpiexec: rank 1 .*exited with code 1; aborting/);
    expect(r.stderr).not.toMatch(/mpiexec: rank [02] /);
  });

  it('a rank that failed because it lost a peer that is still running says so', async () => {
    const r = await runJob(3, program('fail-lost-peer.ts'), { flags: ['--progress', 'inline'], args: ['30000'], killAfterMs: HANG });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mpiexec: rank [02] .*exited with code 1 after losing its connection to rank 1; aborting/);
    expect(r.stderr).not.toContain('[run-job] killed');
  });

  it('a rank that exits before init ends the job with its exit code', async () => {
    const r = await runJob(3, program('fail-before-init.ts'), { killAfterMs: HANG });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/rank 1 /);
    expect(r.stderr).not.toContain('[run-job] killed');
  });

  it('a rank that exits without finalize ends the job', async () => {
    const r = await runJob(3, program('fail-no-finalize.ts'), { killAfterMs: HANG });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/rank 1 .*finalize/);
    expect(r.stderr).not.toContain('[run-job] killed');
  });

  it('MPI.abort(7) ends the job with status 7', async () => {
    const r = await runJob(3, program('fail-abort.ts'), { killAfterMs: HANG });
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/rank 2 .*abort/i);
    expect(r.stderr).not.toContain('[run-job] killed');
  });

  it('--timeout prints a roll-call naming the blocked call, then ends the job', async () => {
    // 15 s: both ranks must be inside their blocking calls when the roll-call runs (4 s failed on a loaded machine).
    const r = await runJob(2, program('hang.ts'), { flags: ['--timeout', '15'], killAfterMs: HANG });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/rank 1.*recv.*COMM_WORLD/);
    expect(r.stderr).toMatch(/rank 0.*barrier/);
    expect(r.stderr).not.toContain('[run-job] killed');
  });
});
