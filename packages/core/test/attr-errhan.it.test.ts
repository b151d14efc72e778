// Attributes, info and error handlers over real mpiexec jobs (issue 36): keyvals with copy/delete
// callbacks on dup and free, predefined attributes, Info, the MPI 4.0 assertion hints, user error
// handlers on synchronous, rejected and request errors; ERRORS_ARE_FATAL and ERRORS_ABORT end the job
// naming the rank. Inline and threads progress.
// testlist: attr-info np 2,4; errhandler np 2,3
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('attributes, info and error handlers', () => {
  it.each([
    [2, 'inline'],
    [4, 'threads'],
  ])('attributes and info: np %i, progress %s', async (np, progress) => {
    const r = await runJob(np, program('attr-info.ts'), { flags: ['--timeout', '100', '--progress', progress], killAfterMs: 120_000 });
    expectOk(r, 'attr-info OK', np);
    // COMM_SELF's then COMM_WORLD's attributes are deleted by finalize, in that order, at every rank.
    for (let rank = 0; rank < np; rank++) {
      const lines = r.stdout.split('\n').filter((l) => l.startsWith('attr-info finalize deleted') && l.endsWith(` on ${rank}`));
      expect(lines).toEqual([`attr-info finalize deleted self on ${rank}`, `attr-info finalize deleted world on ${rank}`]);
    }
  }, 130_000);

  it.each([
    [2, 'inline'],
    [3, 'threads'],
  ])('user error handlers: np %i, progress %s', async (np, progress) => {
    expectOk(await runJob(np, program('errhandler.ts'), { flags: ['--timeout', '100', '--progress', progress], killAfterMs: 120_000 }), 'errhandler OK', np);
  }, 130_000);

  it.each(['fatal', 'abort'])('ERRORS_%s ends the job with the error and the rank', async (mode) => {
    const r = await runJob(3, program('errhandler.ts'), { args: [mode], flags: ['--timeout', '60'], killAfterMs: 90_000 });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain('errhandler about to fail');
    expect(r.stdout).not.toContain('NOT REACHED');
    expect(r.stderr).toMatch(/rank 1: MPI_ERR_RANK: send: dest 8 is out of range/);
    expect(r.stderr).toContain(mode === 'fatal' ? 'ERRORS_ARE_FATAL' : 'ERRORS_ABORT');
    expect(r.stderr).toMatch(/mpiexec: rank 1 /);
  }, 100_000);
});
