// Init's warm-up of the lean path (setting leanWarmup, packages/core/src/api/lean-warm-up.ts) over real
// mpiexec jobs on loopback TCP: it runs with both ring neighbours (the debug log names the links)
// and its blocking round trips in pairs 0-1, 2-3, ... (the log names each rank's partner; the last
// rank of an odd job has none), and a program that sends on the warm-up's tag and runs a collective
// the moment init returns gets every message in order and counts only its own
// (programs/lean-warm-up.ts); with lean=off it does not run and the same program passes.
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

function warmUpLines(stderr: string): { links: { left: number; right: number; fromLeft: number; toRight: number } }[] {
  return stderr.split('\n').filter((l) => l.includes('"lean warm-up done"')).map((l) => JSON.parse(l));
}

describe("init's warm-up of the lean path", () => {
  it('runs with both neighbours and leaves no message, match or count behind', async () => {
    const r = await runJob(3, program('lean-warm-up.ts'), {
      flags: ['--progress', 'inline', '--log-level', 'debug', '--timeout', '60'], env: { TSMPI_LEAN: 'on', TSMPI_LEAN_WARMUP: '200' }, killAfterMs: 80_000,
    });
    if (r.code !== 0 || linesWith(r.stdout, 'lean-warm-up OK').length !== 3) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
    const done = warmUpLines(r.stderr);
    expect(done.length).toBe(3);
    for (const line of done) expect(line.links).toMatchObject({ fromLeft: 200, toRight: 200 });
    const partners = r.stderr.split('\n').filter((l) => l.includes('"round-trip warm-up done"')).map((l) => JSON.parse(l).partner).sort();
    expect(partners).toEqual([0, 1]);
  }, 90_000);

  it('does not run with lean=off, and the program passes', async () => {
    const r = await runJob(3, program('lean-warm-up.ts'), {
      flags: ['--progress', 'inline', '--log-level', 'debug', '--timeout', '60'], env: { TSMPI_LEAN: 'off', TSMPI_LEAN_WARMUP: '200' }, killAfterMs: 80_000,
    });
    if (r.code !== 0 || linesWith(r.stdout, 'lean-warm-up OK').length !== 3) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
    expect(warmUpLines(r.stderr).length).toBe(0);
    expect(linesWith(r.stderr, 'round-trip warm-up done').length).toBe(0);
  }, 90_000);

  it('rejects a negative TSMPI_LEAN_WARMUP with the allowed range', async () => {
    const r = await runJob(2, program('lean-warm-up.ts'), { env: { TSMPI_LEAN: 'on', TSMPI_LEAN_WARMUP: '-1' } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/leanWarmup.*-1.*0 to 100000/);
  });
});
