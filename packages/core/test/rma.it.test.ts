// One-sided communication over real mpiexec jobs (issue 37; MPICH test/mpi/rma re-implemented from
// its descriptions): fence epochs with Put/Get checked byte for byte, accumulates, fetch-and-op and
// compare-and-swap, PSCW (rma-fence.ts); passive target while the target computes, a shared counter
// with FetchAndOp, exclusive locks' mutual exclusion, accumulates under contention with lockAll and
// flushes, and bad input (rma-passive.ts). Inline and threads progress.
// testlist: rma-fence np 1,2,4 inline, 2,3 threads; rma-passive computes np 2 threads (and 3 threads);
// counter, mutex, accumulate np 4 inline and threads; dynamic np 3 and dynamic-fence np 2 inline and threads; errors np 2;
// fence-writes np 2 inline (one socket write per fence epoch)
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('one-sided communication: fence and PSCW epochs', () => {
  it.each([
    [1, 'inline'],
    [2, 'inline'],
    [4, 'inline'],
    [2, 'threads'],
    [3, 'threads'],
  ])('np %i, progress %s: Put/Get byte for byte, accumulates, FetchAndOp, CompareAndSwap, PSCW', async (np, progress) => {
    expectOk(await runJob(np, program('rma-fence.ts'), { flags: ['--timeout', '150', '--progress', progress], killAfterMs: 170_000 }), 'rma-fence OK', np);
  }, 180_000);
});

describe('one-sided communication: what an epoch writes', () => {
  it('np 2, progress inline: a fence epoch of a 1 MiB Put is one socket write at the origin (the notice joins the Put)', async () => {
    expectOk(await runJob(2, program('fence-writes.ts'), { flags: ['--timeout', '90', '--progress', 'inline'], killAfterMs: 110_000 }), 'fence-writes OK', 2);
  }, 120_000);
});

describe('one-sided communication: passive target', () => {
  it.each([2, 3])('np %i, progress threads: lock/Put/unlock, Get and Accumulate complete while the target computes without calling MPI', async (np) => {
    expectOk(await runJob(np, program('rma-passive.ts'), { args: ['computes'], flags: ['--timeout', '120', '--progress', 'threads'], killAfterMs: 140_000 }), 'rma-passive OK', np);
  }, 150_000);

  it.each([
    ['counter', 'inline'],
    ['counter', 'threads'],
    ['mutex', 'inline'],
    ['mutex', 'threads'],
    ['accumulate', 'inline'],
    ['accumulate', 'threads'],
  ])('%s, np 4, progress %s', async (which, progress) => {
    expectOk(await runJob(4, program('rma-passive.ts'), { args: [which], flags: ['--timeout', '150', '--progress', progress], killAfterMs: 170_000 }), 'rma-passive OK', 4);
  }, 180_000);

  it.each(['inline', 'threads'])('createDynamic, attach/detach, np 3, progress %s: Put and Get at attached addresses', async (progress) => {
    expectOk(await runJob(3, program('rma-passive.ts'), { args: ['dynamic'], flags: ['--timeout', '120', '--progress', progress], killAfterMs: 140_000 }), 'rma-passive OK', 3);
  }, 150_000);

  // Before its fix (a dynamic window's fence notice passed Puts held for an attach), 2 of 3 threads runs failed.
  it.each(['inline', 'threads'])('createDynamic, np 2, progress %s: a fence of two members ends after its Put while the target attaches and detaches', async (progress) => {
    expectOk(await runJob(2, program('rma-passive.ts'), { args: ['dynamic-fence'], flags: ['--timeout', '120', '--progress', progress], killAfterMs: 140_000 }), 'rma-passive OK', 2);
  }, 150_000);

  it('bad input: MPIErrors naming the call (ERR_RMA_SYNC, ERR_RMA_RANGE with the size, ERR_LOCKTYPE, ...), np 2', async () => {
    expectOk(await runJob(2, program('rma-passive.ts'), { args: ['errors'], flags: ['--timeout', '90'], killAfterMs: 110_000 }), 'rma-passive OK', 2);
  }, 120_000);
});
