// Every buffer collective in its blocking, I... and ...Init forms over real mpiexec jobs (issue 36):
// the nonblocking forms all in flight at once, persistent requests started again and again with
// new contents, ReduceScatter with uneven counts, Alltoallw, reduceLocal and the argument errors;
// inline and threads progress; the forms from two threads at once; and mismatched collectives
// (issue 39 point 3) reported as MPIErrors that name the call.
// testlist: coll-forms np 2,5,8 inline, 4 threads, 3 with refcount naive and gc; coll-forms-threads np 3; coll-mismatch np 2
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
    [2, 'inline', 'default'],
    [5, 'inline', 'default'],
    [8, 'inline', 'default'],
    [4, 'threads', 'default'],
    [3, 'inline', 'naive'],
    [3, 'inline', 'gc'],
  ])('np %i, progress %s, refcount %s', async (np, progress, refcount) => {
    const flags = ['--timeout', '200', '--progress', progress, ...(refcount === 'default' ? [] : ['--refcount', refcount])];
    expectOk(await runJob(np, program('coll-forms.ts'), { flags, killAfterMs: 220_000 }), 'coll-forms OK', np);
  }, 230_000);

  it('nonblocking and persistent collectives from a worker thread and the main thread at once (np 3)', async () => {
    expectOk(await runJob(3, program('coll-forms-threads.ts'), { flags: ['--timeout', '150'], killAfterMs: 170_000 }), 'coll-forms-threads OK', 3);
  }, 180_000);
});

describe('mismatched collectives (np 2)', () => {
  it.each(['counts', 'reduce-scatter'])('%s: every rank gets an MPIError naming the call, and the job finishes', async (which) => {
    expectOk(await runJob(2, program('coll-mismatch.ts'), { args: [which], flags: ['--timeout', '60'], killAfterMs: 80_000 }), 'coll-mismatch OK', 2);
  }, 90_000);

  it('barrier on one rank, bcast on the other: an MPIError naming bcast and the mismatch, no decoder error', async () => {
    const r = await runJob(2, program('coll-mismatch.ts'), { args: ['kinds'], flags: ['--timeout', '60'], killAfterMs: 80_000 });
    const out = r.stdout + r.stderr;
    if (r.code === 0 || !/MPI_ERR_OTHER: bcast: .*different collective calls/.test(out) || /MessagePack|ERR_INTERN/.test(out)) {
      throw new Error(`expected the job to fail with bcast's mismatch error (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  }, 90_000);
});
