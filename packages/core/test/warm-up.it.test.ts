// The init warm-up (runtime/warm-up.ts, TSMPI_WARMUP / --warmup): it runs (the debug log says how many
// turns) and sends nothing to other ranks: MPI.stats counts nothing after init and no receive can
// match a warm-up frame (programs/warm-up.ts).
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

describe('the init warm-up', () => {
  it.each([
    ['TSMPI_WARMUP=400', [], { TSMPI_WARMUP: '400' }, 400],
    ['--warmup 300', ['--warmup', '300'], {}, 300],
  ] as const)('%s: runs its turns and leaves no message, count or match behind', async (_what, flags, env, turns) => {
    const r = await runJob(3, program('warm-up.ts'), { flags: [...flags, '--log-level', 'debug', '--timeout', '60'], env, killAfterMs: 80_000 });
    if (r.code !== 0) throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    expect(linesWith(r.stdout, 'warm-up OK').length).toBe(3);
    const done = r.stderr.split('\n').filter((l) => l.includes('"warm-up done"'));
    expect(done.length).toBe(3);
    for (const line of done) expect(JSON.parse(line).turns).toBe(turns);
  }, 90_000);

  it('rejects a negative --warmup with the allowed range', async () => {
    const r = await runJob(2, program('warm-up.ts'), { flags: ['--warmup', '-1'] });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/warmup.*-1.*0 to 1000000/);
  });
});
