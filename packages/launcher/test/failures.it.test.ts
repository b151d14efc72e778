/**
 * Failure semantics of mpiexec (API.md "Launcher"): any failing process ends
 * the whole job with one line naming rank, host, pid and reason, and the
 * right exit status; never a hang. Ranks use the PMI client directly
 * (fixtures/pmi-rank.mjs); the others wait in a fence the failed rank never
 * reaches, so only the launcher can end them.
 *
 * testlist: { file: 'failures.it.test.ts', np: [3, 4] }
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PMI_RANK, isAlive, runMpiexec } from './run-mpiexec.ts';

const FAILURE_LINE = /^mpiexec: rank (\d+) \(host [^,]+, pid \d+\) (.*)$/m;

function failureLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => FAILURE_LINE.test(l));
}

describe('mpiexec failure semantics', () => {
  it('propagates a non-zero exit code and names the rank', async () => {
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'exit-code', '2', '3']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(3);
    expect(failureLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/mpiexec: rank 2 \(host .+, pid \d+\) exited with code 3; aborting the job \(4 processes\)/);
  });

  it('shows the stack of an uncaught exception, then one line naming the rank', async () => {
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'throw', '1']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Error: boom from rank 1');
    expect(r.stderr).toMatch(/at .*pmi-rank\.mjs/);
    const lines = failureLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mpiexec: rank 1 .* exited with code 1/);
    // The stack comes before the failure line.
    expect(r.stderr.indexOf('boom from rank 1')).toBeLessThan(r.stderr.indexOf('mpiexec: rank 1'));
  });

  it('treats an unhandled rejection as a failure', async () => {
    const r = await runMpiexec(['-n', '3', PMI_RANK, 'reject', '2']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('rejected in rank 2');
    expect(failureLines(r.stderr)[0]).toMatch(/^mpiexec: rank 2 .* exited with code 1/);
  });

  it('fails a rank that exits 0 before init while the others wait in a fence', async () => {
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'exit-before-init', '1']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    const lines = failureLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mpiexec: rank 1 .* exited with code 0 before calling MPI\.init/);
  });

  it('fails a rank that exits 0 after init without finalize', async () => {
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'no-finalize', '3']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    const lines = failureLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mpiexec: rank 3 .* exited with code 0 without calling MPI\.finalize/);
  });

  it('a rank that just returns without finalize exits by itself (idle PMI socket) and fails the job', async () => {
    const r = await runMpiexec(['-n', '3', PMI_RANK, 'forget-finalize', '0']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    expect(failureLines(r.stderr)[0]).toMatch(/^mpiexec: rank 0 .* exited with code 0 without calling MPI\.finalize/);
  });

  it('ends the job with the code given to abort and prints its message', async () => {
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'abort', '1', '7']);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(7);
    expect(r.stderr).toMatch(/^mpiexec: rank 1 \(host .+, pid \d+\) called MPI\.abort\(7\): rank 1 gives up$/m);
    expect(failureLines(r.stderr)).toHaveLength(1);
  });

  it('--timeout prints a roll-call with what each rank is blocked in, then exits 124', async () => {
    // 15 s: four ranks must have connected before the roll-call for its lines to hold (3 s failed on a loaded machine).
    // The helper's hang deadline: mpiexec's own start-up (the --timeout clock starts once it has spawned the
    // ranks: 4.1-12.9 s in 20 runs at load 29-41, so some 25 s at CI's load 70) + 15 s + the roll-call's 1 s
    // wait for busy rank 1 + 1 s before SIGKILL = about 42 s at CI's load. The default 30 s killed the job once
    // under CI-like load, before it could end itself (the whole job took 20.4-29.3 s in those 20 runs); 90 s is
    // twice the estimate, within the test's 120 s.
    const r = await runMpiexec(['-n', '4', '--timeout', '15', PMI_RANK, 'hang'], { deadlineMs: 90_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.status, r.stderr).toBe(124);
    expect(r.stderr).toMatch(/roll-call of 4 processes/);
    expect(r.stderr).toMatch(/rank 0 \(host .+, pid \d+\): not in MPI/);
    expect(r.stderr).toMatch(/rank 1 \(host .+, pid \d+\): no answer \(busy outside MPI or not connected\)/);
    expect(r.stderr).toMatch(/rank 2 \(host .+, pid \d+\): blocked in recv \(comm COMM_WORLD, peer 0, tag 42\)/);
    expect(r.stderr).toMatch(/rank 3 \(host .+, pid \d+\): blocked in recv \(comm COMM_WORLD, peer 0, tag 42\)/);
    expect(r.stderr).toMatch(/--timeout 15 s fired/);
    // The roll-call comes before the line that ends the job.
    expect(r.stderr.indexOf('roll-call')).toBeLessThan(r.stderr.indexOf('fired'));
  });
});

describe('mpiexec signals', () => {
  it('forwards SIGINT and exits 130 without leftovers', async () => {
    const dir = path.join(os.tmpdir(), `tsmpi-sig-${process.pid}-${Date.now()}`);
    const report = path.join(dir, 'report.json');
    let sent = false;
    const r = await runMpiexec(['-n', '3', '--output-dir', dir, '--report-json', report, PMI_RANK, 'stuck'], {
      onOutput: {
        text: 'stuck rank 2',
        action: (pid) => {
          sent = true;
          process.kill(pid, 'SIGINT');
        },
      },
    });
    expect(sent).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(130);
    expect(r.stderr).toMatch(/mpiexec: received SIGINT; forwarding it to 3 processes/);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { ranks: { pid: number }[] };
    for (const rank of json.ranks) expect(isAlive(rank.pid)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});
