// Groups through the public API in a real 4-process job (issue 4).
// testlist: group-ops np 4
import { describe, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

describe('groups', () => {
  it('every group operation matches hand-computed results; bad input is ERR_GROUP / ERR_RANK / ERR_ARG', async () => {
    const r = await runJob(4, program('group-ops.ts'), { flags: ['--timeout', '60'] });
    if (r.code !== 0 || linesWith(r.stdout, 'group-ops OK').length !== 4) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
  });
});
