// The collectives on the lean path of setting lean (docs/adr/0022-small-collectives-lean.md) over
// real mpiexec jobs on loopback TCP: many small allreduces of every op with ranks out of step,
// overlapping, mixed with other collectives and a demotion (coll-lean.ts) with lean on, send and
// off on 4 and 3 processes (3: recursive doubling's fix-up steps); and the whole collective suite
// (coll-suite.ts) with lean=off, the general path (coll.it.test.ts runs it at the default, on).
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  if (r.code !== 0 || linesWith(r.stdout, marker).length !== np) {
    throw new Error(`job failed (exit ${r.code}, ${linesWith(r.stdout, marker).length} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('collectives on the lean path', () => {
  it.each([
    [4, 'on'], [4, 'send'], [4, 'off'], [3, 'on'],
  ])('keep small allreduces exact and in order (np %i, lean=%s)', async (np, lean) => {
    const r = await runJob(np, program('coll-lean.ts'), {
      flags: ['--timeout', '150'], args: [lean], env: { TSMPI_LEAN: lean }, killAfterMs: 170_000,
    });
    expectOk(r, 'coll-lean OK', np);
  }, 180_000);

  it.each([3, 5])('run every collective, op and type pair with lean=off (np %i)', async (np) => {
    const r = await runJob(np, program('coll-suite.ts'), {
      flags: ['--timeout', '150'], args: ['40000'], env: { TSMPI_LEAN: 'off' }, killAfterMs: 170_000,
    });
    expectOk(r, 'coll-suite OK', np);
  }, 180_000);
});
