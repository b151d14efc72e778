// Init's warm-up of the small allreduce (setting collWarmup, packages/core/src/api/coll-warm-up.ts) over
// real mpiexec jobs on loopback TCP: it runs on every rank with the same count (the debug log says so),
// inside the tier-up window (warmUpTierUpBudget), and a program that runs collectives the moment init
// returns gets their results and counts only its own messages (programs/coll-warm-up.ts); where one rank
// asks for another count, no rank runs it and the job still passes.
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

function logLines(stderr: string, msg: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).map((l) => JSON.parse(l));
}

function expectPassed(r: { code: number | null; stdout: string; stderr: string }, np: number): void {
  if (r.code !== 0 || linesWith(r.stdout, 'coll-warm-up OK').length !== np) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe("init's warm-up of the small allreduce", () => {
  for (const np of [3, 4]) {
    it(`runs on all ${np} ranks inside the tier-up window and leaves no message or count behind`, async () => {
      const r = await runJob(np, program('coll-warm-up.ts'), {
        flags: ['--progress', 'inline', '--log-level', 'debug', '--timeout', '60'], env: { TSMPI_LEAN: 'on', TSMPI_COLL_WARMUP: '120' }, killAfterMs: 80_000,
      });
      expectPassed(r, np);
      const done = logLines(r.stderr, 'allreduce warm-up done');
      expect(done.map((l) => l.calls)).toEqual(Array(np).fill(120));
      expect(done.map((l) => l.tierUpWindow)).toEqual(Array(np).fill(4096));
    }, 90_000);
  }

  it('runs on no rank where one rank asked for another count, and the program passes', async () => {
    const r = await runJob(4, program('coll-warm-up.ts'), {
      flags: ['--progress', 'inline', '--log-level', 'debug', '--timeout', '60'], env: { TSMPI_LEAN: 'on', TSMPI_COLL_WARMUP: '120' }, args: ['--mismatch'], killAfterMs: 80_000,
    });
    expectPassed(r, 4);
    expect(logLines(r.stderr, 'allreduce warm-up done').length).toBe(0);
  }, 90_000);

  it('does not run with lean=off, and the program passes', async () => {
    const r = await runJob(3, program('coll-warm-up.ts'), {
      flags: ['--progress', 'inline', '--log-level', 'debug', '--timeout', '60'], env: { TSMPI_LEAN: 'off', TSMPI_COLL_WARMUP: '120' }, killAfterMs: 80_000,
    });
    expectPassed(r, 3);
    expect(logLines(r.stderr, 'allreduce warm-up done').length).toBe(0);
  }, 90_000);

  it('rejects a negative TSMPI_COLL_WARMUP with the allowed range', async () => {
    const r = await runJob(2, program('coll-warm-up.ts'), { env: { TSMPI_COLL_WARMUP: '-1' } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/collWarmup.*-1.*0 to 100000/);
  });
});
