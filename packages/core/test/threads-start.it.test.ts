// Many threads starting at once: 16 MPI.Worker threads per process on 2
// processes all call init (each opens its own connections to the peer's channel
// hosts, docs/adr/0015) and send at once, ten jobs in a row. A thread
// connection's handshake that stalls on the busy peer is retried
// (transport-tcp tuning.threadConnectRetryMs), so every job must pass.
// testlist: mt-pt2pt np 2 (16 threads, x10 with --progress threads, x3 inline)
import { describe, it } from 'vitest';
import { program, runJob } from './run-job.ts';

const RUNS = { threads: 10, inline: 3 } as const;
/**
 * A job is slow, not stuck, on a loaded machine: it needs about 22 s of CPU (user + sys), nearly
 * all of it the 32 worker threads loading tsx and @tsmpi/core from source (one 16-thread job
 * without messages took 19.6 s of it), so its time grows with the load. 98 jobs at load average
 * 23-135 (2026-11-26, 2 cores, both progress modes, some pinned to one core) all passed, in up to
 * 84 s, and up to 105 s at nice 5; the 120 s they had left too little room (CI once killed one at
 * load 60-70 after 120 s with no output).
 */
const JOB_TIMEOUT_S = 240;

describe.each(Object.entries(RUNS))('16 threads per process start at once (--progress %s)', (progress, runs) => {
  it(`passes ${runs} jobs in a row`, async () => {
    for (let run = 1; run <= runs; run++) {
      // --timeout: a job still running after JOB_TIMEOUT_S ends with mpiexec's roll-call of what every
      // rank and thread is blocked in (worker threads included from their start), not a silent SIGKILL.
      const r = await runJob(2, program('mt-pt2pt.ts'), { flags: ['--progress', progress, '--timeout', String(JOB_TIMEOUT_S)], args: ['16', '50'], killAfterMs: (JOB_TIMEOUT_S + 30) * 1000 });
      if (r.code !== 0 || !r.stdout.includes('mt-pt2pt OK (16 threads x 50 messages')) {
        throw new Error(`job ${run} of ${runs} failed (exit ${r.code}, signal ${r.signal})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      }
    }
  }, 60 * 60_000); // generous: a job took over a minute at load average 70, up to 105 s at 135
});
