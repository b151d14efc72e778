// --wait (runtime/wait-poll.ts): blocking calls poll with --progress inline by default, sleep with
// --wait block, with a zero poll budget and under --progress threads; in every mode a rank that
// waited past the poll budget is still woken by its message.
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

describe('how blocking calls wait', () => {
  it.each([
    ['the default (inline progress)', [], {}, 'poll'],
    ['--wait block', ['--wait', 'block'], {}, 'block'],
    ['a zero poll budget', [], { TSMPI_WAIT_POLL_MS: '0' }, 'block'],
    ['--progress threads', ['--progress', 'threads'], {}, 'block'],
  ] as const)('%s: MPI.config().wait is right and calls complete across a long wait', async (_what, flags, env, mode) => {
    const r = await runJob(3, program('wait-mode.ts'), { flags: [...flags, '--timeout', '60'], args: [mode], env, killAfterMs: 80_000 });
    if (r.code !== 0) throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    expect(linesWith(r.stdout, 'wait-mode OK').length).toBe(3);
  }, 90_000);

  it('rejects an unknown --wait value with the allowed ones', async () => {
    const r = await runJob(2, program('wait-mode.ts'), { flags: ['--wait', 'spin'], args: ['poll'] });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/wait.*spin.*poll, block/);
  });
});
