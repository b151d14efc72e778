// Many threads starting at once: 16 MPI.Worker threads per process on 2
// processes all call init (each opens its own connections to the peer's channel
// hosts, docs/adr/0015) and send at once, ten jobs in a row. A thread
// connection's handshake that stalls on the busy peer is retried
// (transport-tcp tuning.threadConnectRetryMs), so every job must pass.
// testlist: mt-pt2pt np 2 (16 threads, x10 with --progress threads, x3 inline)
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

const RUNS = { threads: 10, inline: 3 } as const;

describe.each(Object.entries(RUNS))('16 threads per process start at once (--progress %s)', (progress, runs) => {
  it(`passes ${runs} jobs in a row`, async () => {
    for (let run = 1; run <= runs; run++) {
      // --timeout: a job still running after 120 s (the budget it always had) ends with mpiexec's
      // roll-call of what every rank and thread is blocked in, not a silent SIGKILL (CI saw one at
      // load 60-70 with nothing to go on).
      const r = await runJob(2, program('mt-pt2pt.ts'), { flags: ['--progress', progress, '--timeout', '120'], args: ['16', '50'], killAfterMs: 150_000 });
      if (r.code !== 0 || !r.stdout.includes('mt-pt2pt OK (16 threads x 50 messages')) {
        throw new Error(`job ${run} of ${runs} failed (exit ${r.code}, signal ${r.signal})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      }
    }
  }, 40 * 60_000); // generous: a job took over a minute at load average 70
});
