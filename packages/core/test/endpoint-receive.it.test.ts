// The endpointReceive setting (docs/adr/0019) through mpiexec: asking for `thread` never changes
// what a job computes or fails it; each process says in one info line which path its endpoints'
// receives take and why; a bad value is refused naming the variable and the allowed values.
// testlist: endpoints np 2 (--endpoints 3) per progress mode
import { describe, expect, it } from 'vitest';
import { program, runJob, type JobResult } from './run-job.ts';

function expectOk(r: JobResult, marker: string): void {
  if (r.code !== 0 || !r.stdout.includes(marker)) {
    throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

/** The endpointReceive info lines of a job's stderr (pino NDJSON), parsed. */
function planLines(stderr: string): { why: string; path: string; progress: string }[] {
  return stderr.split('\n').filter((l) => l.includes('"endpointReceive thread: ')).map((l) => JSON.parse(l));
}

describe('endpointReceive', () => {
  it.each(['threads', 'inline', 'engines'] as const)('thread with --progress %s: the job runs on the engine path and each process says why once', async (progress) => {
    const r = await runJob(2, program('endpoints.ts'), {
      flags: ['--progress', progress, '--endpoints', '3', '--log-level', 'info', '--timeout', '60'],
      env: { TSMPI_ENDPOINT_RECEIVE: 'thread' },
      killAfterMs: 80_000,
    });
    expectOk(r, 'endpoints OK');
    const lines = planLines(r.stderr);
    expect(lines.length).toBe(2);
    for (const l of lines) {
      expect(l.path).toBe('engine');
      expect(l.progress).toBe(progress);
      expect(l.why).toMatch(progress === 'engines' ? /--progress engines/ : /not built/);
    }
  }, 90_000);

  it('engine (the default) logs nothing about it', async () => {
    const r = await runJob(2, program('endpoints.ts'), { flags: ['--endpoints', '3', '--log-level', 'info', '--timeout', '60'], killAfterMs: 80_000 });
    expectOk(r, 'endpoints OK');
    expect(planLines(r.stderr)).toEqual([]);
  }, 90_000);

  it('refuses a value outside engine, thread, naming the variable', async () => {
    const r = await runJob(2, program('endpoints.ts'), { flags: ['--timeout', '60'], env: { TSMPI_ENDPOINT_RECEIVE: 'reader' }, killAfterMs: 80_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/TSMPI_ENDPOINT_RECEIVE.*reader.*engine, thread/);
  }, 90_000);
});
