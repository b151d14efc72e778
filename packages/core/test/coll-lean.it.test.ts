// The collectives on the lean path (docs/adr/0022-small-collectives-lean.md) over real mpiexec
// jobs on loopback TCP: many small allreduces of every op with ranks out of step, overlapping,
// mixed with other collectives and a demotion (coll-lean.ts) in inline progress (the lean send and
// receive lanes) on 4 and 3 processes (3: recursive doubling's fix-up steps) and in threads
// progress (the general path); and the whole collective suite (coll-suite.ts) in threads progress,
// the general path (coll.it.test.ts runs it in the default job's, inline).
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  if (r.code !== 0 || linesWith(r.stdout, marker).length !== np) {
    throw new Error(`job failed (exit ${r.code}, ${linesWith(r.stdout, marker).length} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('collectives on the lean path', () => {
  it.each([
    [4, 'inline'], [4, 'threads'], [3, 'inline'],
  ])('keep small allreduces exact and in order (np %i, progress %s)', async (np, progress) => {
    const r = await runJob(np, program('coll-lean.ts'), {
      flags: ['--timeout', '150', '--progress', progress], args: [progress], killAfterMs: 170_000,
    });
    expectOk(r, 'coll-lean OK', np);
  }, 180_000);

  it.each([3, 5])('run every collective, op and type pair on the general path, progress threads (np %i)', async (np) => {
    const r = await runJob(np, program('coll-suite.ts'), {
      flags: ['--timeout', '150', '--progress', 'threads'], args: ['40000'], killAfterMs: 170_000,
    });
    expectOk(r, 'coll-suite OK', np);
  }, 180_000);
});
