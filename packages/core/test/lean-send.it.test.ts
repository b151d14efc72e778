// The lean send of setting lean (docs/adr/0020-lean-common-path.md) over a real mpiexec job on
// loopback TCP: the same program passes with lean=send and with lean=off, in inline and threads progress.
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

describe('lean send', () => {
  it.each([
    ['send', 'inline'], ['on', 'inline'], ['off', 'inline'], ['send', 'threads'], ['on', 'threads'],
  ])('keeps MPI order, probes, stats and errors with lean=%s, progress %s', async (lean, progress) => {
    const r = await runJob(2, program('lean-send.ts'), { flags: ['--progress', progress], env: { TSMPI_LEAN: lean } });
    if (r.code !== 0 || linesWith(r.stdout, 'lean-send OK').length !== 2) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });
});
