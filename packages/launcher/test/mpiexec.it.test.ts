/**
 * mpiexec end to end (API.md "Launcher"): wire-up across ranks, output
 * forwarding, options, reports. Real processes and sockets.
 *
 * testlist: { file: 'mpiexec.it.test.ts', np: [1, 2, 3, 4] }
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, PMI_RANK, runMpiexec } from './run-mpiexec.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-launcher-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('mpiexec runs a job', () => {
  it('wires up 4 ranks: put, fence and get see every rank, env reaches every rank', async () => {
    const r = await runMpiexec(['-n', '4', '--channels', '3', '--env', 'EXTRA=yes', PMI_RANK, 'ok']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').sort();
    expect(lines).toHaveLength(4);
    for (let rank = 0; rank < 4; rank++) {
      expect(lines[rank]).toMatch(new RegExp(`^rank ${rank} of 4: saw 4 addresses \\(local rank ${rank} of 4, host .+, channels 3, extra yes\\)$`));
    }
  });

  it('runs a TypeScript program (compiled once for the job: ts-compile.ts)', async () => {
    const r = await runMpiexec(['-n', '3', `${FIXTURES}/ts-rank.ts`]);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual([0, 1, 2].map((k) => `ts rank ${k}: sum of squares 5`));
  });

  it('-l tags every line with its rank', async () => {
    const r = await runMpiexec(['-n', '2', '-l', PMI_RANK, 'ok']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').sort();
    expect(lines[0]).toMatch(/^\[0\] rank 0 of 2/);
    expect(lines[1]).toMatch(/^\[1\] rank 1 of 2/);
  });

  it('--timestamp-output prefixes the time since launch', async () => {
    const r = await runMpiexec(['-n', '1', '--timestamp-output', '-l', PMI_RANK, 'ok']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\[\d+\.\d{3}\] \[0\] rank 0 of 1/);
  });

  it('never mixes two processes inside one line', async () => {
    const perRank = 1500;
    const width = 400;
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'lines', String(perRank), String(width)]);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    const seen = [0, 0, 0, 0];
    const partial = [0, 0, 0, 0];
    for (const line of lines) {
      const full = /^R(\d):(\d+):(x+)$/.exec(line);
      if (full !== null) {
        expect(full[3]!.length).toBe(width);
        seen[Number(full[1])]!++;
        continue;
      }
      const tail = /^R(\d):partial-without-newline$/.exec(line);
      expect(tail, `a mixed line: ${line.slice(0, 80)}`).not.toBeNull();
      partial[Number(tail![1])]!++;
    }
    expect(seen).toEqual([perRank, perRank, perRank, perRank]);
    expect(partial).toEqual([1, 1, 1, 1]);
  });

  it('hands every line to a slow reader before it exits', async () => {
    // 4 x 2000 lines of 400 bytes, read 100 ms apart: far more than the pipes hold, so mpiexec's
    // own stdout still has writes queued when the job ends; exiting then would drop them (with
    // 5 ms between reads the reader kept up and the test passed without cli.ts's drain).
    // About 20 s at load 40 (2 cores); the deadline ends a stall inside the test's own timeout.
    const r = await runMpiexec(['-n', '4', PMI_RANK, 'lines', '2000', '400'], { slowReaderMs: 100, deadlineMs: 100_000 });
    const perRank = [0, 0, 0, 0];
    for (const m of r.stdout.matchAll(/^R(\d):\d+:x+$/gm)) perRank[Number(m[1])]!++;
    expect(r.timedOut, `mpiexec still ran after 100 s and was killed: lines per rank ${JSON.stringify(perRank)}, stderr:\n${r.stderr}`).toBe(false);
    expect(r.status).toBe(0);
    expect(perRank).toEqual([2000, 2000, 2000, 2000]);
  }, 130_000);

  it('refuses a wire-up client with a wrong key and the job still completes', async () => {
    const r = await runMpiexec(['-n', '3', PMI_RANK, 'intruder']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/intruder refused: .*refused the job key/);
    expect(r.stdout).not.toContain('intruder accepted');
    // Logged, as one line for people (--log-format text, the default), with the intruder's own address (not mpiexec's) and a constant reason.
    expect(r.stderr).toMatch(/^mpiexec: warn: wire-up connection refused .*\(remote=127\.0\.0\.1:\d+, reason="hello does not prove the job key"/m);
    expect(r.stderr).not.toMatch(/^\{"level"/m);
    expect(r.stdout.match(/saw 3 addresses/g)).toHaveLength(3);
  });

  it('sends stdin to rank 0', async () => {
    const r = await runMpiexec(['-n', '2', PMI_RANK, 'stdin'], { input: 'hello from stdin\n' });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('rank 0 read: hello from stdin');
  });

  it('--report-json and --output-dir record every rank', async () => {
    const dir = path.join(tmp, 'out');
    const report = path.join(tmp, 'report.json');
    const r = await runMpiexec(['-n', '3', '--output-dir', dir, '--report-json', report, PMI_RANK, 'ok']);
    expect(r.status).toBe(0);
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      size: number; exitStatus: number; failure: unknown;
      ranks: { rank: number; pid: number; exitCode: number; signal: string | null; durationMs: number; initialized: boolean; finalized: boolean; messages: Record<string, number> }[];
    };
    expect(json.size).toBe(3);
    expect(json.exitStatus).toBe(0);
    expect(json.failure).toBeNull();
    for (const rank of json.ranks) {
      expect(rank.exitCode).toBe(0);
      expect(rank.signal).toBeNull();
      expect(rank.initialized && rank.finalized).toBe(true);
      expect(typeof rank.durationMs).toBe('number');
      expect(rank.messages).toEqual({ messagesSent: rank.rank, messagesReceived: 2 * rank.rank, bytesSent: 100 * rank.rank, bytesReceived: 7 });
      expect(readFileSync(path.join(dir, `rank.${rank.rank}.out`), 'utf8')).toMatch(new RegExp(`^rank ${rank.rank} of 3`));
      expect(readFileSync(path.join(dir, `rank.${rank.rank}.err`), 'utf8')).toBe('');
    }
  });

  it('--report-json records the failure', async () => {
    const report = path.join(tmp, 'failed.json');
    const r = await runMpiexec(['-n', '2', '--report-json', report, PMI_RANK, 'exit-code', '1', '5']);
    expect(r.status).toBe(5);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { exitStatus: number; failure: { rank: number; reason: string }; ranks: { exitCode: number | null; signal: string | null }[] };
    expect(json.exitStatus).toBe(5);
    expect(json.failure).toEqual({ rank: 1, reason: 'exited with code 5' });
    expect(json.ranks[1]!.exitCode).toBe(5);
  });

  it('runs a program that is not JavaScript directly', async () => {
    const r = await runMpiexec(['-n', '2', '-l', 'sh', '-c', 'echo rank=$TSMPI_RANK size=$TSMPI_SIZE']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(['[0] rank=0 size=2', '[1] rank=1 size=2']);
  });
});

describe('mpiexec command line', () => {
  it('--help describes the common options and the settings from the table on one screen; --help-all every option', async () => {
    const r = await runMpiexec(['--help']);
    expect(r.status).toBe(0);
    for (const flag of ['-n, -np N', '--channels N', '--matching parallel|global', '--refcount naive|predefined|gc', '--progress', '--endpoints N', '--log-level', '--timeout SECONDS', '--report-json', '--help-all', 'Examples:']) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout.split('\n').length).toBeLessThanOrEqual(40);
    const all = await runMpiexec(['--help-all']);
    expect(all.status).toBe(0);
    for (const flag of ['--dry-run', '--timestamp-output', '--output-dir DIR', '--port-range LO-HI', '--iface', 'Exit status:', 'TSMPI_LOCAL_RANK']) {
      expect(all.stdout).toContain(flag);
    }
  });

  it('--dry-run prints the process map and starts nothing', async () => {
    const r = await runMpiexec(['-n', '4', '--endpoints', '2', '--channels', '3', '--hosts', 'localhost:2', '--dry-run', 'does-not-exist.ts']);
    expect(r.status).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^\d+\s/.test(l));
    expect(rows).toHaveLength(4);
    expect(rows[3]).toMatch(/^3\s+localhost\s+3\s+2\s+3$/);
    expect(r.stdout).toMatch(/rank\s+host\s+local-rank\s+endpoints\s+channels/);
  });

  it.each([
    [['-n', 'zero', 'x.ts'], /-n zero: expected an integer/],
    [['-n', '2', '--matching', 'fast', 'x.ts'], /--matching fast: expected one of parallel, global/],
    [['-n', '2', '--channels', '0', 'x.ts'], /--channels 0: expected an integer from 1 to 64/],
    [['-n', '2', '--launcher', 'slurm', '--launcher-exec', '/nonexistent/srun', 'x.ts'], /--launcher slurm: cannot run \/nonexistent\/srun \(ENOENT\); install Slurm's client commands/],
    [['-n', '2', 'x.ts'], /Slurm allocation: SLURM_JOB_ID=7 is set but SLURM_JOB_NODELIST is not.*--launcher fork\|ssh/, { SLURM_JOB_ID: '7' }],
    [['-n', '2', '--eager-limit', '67108865', 'x.ts'], /--eager-limit 67108865: expected an integer from 0 to 67108864/],
    [['-n', '2', '--hosts', 'elsewhere-host', '--launcher', 'fork', 'x.ts'], /host elsewhere-host is not this machine; --launcher fork starts processes here only/],
    [['-n', '2', '-x', 'TSMPI_TEST_SURELY_UNSET', 'x.ts'], /-x TSMPI_TEST_SURELY_UNSET: TSMPI_TEST_SURELY_UNSET is not set in mpiexec's environment/],
    [['-n', '2', '--timeout', '-1', 'x.ts'], /--timeout -1: expected a positive number/],
    [['-n', '2', '--bogus', 'x.ts'], /unknown option --bogus/],
    [['-n', '2'], /no program given/],
  ])('rejects %j with one line and status 2', async (args, message, env?: Record<string, string>) => {
    const r = await runMpiexec(args, env === undefined ? {} : { env });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });
});
