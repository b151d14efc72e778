// Derived datatypes over real mpiexec jobs on loopback TCP (issue 5): constructors, pack /
// unpack, non-contiguous layouts in point-to-point and collectives, a datatype freed while
// an Irecv using it is pending.
// testlist: dt-suite np 3
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

describe('derived datatypes', () => {
  it('round-trips vector, indexed, struct, subarray and resized layouts in point-to-point and collectives', async () => {
    const r = await runJob(3, program('dt-suite.ts'), { flags: ['--timeout', '100'], killAfterMs: 110_000 });
    const ok = r.stdout.split('\n').filter((l) => l.startsWith('dt-suite OK')).length;
    if (r.code !== 0 || ok !== 3) throw new Error(`job failed (exit ${r.code}, ${ok} of 3 ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }, 120_000);
});
