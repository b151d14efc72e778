// The lean send (docs/adr/0020-lean-common-path.md) over a real mpiexec job on loopback TCP: the
// same program passes in inline progress (byte-view Isends take the lean route) and in threads
// progress (the main thread sends on its direct route: every send takes the general path).
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

describe('lean send', () => {
  it.each(['inline', 'threads'])('keeps MPI order, probes, stats and errors, progress %s', async (progress) => {
    const r = await runJob(2, program('lean-send.ts'), { flags: ['--progress', progress] });
    if (r.code !== 0 || linesWith(r.stdout, 'lean-send OK').length !== 2) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });
});
