// testlist: limits-eager np 2 (--eager-limit 8 MiB, threads and inline); limits-busy-host np 2 (inline)
// Issue 17, limits: sizes and queues at their edges fail clearly or work, never hang.
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

function expectOk(r: { code: number | null; stdout: string; stderr: string }, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

describe('limits', () => {
  it.each(['threads', 'inline'])('sends 1-8 MiB eager messages from a thread that does not host the channel (--progress %s)', async (progress) => {
    const r = await runJob(2, program('limits-eager.ts'), { flags: ['--progress', progress, '--eager-limit', String(8 << 20)], killAfterMs: 200_000 });
    expectOk(r, `limits-eager OK ${progress}`);
  }, 240_000);

  it('waits for room in a full injection ring while the channel\'s host thread is busy', async () => {
    expectOk(await runJob(2, program('limits-busy-host.ts'), { flags: ['--progress', 'inline'], args: ['3000'], killAfterMs: 200_000 }), 'limits-busy-host OK');
  }, 240_000);
});
