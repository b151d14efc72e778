// MPI.profile hooks and comm.stats() over real mpiexec jobs (issue 41).
// testlist: profile-hooks np 2
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const n = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || n !== np) throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
}

describe('profiling hooks', () => {
  it('see each call once with its args, result and duration; compose in order; uninstall', async () => {
    expectOk(await runJob(2, program('profile-hooks.ts')), 'profile-hooks OK', 2);
  }, 120_000);
});
