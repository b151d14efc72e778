// testlist: soak np 4 (60 s; TSMPI_SOAK_SECONDS, TSMPI_SOAK_SEED)
/**
 * The soak of issue 17 in CI: packages/core/test/programs/soak.ts for about a
 * minute on 4 ranks (random point-to-point 0 B to 4 MiB with wildcards,
 * probes and cancels, collectives, communicator dup/split/free, a worker
 * thread per rank). Asserts zero lost, duplicated, corrupted and misordered
 * messages, zero wrong collective results, and that the run completes; no
 * timing is asserted. A new seed each run, printed on failure (replay with
 * TSMPI_SOAK_SEED). The hour-long run is scripts/soak-long.sh.
 */
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob } from './run-job.ts';

const SECONDS = Number(process.env['TSMPI_SOAK_SECONDS'] ?? '') || 60;
const SEED = Number(process.env['TSMPI_SOAK_SEED'] ?? '') || Math.floor(Math.random() * 0xffffffff);
// Generous: a round can take seconds on a loaded 2-core machine, and a lost message is only declared after 120 s.
const KILL_AFTER_MS = SECONDS * 1000 + 240_000;

describe('soak', () => {
  it(`mixes traffic for ${SECONDS} s on 4 ranks with zero lost, duplicated or corrupted messages (seed ${SEED})`, async () => {
    const r = await runJob(4, program('soak.ts'), { args: [String(SECONDS), String(SEED)], killAfterMs: KILL_AFTER_MS });
    const line = linesWith(r.stdout, 'soak: {')[0];
    if (r.code !== 0 || line === undefined || !r.stdout.includes('soak OK')) {
      throw new Error(`soak failed (exit ${r.code}); replay with TSMPI_SOAK_SEED=${SEED}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr.slice(-4000)}`);
    }
    const report = JSON.parse(line.slice('soak: '.length)) as Record<string, number>;
    expect(report['lost'], 'lost').toBe(0);
    expect(report['duplicated'], 'duplicated').toBe(0);
    expect(report['corrupted'], 'corrupted').toBe(0);
    expect(report['misordered'], 'misordered').toBe(0);
    expect(report['collectiveErrors'], 'collective errors').toBe(0);
    expect(report['workerErrors'], 'worker errors').toBe(0);
    // It did run: every kind of traffic happened at least once.
    expect(report['rounds']).toBeGreaterThan(0);
    expect(report['messages']).toBeGreaterThan(0);
    expect(report['collectives']).toBeGreaterThan(0);
    expect(report['commsCreated']).toBeGreaterThan(0);
    expect(report['workerMessages']).toBeGreaterThan(0);
    console.log(line); // the figures, for the record
  }, KILL_AFTER_MS + 30_000);
});
