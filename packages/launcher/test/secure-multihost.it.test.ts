// testlist: { file: 'secure-multihost.it.test.ts', np: [2, 4] } — mpiexec --secure across namespaced hosts, traffic captured on the bridge; what a job leaves on its hosts.
/**
 * mpiexec --secure on a namespace cluster (test/cluster/cluster.ts), issue 35: a job across three
 * hosts with and without --secure while capture.py records every frame on the cluster's bridge.
 * With --secure the job's messages arrive intact and the capture holds neither a known payload,
 * nor mpiexec's stdin on its way to a remote rank 0 (the proxy's link), nor a published address
 * (the wire-up's fence), nor the job key; without it all but the key are there (so the search
 * can fail; what clients send on a WebSocket is masked, so only what mpiexec sends is looked for). A stranger on a host outside
 * the job, with TLS under another key or in clear, is refused by a rank and by the wire-up service.
 *
 * And what a job leaves behind: after a job ends (normally, a remote rank failing or killed -9,
 * Ctrl-C) no process of it is left on any host and its same-host directory (/tmp/tsmpi-<hex>,
 * docs/adr/0029) is gone (the hosts share the file system, so that is every host's /tmp).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster, type ClusterRunOptions, type ClusterRunResult } from './cluster/cluster.ts';
import { FIXTURES, MPIEXEC } from './run-mpiexec.ts';

const support = clusterSupport();
const hasPython = existsSync('/usr/bin/python3');
const SECURE_RANK = `${FIXTURES}/secure-rank.ts`;
const CAPTURE = path.join(path.dirname(new URL(import.meta.url).pathname), 'cluster/capture.py');
const MARKER = 'TSMPI-SECRET-PAYLOAD-7f3a9c';
const STDIN_MARKER = 'TSMPI-STDIN-MARKER-41c2';

interface Line {
  rank: number;
  size: number;
  host: string;
  intact: boolean;
  sum: number;
  secure: string;
  pmi: string;
  listen: string;
  ports: number[];
  key?: string;
  dir?: string;
}

function lines(stdout: string): Line[] {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line).sort((a, b) => a.rank - b.rank);
}

/** Every frame on the cluster's bridge while `during` runs (capture.py in the switch namespace). */
async function capture<T>(cluster: Cluster, file: string, during: () => Promise<T>): Promise<{ result: T; bytes: Buffer }> {
  const child: ChildProcess = spawn('ip', ['netns', 'exec', `tsmpi-${cluster.id}-sw`, '/usr/bin/python3', CAPTURE, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('capturing')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`capture.py exited ${code}: ${err}`)));
  });
  try {
    const result = await during();
    // Let the last frames reach the socket, then stop and wait for the file to be complete.
    await new Promise((r) => setTimeout(r, 300));
    return { result, bytes: await stopCapture(child, file) };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

function stopCapture(child: ChildProcess, file: string): Promise<Buffer> {
  return new Promise((resolve) => {
    child.on('exit', () => resolve(readFileSync(file)));
    child.kill('SIGTERM');
  });
}

/** A stranger (self-contained: node only): TLS 1.3 under another key to a rank and to the wire-up service, and clear text to the rank. */
const STRANGER = `
const tls = require('tls'); const net = require('net'); const crypto = require('crypto');
const [host, port, pmiHost, pmiPort] = process.argv.slice(1);
const psk = crypto.randomBytes(32);
const opts = { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3', ciphers: 'TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256', pskCallback: () => ({ psk, identity: 'tsmpi-job' }), checkServerIdentity: () => undefined };
function tryTls(h, p) {
  return new Promise((resolve) => {
    const s = tls.connect({ host: h, port: +p, ...opts });
    s.on('secureConnect', () => resolve('secure'));
    s.on('error', () => resolve('refused'));
    s.on('close', () => resolve('refused'));
  });
}
function tryClear(h, p) {
  return new Promise((resolve) => {
    const s = net.connect({ host: h, port: +p });
    let got = 0;
    s.on('connect', () => s.write(Buffer.alloc(64, 0x41)));
    s.on('data', (d) => { if (d[0] !== 21) got += d.length; });
    s.on('error', () => {});
    s.on('close', () => resolve(got === 0 ? 'refused' : 'answered'));
  });
}
(async () => {
  console.log('rank tls ' + await tryTls(host, port));
  console.log('wireup tls ' + await tryTls(pmiHost, pmiPort));
  console.log('rank clear ' + await tryClear(host, port));
})();`;

describe.skipIf(!support.ok || !hasPython)(withSkipReason('mpiexec --secure across hosts (namespace cluster, traffic captured)', hasPython ? support : { ok: false, why: 'no /usr/bin/python3 for the capture' }), () => {
  let cluster: Cluster;
  let tmp: string;

  const mpiexec = (args: readonly string[], opts: ClusterRunOptions = {}): Promise<ClusterRunResult> =>
    cluster.run('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, ...args], {
      deadlineMs: 120_000, env: { ...process.env, NODE_OPTIONS: '', SECURE_TEST_LOCAL_HOST: 'th1' }, ...opts,
    });

  beforeAll(async () => {
    cluster = await startCluster({ hosts: 3 });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-secure-'));
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect(await cluster.leftovers(20_000)).toEqual([]);
  }, 60_000);

  for (const secure of [true, false]) {
    it(`${secure ? 'with' : 'without'} --secure: messages arrive intact; the bridge ${secure ? 'carries no plaintext' : 'shows the payload in clear'}, never the key`, async () => {
      const file = path.join(tmp, `capture-${secure ? 'secure' : 'plain'}.bin`);
      const { result: r, bytes } = await capture(cluster, file, () =>
        mpiexec([...(secure ? ['--secure'] : []), '-n', '4', '--hosts', 'th2:2,th1:1,th3:1', SECURE_RANK], { input: `${STDIN_MARKER}\n`.repeat(20) }));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const ls = lines(r.stdout);
      expect(ls.map((l) => [l.rank, l.host, l.intact, l.sum, l.secure])).toEqual(
        [[0, 'th2', true, 6, secure ? 'on' : 'off'], [1, 'th2', true, 6, secure ? 'on' : 'off'], [2, 'th1', true, 6, secure ? 'on' : 'off'], [3, 'th3', true, 6, secure ? 'on' : 'off']],
      );
      expect(ls[3]!.pmi.startsWith(secure ? 'tls://' : 'tcp://')).toBe(true);
      const key = ls[2]!.key!;
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      // The payloads crossed the bridge (2.2 MB from th2 to th1 and th3): the capture saw the job's traffic.
      expect(bytes.length).toBeGreaterThan(1_000_000);
      const has = (s: string): boolean => bytes.includes(Buffer.from(s));
      // A remote rank's published address (the wire-up's fence carries it) and its printed line (its proxy's link).
      const published = `${ls[3]!.listen}:${ls[3]!.ports[0]}`;
      expect(has(key), 'the job key (hex)').toBe(false);
      expect(bytes.includes(Buffer.from(key, 'hex')), 'the job key (bytes)').toBe(false);
      expect(has(MARKER), 'a rank message payload').toBe(!secure);
      expect(has(STDIN_MARKER), 'mpiexec\'s stdin on the proxy\'s link to rank 0').toBe(!secure);
      expect(has(published), `a remote rank's published address ${published} in the wire-up`).toBe(!secure);
    });
  }

  it('--secure: a stranger with another key, or in clear, is refused by a remote rank and by the wire-up service', async () => {
    const child = cluster.spawn('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '--secure', '--log-format', 'json', '-n', '2', '--hosts', 'th1:1,th2:1', SECURE_RANK, '4000'],
      { env: { ...process.env, NODE_OPTIONS: '', SECURE_TEST_LOCAL_HOST: 'th1' } });
    let stdout = '';
    let stderr = '';
    let knock: Promise<ClusterRunResult> | null = null;
    child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const x = knock === null ? lines(stdout).find((l) => l.rank === 1) : undefined;
      if (x === undefined) return;
      const pmi = new URL(x.pmi);
      knock = cluster.run('th3', ['node', '-e', STRANGER, x.listen, String(x.ports[0]), pmi.hostname, pmi.port], { deadlineMs: 30_000 });
    });
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(timer);
    expect(stderr).not.toMatch(/mpiexec:/);
    expect(code).toBe(0);
    expect(lines(stdout).map((l) => l.intact)).toEqual([true, true]);
    expect(knock).not.toBe(null);
    const k = await knock!;
    expect(k.stdout.trim().split('\n')).toEqual(['rank tls refused', 'wireup tls refused', 'rank clear refused']);
    // Each refusal is logged with the stranger's address (th3's), by the rank and by mpiexec.
    const th3 = cluster.hosts[2]!.address;
    expect(stderr).toMatch(new RegExp(`"rank":1,.*"remoteAddress":"${th3.replace(/\./g, '\\.')}".*failed the TLS handshake`));
    expect(stderr, stderr).toMatch(new RegExp(`"remote":"${th3.replace(/\./g, '\\.')}:\\d+".*TLS handshake failed`));
  });

  describe('nothing of a job is left on any host', () => {
    /** The job's same-host directory, from the line of its rank on th1 (which shares /tmp with every host). */
    const dirOf = (stdout: string): string => {
      const d = lines(stdout).find((l) => l.dir !== undefined)?.dir;
      if (d === undefined) throw new Error(`no directory in th1's rank's line: ${stdout}`);
      return d;
    };

    it('after a job that ends normally', async () => {
      const r = await mpiexec(['-n', '4', '--hosts', 'th1:1,th2:2,th3:1', SECURE_RANK]);
      expect(r.code).toBe(0);
      expect(existsSync(dirOf(r.stdout))).toBe(false);
    });

    for (const mode of ['exit', 'kill'] as const) {
      it(`after a remote rank ${mode === 'exit' ? 'fails (exit 3)' : 'is killed -9'}`, async () => {
        const r = await mpiexec(['-n', '4', '--hosts', 'th1:1,th2:2,th3:1', SECURE_RANK, '0', mode, '2']);
        expect(r.code).toBe(mode === 'exit' ? 3 : 137);
        expect(r.stderr).toMatch(/mpiexec: rank 2 \(host th2, pid \d+\)/);
        expect(existsSync(dirOf(r.stdout))).toBe(false);
      });
    }

    it('after mpiexec itself is killed -9: the directory stays, and the next mpiexec on that host removes it', async () => {
      const child = cluster.spawn('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '-n', '2', '--hosts', 'th1:2', SECURE_RANK, '600000'],
        { env: { ...process.env, NODE_OPTIONS: '', SECURE_TEST_LOCAL_HOST: 'th1' } });
      let stdout = '';
      let killed = false;
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (killed || (stdout.match(/sleeping/g) ?? []).length < 2) return;
        killed = true;
        process.kill(child.pid!, 'SIGKILL');
      });
      child.stderr!.resume();
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
      await new Promise<void>((resolve) => child.on('close', () => resolve()));
      clearTimeout(timer);
      expect(killed).toBe(true);
      // The ranks die with mpiexec (parent-death signal); nothing of the job runs any more.
      expect(await cluster.leftovers(20_000)).toEqual([]);
      const dir = dirOf(stdout);
      expect(existsSync(dir), 'nothing was left to remove it').toBe(true);
      const r = await mpiexec(['-n', '2', '--hosts', 'th1:2', SECURE_RANK]);
      expect(r.code).toBe(0);
      expect(existsSync(dir), 'the next job removed the one left over').toBe(false);
      expect(existsSync(dirOf(r.stdout))).toBe(false);
    });

    it('after Ctrl-C', async () => {
      const child = cluster.spawn('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '-n', '4', '--hosts', 'th1:1,th2:2,th3:1', SECURE_RANK, '600000'],
        { env: { ...process.env, NODE_OPTIONS: '', SECURE_TEST_LOCAL_HOST: 'th1' } });
      let stdout = '';
      let existedDuring: boolean | null = null;
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (existedDuring !== null || (stdout.match(/sleeping/g) ?? []).length < 4) return;
        // Every rank is up and waiting: the directory is there now; Ctrl-C.
        existedDuring = existsSync(dirOf(stdout));
        process.kill(child.pid!, 'SIGINT');
      });
      child.stderr!.resume();
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      clearTimeout(timer);
      expect(existedDuring, 'the job\'s directory existed while it ran').toBe(true);
      expect(code).toBe(130);
      expect(existsSync(dirOf(stdout))).toBe(false);
    });
  });
});
