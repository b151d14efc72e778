// Collectives over real mpiexec jobs on loopback TCP (issue 5): every collective of API.md
// in both forms on COMM_SELF (size 1) and COMM_WORLD of 2, 3, 5 and 8 processes.
// testlist: coll-suite np 2,3,5,8
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('collectives', () => {
  // 8 processes on 2 cores is oversubscribed: slow but fine; keep the large count moderate there.
  it.each([
    [2, '40000'],
    [3, '40000'],
    [5, '40000'],
    [8, '20000'],
  ])('runs every collective, op and type pair, IN_PLACE and nonblocking form (np %i)', async (np, large) => {
    expectOk(await runJob(np, program('coll-suite.ts'), { args: [large], flags: ['--timeout', '150'], killAfterMs: 170_000 }), 'coll-suite OK', np);
  }, 180_000);
});
