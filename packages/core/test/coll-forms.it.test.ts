// Every buffer collective in its blocking, I... and ...Init forms over real mpiexec jobs (issue 36):
// the nonblocking forms all in flight at once, persistent requests started again and again with
// new contents, ReduceScatter with uneven counts, Alltoallw, reduceLocal and the argument errors;
// inline and threads progress; and the forms from two threads at once.
// testlist: coll-forms np 2,4,5,8; coll-forms-threads np 3
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('collectives in every form', () => {
  it.each([
    [2, 'inline'],
    [5, 'inline'],
    [8, 'inline'],
    [4, 'threads'],
  ])('np %i, progress %s', async (np, progress) => {
    expectOk(await runJob(np, program('coll-forms.ts'), { flags: ['--timeout', '200', '--progress', progress], killAfterMs: 220_000 }), 'coll-forms OK', np);
  }, 230_000);

  it('nonblocking and persistent collectives from a worker thread and the main thread at once (np 3)', async () => {
    expectOk(await runJob(3, program('coll-forms-threads.ts'), { flags: ['--timeout', '150'], killAfterMs: 170_000 }), 'coll-forms-threads OK', 3);
  }, 180_000);
});
