// Topologies and neighborhood collectives over real mpiexec jobs (issue 36): Cartesian grids with a
// halo exchange checked against Sendrecv, shift, sub, graph and distributed graph neighbours and
// weights, object, I... and ...Init forms, dup, and the errors; inline and threads progress.
// testlist: topo-suite np 4,6; topo-threads np 4
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string, np: number): void {
  const ok = r.stdout.split('\n').filter((l) => l.startsWith(marker)).length;
  if (r.code !== 0 || ok !== np) {
    throw new Error(`job failed (exit ${r.code}, ${ok} of ${np} ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('topologies and neighborhood collectives', () => {
  it.each([
    [4, 'inline'],
    [6, 'inline'],
    [4, 'threads'],
  ])('np %i, progress %s', async (np, progress) => {
    expectOk(await runJob(np, program('topo-suite.ts'), { flags: ['--timeout', '150', '--progress', progress], killAfterMs: 170_000 }), 'topo-suite OK', np);
  }, 180_000);

  it('a CartComm and a DistGraphComm cross to a worker thread and work there (np 4)', async () => {
    expectOk(await runJob(4, program('topo-threads.ts'), { flags: ['--timeout', '100'], killAfterMs: 120_000 }), 'topo-threads OK', 4);
  }, 130_000);
});
