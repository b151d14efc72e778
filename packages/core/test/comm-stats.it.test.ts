// comm.stats() and MPI.stats() over real mpiexec jobs (issue 41): exact counts of a scripted
// exchange, inline and threads progress, with and without a second MPI thread per process.
// testlist: comm-stats np 2, 3
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

describe('comm.stats() counts a scripted exchange exactly', () => {
  it.each([
    [2, 'inline', ''], [3, 'inline', ''], [2, 'inline', 'worker'], [2, 'threads', 'worker'], [3, 'threads', 'worker'],
  ])('np %i, --progress %s %s', async (np, progress, mode) => {
    const r = await runJob(np, program('comm-stats.ts'), { flags: ['--progress', progress], args: mode === '' ? [] : [mode] });
    const ok = r.stdout.split('\n').filter((l) => l.startsWith('comm-stats OK')).length;
    if (r.code !== 0 || ok !== np) throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }, 120_000);
});
