// Intercommunicators over real mpiexec jobs (issue 36): createIntercomm over unequal halves of
// COMM_WORLD, point-to-point to remote ranks, rooted collectives with MPI.ROOT / PROC_NULL, the
// all-to-all ones, dup / split / create / merge, repeated creation, and the errors, on 2 to 8
// processes in inline and threads progress.
// testlist: intercomm np 2,3,5,8 (inline), 4,7 (threads); ic-threads np 4 x 2 threads, 3 x 3 threads;
// intercomm-forms np 3,5 (inline and threads); ic-forms-threads np 3 (inline), 5 (threads)
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('intercommunicators', () => {
  it.each([
    [2, 'inline'],
    [3, 'inline'],
    [5, 'inline'],
    [8, 'inline'],
    [4, 'threads'],
    [7, 'threads'],
  ])('np %i, progress %s', async (np, progress) => {
    expectOk(await runJob(np, program('intercomm.ts'), { flags: ['--timeout', '200', '--progress', progress], killAfterMs: 220_000 }), 'intercomm OK', np);
  }, 230_000);

  // Every buffer collective in its blocking, nonblocking and persistent forms, byte for byte, and the errors.
  it.each([
    [3, 'inline'],
    [5, 'inline'],
    [3, 'threads'],
    [5, 'threads'],
  ])('every buffer collective form: np %i, progress %s', async (np, progress) => {
    expectOk(await runJob(np, program('intercomm-forms.ts'), { flags: ['--timeout', '200', '--progress', progress], killAfterMs: 220_000 }), 'intercomm-forms OK', np);
  }, 230_000);

  // Two threads of every process, each on its own intercommunicators (one crossed by workerData, one by
  // postMessage), run every form at the same time, nonblocking and persistent calls overlapping.
  it.each([
    [3, 'inline'],
    [5, 'threads'],
  ])('crossing to a worker thread, collectives from 2 threads at once: np %i, progress %s', async (np, progress) => {
    expectOk(await runJob(np, program('ic-forms-threads.ts'), { flags: ['--timeout', '200', '--progress', progress], killAfterMs: 220_000 }), 'ic-forms-threads OK', np);
  }, 230_000);

  // Worker threads of every process create, use, dup, merge and free intercommunicators at once,
  // while one thread per process also dups COMM_SELF: the context-id allocator must not deadlock.
  it.each([
    [4, 2],
    [3, 3],
  ])('created concurrently from threads: np %i, %i threads, 10 rounds', async (np, threads) => {
    expectOk(await runJob(np, program('ic-threads.ts'), { args: ['10', String(threads)], flags: ['--timeout', '200'], killAfterMs: 220_000 }), 'ic-threads OK', np);
  }, 230_000);
});
