// testlist: { file: 'security.it.test.ts', np: [3] } — real mpiexec, real proxy, the attacker as uid nobody.
/**
 * Attacks on a running job by another user of the machine (issue 35), with
 * the attacker run as uid `nobody` through setpriv (fixtures/attack/):
 *   (a) a fake mpiexec that a real tsmpi-proxy reaches: it learns no key and
 *       the proxy starts nothing for it;
 *   (b) a pre-hello flood of the wire-up service (16 MiB messages, junk,
 *       idle and guessed-key connections) while a job runs: the job ends 0
 *       with every message intact, and mpiexec's peak RSS stays bounded;
 *   (c) a stranger on every listening port of the job (wire-up and ranks',
 *       found in /proc/net/tcp): junk, replays, reflected and forged proofs;
 *       the job ends 0, messages intact, nothing the stranger received holds
 *       the key or a message.
 * Needs root (to become nobody); skipped otherwise, saying so.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROXY_PROTOCOL_VERSION } from '../src/proxy-protocol.ts';
import { FIXTURES, REPO_ROOT, runMpiexec } from './run-mpiexec.ts';
import { descendants, envOf } from './process-tree.ts';

const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn('[security.it] skipping: the attacker runs as uid nobody, which needs root to become');
const ATTACK = `${FIXTURES}/attack`;
const VICTIM = `${ATTACK}/victim-rank.ts`;
const PROXY_BIN = path.join(REPO_ROOT, 'packages/launcher/bin/tsmpi-proxy.mjs');
/** The bound issue 35 asks for, under a 16 MiB pre-hello message. */
const MAX_RSS_KB = 400 * 1024;

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a fixture script as uid nobody; resolves with its output once it exits. */
function asNobody(script: string, args: readonly string[], onLine?: (line: string) => void): { done: Promise<Run>; kill: () => void } {
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, script, ...args], {
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
    if (onLine !== undefined) for (const l of s.split('\n')) if (l !== '') onLine(l);
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
  const done = new Promise<Run>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { done, kill: () => child.kill('SIGKILL') };
}

/** TCP ports `pids` listen on, from /proc/net/tcp{,6} and their open file descriptors. */
function listeningPorts(pids: readonly number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m !== null) inodes.add(m[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!)) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** kB of a /proc/PID/status line (VmRSS, VmHWM); 0 when the process is gone. */
function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

async function waitFor<T>(what: string, probe: () => T | null, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== null) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface VictimLine {
  rank: number;
  rounds: number;
  bad: number;
  childSawKey: boolean;
}

function victimLines(stdout: string): VictimLine[] {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as VictimLine).sort((a, b) => a.rank - b.rank);
}

