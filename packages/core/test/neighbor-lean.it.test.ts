// The neighbourhood collectives' step-machine path (coll/neighbor-peers.ts) over real mpiexec jobs:
// many rounds of every form on plain typed arrays, repeated and PROC_NULL neighbours, zero counts,
// mismatched block sizes (programs/neighbor-lean.ts); inline and threads progress.
// testlist: neighbor-lean np 2,4,6
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

describe('neighbourhood collectives on the step-machine path', () => {
  it.each([
    [2, 'inline'],
    [4, 'inline'],
    [6, 'inline'],
    [4, 'threads'],
  ])('np %i, progress %s', async (np, progress) => {
    const r = await runJob(np, program('neighbor-lean.ts'), { flags: ['--timeout', '150', '--progress', progress], killAfterMs: 170_000 });
    const ok = r.stdout.split('\n').filter((l) => l.startsWith('neighbor-lean OK')).length;
    if (r.code !== 0 || ok !== np) {
      throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  }, 180_000);
});
