// testlist: { file: 'same-host-attack.it.test.ts', np: [2] } — real jobs through mpiexec, and an attacker running as uid nobody (setpriv; needs root and Linux).
// Issue 35: another user on the host where a job runs. It watches /proc/net/unix for the job's
// same-host sockets, squats every name it can derive before the ranks bind them and relays what
// reaches it to the ranks' TCP ports, and connects to every socket it sees; or it floods every
// rank's TCP port with junk before any hello. The job must not notice: exit 0, the message as sent,
// nothing captured, no connection made, the ranks' memory bounded (docs/adr/0029).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { linesWith, program, runJob, type JobResult } from './run-job.ts';

const canAttack = process.platform === 'linux' && process.getuid?.() === 0 && fs.existsSync('/usr/bin/setpriv');
if (!canAttack) console.log('same-host-attack.it.test.ts: needs Linux, root and setpriv to run an attacker as another user; skipped');

/** Ports below the kernel's ephemeral range, so that the attacker meets only this test's jobs. */
const PORTS = { lo: 23170, hi: 23179 };
const ATTACKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'attackers/same-host-attacker.mjs');
/** The ranks' CHALLENGE (transport-tcp handshake.ts): all a stranger may ever read from a rank. */
const CHALLENGE_BYTES = 40;

interface AttackReport {
  uid: number;
  seen: string[];
  squatted: string[];
  squatErrors: Record<string, number>;
  relayed: number;
  captured: string;
  capturedBytes: number;
  connectOk: number;
  connectErrors: Record<string, number>;
  listErrors: Record<string, number>;
  flooded: number[];
  floodWritten: number;
  floodReceived: number[];
}

/** Runs `job` while the attacker (uid nobody, from a copy it can read) attacks in `mode`; returns both outcomes. */
async function underAttack(mode: 'squat' | 'flood', job: () => Promise<JobResult>): Promise<{ result: JobResult; report: AttackReport }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-attacker-'));
  fs.chmodSync(dir, 0o755);
  const script = path.join(dir, 'attacker.mjs');
  fs.copyFileSync(ATTACKER, script);
  fs.chmodSync(script, 0o644);
  const child = spawn('/usr/bin/setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, script, mode, String(PORTS.lo), String(PORTS.hi), '16'], {
    cwd: dir, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('attacker ready')) resolve();
    });
    child.on('exit', () => reject(new Error(`the attacker ended before it was ready: ${err}`)));
  });
  const ended = new Promise<void>((resolve) => child.on('close', () => resolve()));
  try {
    await ready;
    const result = await job();
    child.stdin.end();
    await ended;
    return { result, report: JSON.parse(out.trim()) as AttackReport };
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The job: rank 0 sends 100 to rank 1, which starts MPI 1.5 s later (the attacker's head start on its sockets). */
function amountJob(): Promise<JobResult> {
  return runJob(2, program('same-host-amount.ts'), {
    flags: ['--port-range', `${PORTS.lo}-${PORTS.hi}`],
    env: { TSMPI_TEST_RANK1_DELAY_MS: '1500' },
  });
}

function expectIntact(result: JobResult): void {
  expect(result.code, result.stderr).toBe(0);
  expect(linesWith(result.stdout, 'amount=')).toEqual(['amount=100 memo=plaintext-marker-object']);
  expect(linesWith(result.stdout, 'buffer=')).toEqual(['buffer=plaintext-marker-buffer amount=100']);
}

/** Each rank's peak resident memory in MiB (the program prints maxRSS in KiB). */
function peakMiB(result: JobResult): number[] {
  return linesWith(result.stdout, 'rank ').map((l) => Number(/maxRSS=(\d+)/.exec(l)?.[1] ?? 'NaN') / 1024);
}

describe.runIf(canAttack)('another user on the host of a job', () => {
  it('cannot squat, relay or connect to the job\'s same-host sockets: the job runs as if alone', async () => {
    const { result, report } = await underAttack('squat', amountJob);
    expectIntact(result);
    expect(report.uid, 'the attacker runs as nobody').toBe(65534);
    // It saw the sockets (their paths are world-readable in /proc/net/unix) ...
    const paths = report.seen.filter((s) => s.startsWith('/'));
    expect(paths.length, `what the attacker saw: ${JSON.stringify(report.seen)}`).toBeGreaterThan(0);
    expect(report.seen.filter((s) => s.startsWith('@')), 'no abstract names any more').toEqual([]);
    // ... but could neither look into their directory, nor bind a name there, nor connect to one.
    expect(Object.keys(report.listErrors)).toEqual(['EACCES']);
    expect(report.squatted, 'names the attacker bound').toEqual([]);
    expect(report.squatErrors['EACCES'] ?? 0).toBeGreaterThan(0);
    expect(report.connectOk).toBe(0);
    expect(report.connectErrors['EACCES'] ?? 0).toBeGreaterThan(0);
    // Nothing reached it, so nothing was captured.
    expect(report.relayed).toBe(0);
    expect(report.capturedBytes).toBe(0);
    expect(report.captured).not.toContain('plaintext-marker');
    // mpiexec removed the directory once the job was over (this job's: its ranks' ports are in the range).
    const ours = paths.filter((p) => { const port = Number(/^t-\d+-(\d+)$/.exec(path.basename(p))?.[1]); return port >= PORTS.lo && port <= PORTS.hi; });
    expect(ours.length, `this job's sockets among those seen: ${JSON.stringify(paths)}`).toBeGreaterThan(0);
    for (const p of ours) expect(fs.existsSync(path.dirname(p)), `${path.dirname(p)} left behind`).toBe(false);
  });

  it('floods every rank\'s port with 16 MiB before any hello: each flood is refused after the challenge, memory stays bounded', async () => {
    const { result, report } = await underAttack('flood', amountJob);
    expectIntact(result);
    expect(report.flooded.length, 'the attacker found a rank\'s port').toBeGreaterThan(0);
    expect(report.floodReceived.length).toBe(report.flooded.length);
    // The challenge and nothing more: never an ACCEPT, never a frame.
    for (const n of report.floodReceived) expect(n).toBe(CHALLENGE_BYTES);
    for (const mib of peakMiB(result)) expect(mib).toBeLessThan(400);
    expect(peakMiB(result)).toHaveLength(2);
  });
});