/** The job's messages all arrived intact and no child of a rank inherited the key. */
function expectIntact(r: Run, np: number): void {
  expect(r.status, r.stderr).toBe(0);
  const lines = victimLines(r.stdout);
  expect(lines.map((l) => l.rank)).toEqual(Array.from({ length: np }, (_, i) => i));
  for (const l of lines) {
    expect(l.bad).toBe(0);
    expect(l.rounds).toBeGreaterThan(0);
    expect(l.childSawKey).toBe(false);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!isRoot)('attacks by another user (uid nobody) on a running job', () => {
  it.each(['challenge', 'old', 'silent'])('(a) a fake mpiexec (%s) answering a real proxy learns no key and starts nothing', async (mode) => {
    const key = 'f0'.repeat(32);
    const port = await freePort();
    const events: Record<string, unknown>[] = [];
    const head = asNobody(`${ATTACK}/fake-head.mjs`, [String(port), mode], (l) => events.push(JSON.parse(l) as Record<string, unknown>));
    try {
      await waitFor('the fake head to listen', () => (events.some((e) => e['listening'] === port) ? true : null), 30_000);
      expect(events.find((e) => 'listening' in e)?.['uid']).toBe(65534);
      const marker = path.join(os.tmpdir(), `tsmpi-security-marker-${process.pid}-${mode}`);
      rmSync(marker, { force: true });
      const spec = {
        v: PROXY_PROTOCOL_VERSION, key, index: 0, host: 'victim', port, addresses: ['127.0.0.1'], size: 1,
        ranks: [{ rank: 0, localRank: 0, localSize: 1 }], file: process.execPath,
        args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`], wdir: os.tmpdir(), env: {}, iface: null, portRange: null,
      };
      const env = { ...process.env };
      delete env['SSH_CONNECTION'];
      const proxy = spawn(process.execPath, [PROXY_BIN], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      proxy.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
      proxy.stdin.write(`${JSON.stringify(spec)}\n`);
      const status = await new Promise<number | null>((resolve) => {
        const t = setTimeout(() => proxy.kill('SIGKILL'), 60_000);
        proxy.on('close', (code) => {
          clearTimeout(t);
          resolve(code);
        });
      });
      // The proxy refused the fake head and said why; nothing of the job started.
      expect(status).toBe(1);
      expect(stderr).toMatch(mode === 'silent' ? /no proof of the job key within/ : /did not prove the job key/);
      expect(existsSync(marker)).toBe(false);
      // What the fake head received: at most the hello answering its own challenge, never the key.
      const received = events.filter((e) => e['message'] === true).map((e) => Buffer.from(String(e['base64']), 'base64'));
      expect(events.some((e) => e['connection'] === true)).toBe(true);
      expect(received.length).toBe(mode === 'challenge' ? 1 : 0);
      for (const b of received) {
        expect(b.toString('latin1')).not.toContain(key);
        expect(b.toString('latin1')).not.toContain('key');
        expect(b.includes(Buffer.from(key, 'hex'))).toBe(false);
      }
    } finally {
      head.kill();
      await head.done;
    }
  }, 120_000);

  it('(b) a pre-hello flood of the wire-up service: the job ends 0 with its messages intact, mpiexec stays under 400 MB', async () => {
    let mp = 0;
    const job = runMpiexec(['-n', '3', VICTIM, '9000'], { onStart: (pid) => { mp = pid; }, deadlineMs: 180_000 });
    const port = await waitFor('the wire-up service to listen', () => (mp === 0 ? null : (listeningPorts([mp])[0] ?? null)));
    let peakKb = 0;
    const poll = setInterval(() => {
      peakKb = Math.max(peakKb, statusKb(mp, 'VmHWM'), statusKb(mp, 'VmRSS'));
    }, 100);
    const stranger = asNobody(`${ATTACK}/stranger.mjs`, ['flood', String(port), '6']);
    const attack = await stranger.done;
    const r = await job;
    clearInterval(poll);
    expect(attack.status, attack.stderr).toBe(0);
    const flood = JSON.parse(attack.stdout.trim().split('\n').pop()!) as { flood: { opened: number; byKind: Record<string, number> }; uid: number };
    expect(flood.uid).toBe(65534);
    expect(flood.flood.byKind['bigMessage']).toBeGreaterThan(10);
    expect(flood.flood.byKind['proxyBigMessage']).toBeGreaterThan(10);
    expect(flood.flood.byKind['wsBigMessage']).toBeGreaterThan(10);
    console.log(`[security.it] flood: ${flood.flood.opened} connections ${JSON.stringify(flood.flood.byKind)}; mpiexec peak RSS ${Math.round(peakKb / 1024)} MB`);
    expectIntact(r, 3);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(MAX_RSS_KB);
    // Refusals name the intruder's address (mpiexec's own port is not the remote one).
    expect(r.stderr).toMatch(new RegExp(`remote=127\\.0\\.0\\.1:(?!${port}\\b)\\d+`));
    expect(r.stderr).toContain('wire-up connection refused');
  }, 240_000);

  it('(c) a stranger on every listening port of the job learns nothing and changes nothing', async () => {
    let mp = 0;
    const job = runMpiexec(['-n', '3', VICTIM, '10000'], { onStart: (pid) => { mp = pid; }, deadlineMs: 180_000 });
    const wireup = await waitFor('the wire-up service to listen', () => (mp === 0 ? null : (listeningPorts([mp])[0] ?? null)));
    // Every rank listens once it is past init; their key is in their initial environment (readable by root only).
    const rankPorts = await waitFor('the ranks to listen', () => {
      const ranks = descendants(mp).filter((p) => envOf(p, 'TSMPI_RANK') !== undefined);
      const ports = listeningPorts(ranks);
      return ranks.length >= 3 && ports.length >= 3 ? { ranks, ports } : null;
    });
    const key = envOf(rankPorts.ranks[0]!, 'TSMPI_JOB_KEY')!;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const stranger = asNobody(`${ATTACK}/stranger.mjs`, ['probe', String(wireup), ...rankPorts.ports.map(String)]);
    const attack = await stranger.done;
    const r = await job;
    expect(attack.status, attack.stderr).toBe(0);
    const probe = JSON.parse(attack.stdout.trim().split('\n').pop()!) as { probe: { port: number; kind: string; received: string; closed: number | boolean | null }[]; uid: number };
    expect(probe.uid).toBe(65534);
    expectIntact(r, 3);
    const ports = new Set(probe.probe.map((p) => p.port));
    for (const p of [wireup, ...rankPorts.ports]) expect(ports.has(p)).toBe(true);
    for (const p of probe.probe) {
      const got = Buffer.from(p.received, 'base64').toString('latin1');
      expect(got, `${p.kind} on ${p.port}`).not.toContain(key);
      expect(got, `${p.kind} on ${p.port}`).not.toContain('amount');
      // The service never welcomes the stranger: at most its challenge, then the connection ends.
      if (p.port === wireup) expect(got, p.kind).not.toContain('welcome');
    }
    for (const kind of ['forgedProof', 'reflectedNonce', 'guessedKey', 'fenceFirst', 'wsForgedProof', 'wsFenceFirst', 'proxyForged', 'proxyReflected']) {
      expect(probe.probe.find((p) => p.kind === kind)?.closed, kind).not.toBeNull();
    }
    expect(r.stderr).not.toContain('pwned');
    expect(r.stderr).toContain('wire-up connection refused');
  }, 240_000);
});
