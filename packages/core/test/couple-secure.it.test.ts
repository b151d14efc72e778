// Two mpiexec jobs run with --secure coupled at a port (issue 37; docs/adr/0043-connect-two-jobs.md, "--secure").
// Coupled: job A accepts at a `tsmpi-tls-port:` port, job B first tries it with the secret changed (its
// mpiexec's TLS handshake with A's wire-up service fails: ERR_PORT, and A keeps the port open), then
// connects: point-to-point both ways, intercomm bcast and allreduce, merge, disconnect, each job goes on
// (programs/couple-jobs.ts asserts it in every process).
// A stranger (uid nobody, run with --secure, holding the port string with another secret) is refused;
// A's accept ends when A closes the port, and A ends 0 (programs/connect-jobs.ts).
// Mixed: a job with --secure and one without refuse to couple, either way round, with ERR_PORT saying why.
// On the wire: both jobs in a network namespace of their own while capture.py (the launcher's cluster tests'
// AF_PACKET recorder) records every frame on its loopback; B runs as uid nobody, so its processes cannot
// reach A's same-host sockets (ADR 0029) and send to A's over TCP. With --secure the capture holds neither
// the messages' marker nor the port's secret; without --secure it holds both (so the search can fail).
// testlist: two jobs np 2 + np 2 (coupled, stranger, mixed x2, captured x2); needs root for nobody and the namespace
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, MPIEXEC, program, ROOT, runCommand, runJob, type JobResult } from './run-job.ts';

const CONNECT_JOBS = program('connect-jobs.ts');
const COUPLE_JOBS = program('couple-jobs.ts');
const CAPTURE = path.join(ROOT, 'packages/launcher/test/cluster/capture.py');
const isRoot = process.getuid?.() === 0;
const canCapture = isRoot && process.platform === 'linux' && existsSync('/usr/bin/python3') && existsSync('/usr/bin/setpriv');
if (!canCapture) console.warn('[couple-secure.it] the stranger and capture tests need root, Linux, python3 and setpriv; skipped');
const NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
const MARKER = 'TSMPI-COUPLED-PAYLOAD-5e21b7';
let dir: string | null = null;

afterEach(() => {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function newDir(): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-secure-'));
  chmodSync(dir, 0o777);
  return dir;
}

function expectCoupled(a: JobResult, b: JobResult): void {
  const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
  expect(a.code, both).toBe(0);
  expect(b.code, both).toBe(0);
  expect(linesWith(a.stdout, 'coupled OK ').sort(), both).toEqual(['coupled OK A 0/2', 'coupled OK A 1/2']);
  expect(linesWith(b.stdout, 'coupled OK ').sort(), both).toEqual(['coupled OK B 0/2', 'coupled OK B 1/2']);
}

function expectRefused(a: JobResult, b: JobResult): void {
  const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
  expect(a.code, both).toBe(0);
  expect(b.code, both).toBe(0);
  expect(linesWith(a.stdout, 'accept closed OK ').sort(), both).toEqual(['accept closed OK 0/2', 'accept closed OK 1/2']);
  expect(linesWith(b.stdout, 'connect refused OK ').sort(), both).toEqual(['connect refused OK 0/2', 'connect refused OK 1/2']);
}

/** Runs `during` inside a fresh network namespace (its loopback up) while capture.py records its frames. */
async function captured<T>(during: (ns: string) => Promise<T>): Promise<{ result: T; bytes: Buffer }> {
  const ns = `tsmpi-cs-${process.pid}-${Date.now() % 100_000}`;
  const file = path.join(dir!, 'capture.bin');
  await runCommand('ip', ['netns', 'add', ns]);
  let child: ChildProcess | null = null;
  try {
    await runCommand('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    const c = spawn('ip', ['netns', 'exec', ns, '/usr/bin/python3', CAPTURE, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      c.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('capturing')) resolve();
      });
      c.on('exit', (code) => reject(new Error(`capture.py exited ${code}`)));
    });
    const result = await during(ns);
    const stopped = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGTERM');
    await stopped;
    child = null;
    return { result, bytes: readFileSync(file) };
  } finally {
    child?.kill('SIGKILL');
    await runCommand('ip', ['netns', 'del', ns]);
  }
}

