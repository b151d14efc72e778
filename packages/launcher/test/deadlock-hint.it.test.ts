// mpiexec's deadlock hint (packages/launcher/src/deadlock-hint.ts) on real jobs: a deadlocked job
// without --timeout gets one line naming every rank's blocked call; a job whose ranks keep
// returning from the same calls gets none; --timeout and --deadlock-hint 0 turn it off.
import { describe, expect, it } from 'vitest';
import { FIXTURES, runMpiexec } from './run-mpiexec.ts';

const PROGRAM = `${FIXTURES}/deadlock-rank.mjs`;
const HINT = 'a deadlock?';

describe('mpiexec --deadlock-hint', () => {
  it('prints one line naming each rank\'s blocked call when no call returns for the delay; the job goes on until stopped', async () => {
    const r = await runMpiexec(['-n', '2', '--deadlock-hint', '2', PROGRAM, 'deadlock'], {
      deadlineMs: 60_000,
      onOutput: { text: HINT, action: (pid) => setTimeout(() => process.kill(pid, 'SIGTERM'), 3_000) },
    });
    expect(r.timedOut).toBe(false);
    const lines = r.stderr.split('\n').filter((l) => l.includes(HINT));
    expect(lines).toHaveLength(1); // once, although the job waited on after it
    expect(lines[0]).toMatch(/^mpiexec: no MPI call of any rank has returned for 2 s, a deadlock\? \(rank 0 blocked in Recv \(comm COMM_WORLD, peer 1, tag 7\); rank 1 blocked in Recv \(comm COMM_WORLD, peer 0, tag 7\)\); --timeout SECONDS/);
    expect(r.status).toBe(143); // ended by our SIGTERM, not by the hint
  }, 90_000);

  it('stays quiet while the ranks keep returning from the same calls', async () => {
    const r = await runMpiexec(['-n', '2', '--deadlock-hint', '1', PROGRAM, 'busy', '5'], { deadlineMs: 60_000 });
    expect(r.stdout).toContain('busy OK');
    expect(r.stderr).not.toContain(HINT);
    expect(r.status).toBe(0);
  }, 90_000);

  it('is off with --deadlock-hint 0 and with --timeout (whose roll-call says the same)', async () => {
    const off = await runMpiexec(['-n', '2', '--deadlock-hint', '0', '--timeout', '6', PROGRAM, 'deadlock'], { deadlineMs: 60_000 });
    expect(off.stderr).not.toContain(HINT);
    expect(off.status).toBe(124);
    const timeout = await runMpiexec(['-n', '2', '--deadlock-hint', '1', '--timeout', '6', PROGRAM, 'deadlock'], { deadlineMs: 60_000 });
    expect(timeout.stderr).not.toContain(HINT);
    expect(timeout.stderr).toMatch(/rank 1 \(host .*\): blocked in Recv \(comm COMM_WORLD, peer 0, tag 7\)/);
    expect(timeout.status).toBe(124);
  }, 90_000);

  it('refuses a negative or missing delay, naming the option', async () => {
    const r = await runMpiexec(['-n', '2', '--deadlock-hint', '-1', PROGRAM, 'deadlock']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--deadlock-hint -1: expected a number of seconds (0: never)');
  });
});
