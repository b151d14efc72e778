// Dynamic processes used from worker threads (issue 37, ADR 0040), through real mpiexec jobs
// (spawn-threads.ts, spawn-threads-worker.ts): a parent's MPI.Worker started before the spawn and
// one started after it send to and receive from every child's MPI.Worker over the spawn
// intercommunicator, then the late thread and the children's threads merge it and allreduce;
// parent rank 0's early thread spawns a child of its own (runtime/dynamic-relay.ts) and exchanges a
// message with it. Before runtime/worker-peers.ts the first send from a parent's thread ended the
// job ("no valid address for process 2"), and a worker thread's spawn was ERR_SPAWN.
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const PROGRAM = program('spawn-threads.ts');

describe('spawn intercommunicators used from worker threads, and a worker thread\'s spawn (np 2, 2 + 1 children)', () => {
  it.each([
    ['inline', '1'],
    ['threads', '1'],
    ['engines', '1'],
    ['inline', '2'],
    ['threads', '2'],
  ])('progress %s, endpoints %s', async (progress, endpoints) => {
    const r = await runJob(2, PROGRAM, { flags: ['--progress', progress, '--endpoints', endpoints, '--timeout', '150'], env: { TSMPI_UNIVERSE: '5' }, killAfterMs: 170_000 });
    const parents = linesWith(r.stdout, 'spawn-threads OK').length;
    const children = linesWith(r.stdout, 'spawn-threads child OK').length;
    const own = linesWith(r.stdout, 'spawn-threads self-child OK').length;
    if (r.code !== 0 || parents !== 2 || children !== 2 || own !== 1) {
      throw new Error(`job failed (exit ${r.code}, ${parents} of 2 parents, ${children} of 2 children, ${own} of 1 thread-spawned child OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  }, 180_000);
});
