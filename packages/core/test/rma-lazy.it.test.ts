// Lazy lock acquisition over real mpiexec jobs (api/win-passive.ts, device/rma-target.ts RMA_BATCH):
// a conflicting exclusive lock still makes a lock/Put/unlock batch wait, shared locks, empty epochs,
// MODE_NOCHECK, Puts larger than a batch, fetches and accumulates in order inside a lazy epoch, refused flush and Get batches,
// lockAll (rma-lazy.ts conflict; inline and threads progress), epochs of one operation sent as one frame
// (rma-lazy.ts epochs), and a lost target: an MPIError, never a hang (rma-lazy.ts lost).
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

describe('one-sided communication: lazy locks', () => {
  it.each(['inline', 'threads'])('np 3, progress %s: a conflicting exclusive lock delays the batch; shared, empty, NOCHECK, large, fetching and lockAll epochs', async (progress) => {
    const r = await runJob(3, program('rma-lazy.ts'), { args: ['conflict'], flags: ['--timeout', '120', '--progress', progress], killAfterMs: 140_000 });
    const ok = r.stdout.split('\n').filter((l) => l.startsWith('rma-lazy OK')).length;
    if (r.code !== 0 || ok !== 3) throw new Error(`job failed (exit ${r.code}, ${ok} of 3 ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }, 150_000);

  it.each(['inline', 'threads'])('np 3, progress %s: one-operation epochs (one frame each): shared beside shared, exclusive after shared, a Get after a Put epoch, contended accumulates', async (progress) => {
    const r = await runJob(3, program('rma-lazy.ts'), { args: ['epochs'], flags: ['--timeout', '120', '--progress', progress], killAfterMs: 140_000 });
    const ok = r.stdout.split('\n').filter((l) => l.startsWith('rma-lazy OK')).length;
    if (r.code !== 0 || ok !== 3) throw new Error(`job failed (exit ${r.code}, ${ok} of 3 ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }, 150_000);

  // Inline only: the lost side drops its main thread's transport, which under threads progress the engines own.
  it('np 2, progress inline: lock/Put/unlock to a lost target fails with an MPIError', async () => {
    const r = await runJob(2, program('rma-lazy.ts'), { args: ['lost'], flags: ['--progress', 'inline'], killAfterMs: 60_000 });
    expect(r.stderr).not.toContain('[run-job] killed');
    expect(r.stdout).toMatch(/rma-lazy: an epoch to the lost target failed with MPI_ERR_PROC_FAILED/);
  }, 70_000);
});
