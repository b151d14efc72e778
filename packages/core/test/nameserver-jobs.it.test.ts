// publishName / lookupName between two separately started mpiexec jobs through a real tsmpi-nameserver
// (issue 37; docs/adr/0046-name-server-between-jobs.md). Each test starts its own server with --file in a
// temporary directory; the jobs run programs/name-jobs.ts with mpiexec --nameserver FILE.
// Met: job A publishes a port, job B looks it up (ERR_NAME until then), cannot unpublish or take the name,
// connects, and the two exchange messages; meanwhile an mpiexec with a made-up secret is refused (exit 2, no
// rank starts) and the server logs the refusal with its address. After A ended, its name is gone (ERR_NAME).
// Stopped: SIGTERM to the server while a job holds a link: the server removes its file, and the job's
// publishName/unpublishName are ERR_SERVICE and lookupName ERR_NAME, no hang.
// Another user (uid nobody through setpriv, as connect-jobs.it.test.ts): cannot read the file, so its
// mpiexec refuses before starting ranks, naming the file.
// testlist: two jobs np 2 + np 2 and a refused mpiexec; one job np 2; np 1 as uid nobody
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { jobReport, linesWith, MPIEXEC, program, ROOT, runCommand, runJob } from './run-job.ts';

const NAME_JOBS = program('name-jobs.ts');
const NAMESERVER = path.join(ROOT, 'packages/launcher/bin/tsmpi-nameserver.mjs');
const isRoot = process.getuid?.() === 0;
let dir: string | null = null;
let server: { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } | null = null;

afterEach(async () => {
  if (server !== null && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = null;
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

/** Polls `cond` every 20 ms; fails after 60 s (a deadlock guard, not a timing). */
async function until(cond: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > giveUp) throw new Error(`${what} within 60 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts tsmpi-nameserver writing `file`; resolves once it serves (the file exists). */
async function startServer(file: string): Promise<NonNullable<typeof server>> {
  const child = spawn(process.execPath, [NAMESERVER, '--file', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const s = { child, stderr: () => stderr, exited };
  server = s;
  await until(() => /serving on/.test(stderr) || child.exitCode !== null, `tsmpi-nameserver did not start (${stderr})`);
  expect(existsSync(file), stderr).toBe(true);
  return s;
}

describe('publishName / lookupName between jobs (tsmpi-nameserver)', () => {
  it('one job publishes, the other looks up and connects; a made-up secret is refused and logged while they go on; the name goes with its job', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'names-jobs-'));
    const file = path.join(dir, 'nameserver');
    const ns = await startServer(file);
    // What a stranger could write: the server's address with a secret of their own, in a file of their own.
    const fake = path.join(dir, 'fake');
    writeFileSync(fake, readFileSync(file, 'utf8').replace(/:[0-9a-f]{64}\n$/, `:${'5'.repeat(64)}\n`), { mode: 0o600 });
    const flags = ['--timeout', '100', '--nameserver', file];
    const env = { TSMPI_UNIVERSE: '4' };
    const [a, b, stranger] = await Promise.all([
      runJob(2, NAME_JOBS, { args: ['publish', dir, 'ocean'], flags, env, killAfterMs: 120_000 }),
      runJob(2, NAME_JOBS, { args: ['lookup', dir, 'ocean'], flags, env, killAfterMs: 120_000 }),
      runJob(1, NAME_JOBS, { args: ['gone', dir, 'ocean'], flags: ['--nameserver', fake], killAfterMs: 120_000 }),
    ]);
    const all = `${jobReport('job A', a)}\n${jobReport('job B', b)}\n${jobReport('stranger', stranger)}\n--- tsmpi-nameserver\n${ns.stderr()}`;
    expect(a.code, all).toBe(0);
    expect(b.code, all).toBe(0);
    expect(linesWith(a.stdout, 'names OK ').sort(), all).toEqual(['names OK publish 0/2', 'names OK publish 1/2']);
    expect(linesWith(b.stdout, 'names OK ').sort(), all).toEqual(['names OK lookup 0/2', 'names OK lookup 1/2']);
    // Refused before any rank started (a rank would print its line), naming the file.
    expect(stranger.code, all).toBe(2);
    expect(stranger.stdout, all).toBe('');
    expect(stranger.stderr, all).toContain(`mpiexec: --nameserver ${fake}: cannot use the name server`);
    expect(ns.stderr(), all).toMatch(/name server connection refused.*TLS handshake failed/);
    // Job A's link closed with it: its name went too.
    const later = await runJob(1, NAME_JOBS, { args: ['gone', dir, 'ocean'], flags: ['--nameserver', file], killAfterMs: 60_000 });
    expect(later.code, jobReport('job C', later)).toBe(0);
    expect(linesWith(later.stdout, 'names OK '), jobReport('job C', later)).toEqual(['names OK gone 0/1']);
  }, 130_000);

  it('a server stopped by SIGTERM removes its file; the jobs linked to it get errors, not a hang', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'names-jobs-'));
    const file = path.join(dir, 'nameserver');
    const ns = await startServer(file);
    const job = runJob(2, NAME_JOBS, { args: ['stopped', dir, 'sea'], flags: ['--timeout', '100', '--nameserver', file], killAfterMs: 120_000 });
    await until(() => existsSync(path.join(dir!, 'ready')), 'the job did not publish');
    ns.child.kill('SIGTERM');
    expect(await ns.exited, ns.stderr()).toBe(0);
    expect(existsSync(file), ns.stderr()).toBe(false);
    writeFileSync(path.join(dir, 'stopped'), '');
    const r = await job;
    expect(r.code, jobReport('job', r)).toBe(0);
    expect(linesWith(r.stdout, 'names OK ').sort(), jobReport('job', r)).toEqual(['names OK stopped 0/2', 'names OK stopped 1/2']);
  }, 130_000);

  it.skipIf(!isRoot)('another user (uid nobody) cannot read the file: its mpiexec refuses before starting ranks, naming the file', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'names-jobs-'));
    // The directory lets others in (and not write): only the file's own mode keeps them out.
    chmodSync(dir, 0o755);
    const file = path.join(dir, 'nameserver');
    const ns = await startServer(file);
    const r = await runCommand('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', MPIEXEC, '-n', '1', '--nameserver', file, NAME_JOBS, 'gone', dir, 'ocean'], { HOME: '/tmp' }, 60_000);
    const report = `${jobReport('mpiexec as nobody', r)}\n--- tsmpi-nameserver\n${ns.stderr()}`;
    expect(r.code, report).toBe(2);
    expect(r.stdout, report).toBe('');
    expect(r.stderr, report).toContain(`mpiexec: --nameserver ${file}: cannot be read by this user`);
    // The server never saw it.
    expect(ns.stderr(), report).not.toMatch(/joined|refused/);
  }, 70_000);
});
