// Issue 16's rule for a user thread's own connections: a thread that computes for 5 s or exits must
// not strand messages on them. ep-sender-backlog.ts isends 16 MiB in one turn from a worker, so most
// of it waits in the worker's socket for the kernel, then the worker computes for 5 s (the receiver
// gets every message, in order) or is terminated (the job ends with ERR_PROC_FAILED naming the
// thread, or the receiver got them all; never a hang, never a silent loss). On a reader's route
// (endpointReceive auto with --endpoints 2, docs/adr/0019 and 0021) and on a direct route
// (endpointReceive engine, docs/adr/0015).
// testlist: ep-sender-backlog np 2 (--endpoints 2) per route, computes and terminated
import { describe, expect, it } from 'vitest';
import { program, runJob } from './run-job.ts';

const ROUTES = [['a reader\'s route', 'auto'], ['a direct route', 'engine']] as const;

describe('a thread\'s frames the kernel has not taken yet', () => {
  it.each(ROUTES)('on %s (endpointReceive %s), a sender that computes for 5 s: the receiver gets every message, in order', async (_route, receive) => {
    const r = await runJob(2, program('ep-sender-backlog.ts'), {
      flags: ['--progress', 'threads', '--endpoints', '2', '--timeout', '90'],
      args: ['computes'],
      env: receive === 'engine' ? { TSMPI_ENDPOINT_RECEIVE: 'engine' } : {},
      killAfterMs: 110_000,
    });
    if (r.code !== 0 || !r.stdout.includes('ep-sender-backlog OK computes threads')) {
      throw new Error(`job failed (exit ${r.code})\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    }
    expect(r.stdout).toContain('ep-sender-backlog: all 1024 received');
  }, 120_000);

  it.each(ROUTES)('on %s (endpointReceive %s), a sender terminated with frames queued: ERR_PROC_FAILED naming the thread, or every message arrived', async (_route, receive) => {
    const r = await runJob(2, program('ep-sender-backlog.ts'), {
      flags: ['--progress', 'threads', '--endpoints', '2', '--timeout', '90'],
      args: ['terminated'],
      env: receive === 'engine' ? { TSMPI_ENDPOINT_RECEIVE: 'engine' } : {},
      killAfterMs: 110_000,
    });
    const report = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    // The job ended by itself, not by mpiexec's deadline (a receiver waiting for lost messages).
    expect(r.stderr, report).not.toMatch(/--timeout 90 s fired/);
    if (r.code === 0) {
      // The kernel took everything before the thread died: nothing was lost.
      expect(r.stdout, report).toContain('ep-sender-backlog: all 1024 received');
    } else {
      expect(r.stderr, report).toMatch(/MPI_ERR_PROC_FAILED: progress: worker thread \d+ ended \(exit code 1\) with frames on \d+ of its own connections? that had not reached the kernel/);
    }
  }, 120_000);
});
