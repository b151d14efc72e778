// Context-id allocation with real threads: the deadlock scenario of
// papers/context-id-allocation.txt Figure 1 (2 processes x 2 threads), and
// concurrent createGroup from several threads with distinct tags.
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

describe('context ids with threads (Figure 1)', () => {
  it.each([['eager', {}], ['base-only', { TSMPI_CTXID_EAGER: '0' }]] as const)(
    'the new algorithm (%s allocation) completes the scenario 50 times in a row, then concurrent createGroup from 3 threads',
    async (_mode, env) => {
      const r = await runJob(2, program('fig1.ts'), { args: ['50'], env, flags: ['--timeout', '100'] });
      if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
      expect(r.stdout).toContain('fig1 OK (50 rounds');
    },
  );

  it('the original algorithm (no initial synchronization) deadlocks, and the roll-call shows where', async () => {
    const r = await runJob(2, program('fig1.ts'), { args: ['50'], env: { TSMPI_CTXID_ALGO: 'original' }, flags: ['--timeout', '30'], killAfterMs: 90_000 });
    expect(r.code).toBe(124);
    expect(r.stdout).not.toContain('fig1 OK');
    // Each process: one thread waits in COMM_SELF.dup, its sibling in the dup of its per-thread communicator.
    for (const rank of [0, 1]) {
      const line = r.stderr.split('\n').find((l) => l.includes(`rank ${rank} (`)) ?? '';
      expect(line).toContain('Comm.dup (comm COMM_SELF)');
      expect(line).toContain('Comm.dup (comm COMM_WORLD.dup');
    }
  });
});
