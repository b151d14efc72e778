// testlist: idle-rss np 2, five jobs.
// Issue 38, memory per rank: an idle hello rank (a .mjs program on plain Node: the test programs
// run as built JavaScript) stays within IDLE_RSS_LIMIT_MIB of resident memory, measured the same
// way in every run (programs/idle-rss.ts: after init and a barrier). RSS is not a timing, but
// it moves with the machine's load a little: five jobs, every rank of each must stay within.
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

/**
 * Measured on main (2026-11-28, Node 20, 2 cores): 66-68 MiB per rank, of which bare Node is
 * 41 MiB and the library's import about 21. Since ranks load core and the transport as bundles
 * (ADR 0052) and sched_yield's WASI module has no functions: 59.4-60.1 MiB (2026-11-29, loaded
 * machine, 10 ranks). Since msgpackr loads at the first object message, the wire-up writes its own
 * MessagePack and node:tls loads at the first secure connection (ADR 0057): 57.1-58.4 MiB (2026-11-29,
 * load average 30-90, 30 ranks); issue 38's probe (VmRSS of a 4-rank hello's rank 1.5 s after init)
 * gives 58.7-59.3 MB there. The limit keeps ~4 MiB of margin for CI noise.
 */
const IDLE_RSS_LIMIT_MIB = 62;
const RUNS = 5;

describe('idle rank memory (issue 38)', () => {
  it(`keeps an idle hello rank within ${IDLE_RSS_LIMIT_MIB} MiB of RSS, ${RUNS} jobs of 2`, async () => {
    const figures: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const r = await runJob(2, program('idle-rss.ts'), { killAfterMs: 60_000 });
      const lines = r.stdout.split('\n').filter((l) => l.startsWith('idle-rss rank '));
      if (r.code !== 0 || lines.length !== 2) throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      figures.push(...lines.map((l) => Number(l.split(' ')[3])));
    }
    console.log(`[idle-rss] MiB per rank over ${RUNS} jobs: ${figures.join(', ')}`);
    expect(figures.every((f) => Number.isFinite(f) && f > 0)).toBe(true);
    expect(Math.max(...figures)).toBeLessThanOrEqual(IDLE_RSS_LIMIT_MIB);
  }, 400_000);
});
