// Dynamic processes used from worker threads (issue 37, ADR 0040), through real mpiexec jobs
// (spawn-threads.ts, spawn-threads-worker.ts): a parent's MPI.Worker started before the spawn and
// one started after it send to and receive from every child's MPI.Worker over the spawn
// intercommunicator, then the late thread and the children's threads merge it and allreduce; a
// worker thread's own spawn is a clear ERR_SPAWN. Before runtime/worker-peers.ts the first send
// from a parent's thread ended the job ("no valid address for process 2").
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const PROGRAM = program('spawn-threads.ts');

describe('spawn intercommunicators used from worker threads (np 2, 2 children)', () => {
  it.each([
    ['inline', '1'],
    ['threads', '1'],
    ['engines', '1'],
    ['inline', '2'],
    ['threads', '2'],
  ])('progress %s, endpoints %s', async (progress, endpoints) => {
    const r = await runJob(2, PROGRAM, { flags: ['--progress', progress, '--endpoints', endpoints, '--timeout', '150'], env: { TSMPI_UNIVERSE: '4' }, killAfterMs: 170_000 });
    const parents = linesWith(r.stdout, 'spawn-threads OK').length;
    const children = linesWith(r.stdout, 'spawn-threads child OK').length;
    if (r.code !== 0 || parents !== 2 || children !== 2) {
      throw new Error(`job failed (exit ${r.code}, ${parents} of 2 parents and ${children} of 2 children OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  }, 180_000);
});