/** Jobs A (this user) and B (uid nobody) coupled inside namespace `ns`, with `flags` each, the marker in their messages. */
function coupleInNamespace(ns: string, flags: readonly string[], d: string): Promise<[JobResult, JobResult]> {
  const env = { TSMPI_UNIVERSE: '4', HOME: '/tmp' };
  const job = (role: string): string[] => [MPIEXEC, '-n', '2', ...flags, '--timeout', '100', COUPLE_JOBS, role, d, MARKER];
  return Promise.all([
    runCommand('ip', ['netns', 'exec', ns, ...job('accept')], env, 120_000),
    runCommand('ip', ['netns', 'exec', ns, '/usr/bin/setpriv', ...NOBODY, ...job('connect')], env, 120_000),
  ]);
}

describe('connect between two mpiexec jobs run with --secure', () => {
  it('two --secure jobs couple: a wrong secret fails the port\'s TLS first and the port still serves the right one', async () => {
    const d = newDir();
    const env = { TSMPI_UNIVERSE: '4' };
    const [a, b] = await Promise.all([
      runJob(2, COUPLE_JOBS, { args: ['accept', d], flags: ['--secure', '--timeout', '100'], env, killAfterMs: 120_000 }),
      runJob(2, COUPLE_JOBS, { args: ['connect', d], flags: ['--secure', '--timeout', '100'], env, killAfterMs: 120_000 }),
    ]);
    expectCoupled(a, b);
    const port = readFileSync(path.join(d, 'port'), 'utf8');
    expect(port).toMatch(/^tsmpi-tls-port:[0-9a-f]{16}@127\.0\.0\.1:\d+:[0-9a-f]{32}$/);
    // The wrong secret's link failed A's TLS handshake, logged with its remote address; no output holds the secret.
    const both = `${jobReport('job A', a)}\n${jobReport('job B', b)}`;
    expect(a.stderr, both).toMatch(/wire-up connection refused .*remote=127\.0\.0\.1:\d+.*TLS handshake failed/);
    expect(both).not.toContain(port.slice(-32));
  }, 130_000);

  it.skipIf(!canCapture)('a stranger (uid nobody, --secure) with the port\'s public part is ERR_PORT; the accepting job goes on', async () => {
    const d = newDir();
    const [a, b] = await Promise.all([
      runJob(2, CONNECT_JOBS, { args: ['accept', d], flags: ['--secure', '--timeout', '100'], killAfterMs: 120_000 }),
      runCommand('/usr/bin/setpriv', [...NOBODY, MPIEXEC, '-n', '2', '--secure', '--timeout', '100', CONNECT_JOBS, 'connect', d], { HOME: '/tmp' }, 120_000),
    ]);
    expectRefused(a, b);
  }, 130_000);

  it.each([
    ['the accepting job runs with --secure, the connecting one without', ['--secure'], []],
    ['the connecting job runs with --secure, the accepting one without', [], ['--secure']],
  ])('mixed: %s: ERR_PORT saying why, and the accepting job goes on', async (_name, flagsA, flagsB) => {
    const d = newDir();
    const [a, b] = await Promise.all([
      runJob(2, CONNECT_JOBS, { args: ['accept', d], flags: [...flagsA, '--timeout', '100'], killAfterMs: 120_000 }),
      runJob(2, CONNECT_JOBS, { args: ['mixed', d], flags: [...flagsB, '--timeout', '100'], killAfterMs: 120_000 }),
    ]);
    expectRefused(a, b);
  }, 130_000);

  it.skipIf(!canCapture)('on the wire: with --secure neither the messages nor the port\'s secret cross loopback in clear; without, both do', async () => {
    const d = newDir();
    const secure = await captured((ns) => coupleInNamespace(ns, ['--secure'], d));
    expectCoupled(...secure.result);
    const secret = readFileSync(path.join(d, 'port'), 'utf8').slice(-32);
    // Something was captured (the coupling's TLS records), and none of it is the marker or the secret.
    expect(secure.bytes.length).toBeGreaterThan(10_000);
    expect(secure.bytes.includes(MARKER)).toBe(false);
    expect(secure.bytes.includes(secret)).toBe(false);

    rmSync(path.join(d, 'port'));
    const plain = await captured((ns) => coupleInNamespace(ns, [], d));
    expectCoupled(...plain.result);
    const plainSecret = readFileSync(path.join(d, 'port'), 'utf8').slice(-32);
    // The same search finds both without --secure: B's messages to A go over TCP, the port through the wire-up links.
    expect(plain.bytes.includes(MARKER)).toBe(true);
    expect(plain.bytes.includes(plainSecret)).toBe(true);
  }, 260_000);
});
