/**
 * Direct launch by MPICH's Hydra (issue 38): `mpiexec.hydra -n N node app.mjs`
 * starts tsmpi ranks with no tsmpi mpiexec; they join through PMI-1 on the
 * PMI_FD Hydra hands them (core/src/pmi-direct). Checks a ring of point-to-point
 * messages, an allreduce and a gather across the job, a TypeScript program run as
 * `node --import tsx`, Hydra's PMI_PORT mode (-pmi-port), MPI.abort (Hydra ends the job with the code), a rank that
 * exits without finalize (Hydra kills the others and says so), and that no rank
 * is left behind. Skipped, with a line saying why, where mpiexec.hydra is not
 * installed (Debian's mpich package has it; .ci/run installs it).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, REPO_ROOT } from './run-mpiexec.ts';

const HYDRA = 'mpiexec.hydra';
const hasHydra = spawnSync(HYDRA, ['--version'], { stdio: 'ignore' }).status === 0;
const why = hasHydra ? null : `${HYDRA} is not installed (apt-get install mpich)`;
if (why !== null) console.warn(`direct-launch-hydra.it.test.ts: skipped: ${why}`);

const RANK_MJS = `${FIXTURES}/direct-rank.mjs`;
const RANK_TS = `${FIXTURES}/direct-rank.ts`;

/**
 * The ranks' TMPDIR: ranks that Hydra kills run no exit hook and leave their same-host socket
 * files behind (nothing sweeps a directory without an owner), so the tests' go here and are removed.
 */
const TMP = fs.mkdtempSync(path.join(os.tmpdir().length > 20 ? '/tmp' : os.tmpdir(), 'pmid-'));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));

interface Result { readonly status: number | null; readonly signal: NodeJS.Signals | null; readonly stdout: string; readonly stderr: string; readonly timedOut: boolean }

/** Runs mpiexec.hydra from the repo root with a hard deadline. */
function hydra(args: readonly string[], env: NodeJS.ProcessEnv = {}, deadlineMs = 90_000): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(HYDRA, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '', TMPDIR: TMP, ...env } });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, deadlineMs);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    });
  });
}

interface RankLine { rank: number; size: number; from: number; sum: number; hosts?: string[] }
const rankLines = (text: string): RankLine[] =>
  text.split('\n').filter((l) => l.startsWith('{"rank"')).map((l) => JSON.parse(l) as RankLine).sort((a, b) => a.rank - b.rank);

/** Processes whose command line holds `marker` (the ranks of one test, by an argument only they have). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(marker)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * Waits (bounded) until no process holds `marker`: Hydra may exit while the ranks it killed, or
 * whose PMI socket its proxy closed, are still going (a loaded machine takes a moment).
 */
async function expectGone(marker: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (processesWith(marker).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(processesWith(marker), `ranks of ${marker} still running ${timeoutMs} ms after mpiexec.hydra exited`).toEqual([]);
}

function expectRing(lines: RankLine[], n: number): void {
  expect(lines.map((l) => l.rank)).toEqual(Array.from({ length: n }, (_, r) => r));
  for (const l of lines) {
    expect(l.size).toBe(n);
    expect(l.from).toBe((l.rank + n - 1) % n);
    expect(l.sum).toBe((n * (n + 1)) / 2);
  }
}

describe.skipIf(why !== null)(`direct launch by MPICH's Hydra (PMI-1)${why === null ? '' : ` (skipped: ${why})`}`, () => {
  it('mpiexec.hydra -n 4 node app.mjs: a ring, an allreduce and a gather across 4 ranks', async () => {
    const r = await hydra(['-n', '4', process.execPath, RANK_MJS]);
    expect(r.timedOut).toBe(false);
    expect(r.status, r.stderr).toBe(0);
    const lines = rankLines(r.stdout);
    expectRing(lines, 4);
    expect(lines[0]!.hosts).toHaveLength(4);
    expect(r.stderr).toBe('');
  });

  it('mpiexec.hydra -pmi-port: the ranks join over TCP (PMI_PORT, PMI_ID and the initack handshake) and exit 0', async () => {
    const r = await hydra(['-pmi-port', '-print-all-exitcodes', '-n', '3', process.execPath, RANK_MJS]);
    expect(r.status, r.stderr).toBe(0);
    expectRing(rankLines(r.stdout), 3);
    // Every rank's own status, as Hydra saw it (a program whose finalize never settled exits 13).
    expect(r.stdout + r.stderr).toMatch(/Exit codes: \[\S+\] 0,0,0/);
  });

  it('settings come from TSMPI_* variables: channel engines (threads progress) on 2 channels', async () => {
    // Each engine publishes its own address through the PMI key/value space (runtime/bootstrap.ts startEngines).
    const r = await hydra(['-n', '3', process.execPath, RANK_MJS], { TSMPI_PROGRESS: 'threads', TSMPI_CHANNELS: '2' });
    expect(r.status, r.stderr).toBe(0);
    expectRing(rankLines(r.stdout), 3);
  });

  it('a TypeScript program runs as node --import tsx app.ts', async () => {
    const r = await hydra(['-n', '3', process.execPath, '--import', 'tsx', RANK_TS]);
    expect(r.status, r.stderr).toBe(0);
    expectRing(rankLines(r.stdout), 3);
  });

  it('MPI.abort(5) on rank 1 ends the job: mpiexec.hydra exits 5, the abort line is printed, no rank is left', async () => {
    const marker = `hydra-abort-${process.pid}`;
    const r = await hydra(['-n', '4', process.execPath, RANK_MJS, '1', '5', '-1', '0', marker]);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(5);
    expect(r.stderr).toContain('tsmpi: rank 1: MPI.abort(5) on COMM_WORLD: the launcher ends the job (exit code 5)');
    await expectGone(marker);
  });

  it('a rank that exits 3 before finalize: Hydra kills the others and reports a bad termination', async () => {
    const marker = `hydra-exit-${process.pid}`;
    const r = await hydra(['-n', '4', process.execPath, RANK_MJS, '-1', '0', '2', '3', marker]);
    expect(r.timedOut).toBe(false);
    expect(r.status).not.toBe(0);
    // Seen once in CI with nothing printed at all: say how mpiexec.hydra ended if it happens again.
    expect(r.stdout + r.stderr, `mpiexec.hydra ended with status ${r.status}, signal ${r.signal}`).toMatch(/BAD TERMINATION/);
    await expectGone(marker);
  });
});
