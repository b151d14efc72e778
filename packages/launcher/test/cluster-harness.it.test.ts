/**
 * Smoke test of the namespace cluster harness (test/cluster/cluster.ts over
 * scripts/netns-cluster.sh) that the multi-host tests of issue 11 stand on:
 * three hosts with their own names, sshd and addresses, reachable from each
 * other and cut off by linkDown; today's single-host mpiexec runs inside one;
 * stop() leaves no namespace, sshd or state directory, and the root namespace's
 * interfaces are the same before and after.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster } from './cluster/cluster.js';

const support = clusterSupport();

const rootLinks = (): string =>
  execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(':')[1]?.trim().split('@')[0])
    .filter((n) => n !== undefined && n !== '')
    .sort()
    .join(' ');

const namespaces = (): string => execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });

/** True unless the pid is gone or a zombie waiting for init to reap it. */
const running = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

// A TCP server on one host that greets with its host name, and a client that
// prints what it got, or "unreachable: <reason>" within 1.5 s.
const SERVER = `
const net = require('net'), os = require('os');
net.createServer((s) => s.end('hello from ' + os.hostname())).listen(+process.argv[2], process.argv[1], () => console.log('listening'));`;
const CLIENT = `
const net = require('net');
const s = net.connect({ host: process.argv[1], port: +process.argv[2], timeout: 1500 });
let got = '';
s.on('data', (d) => { got += d; });
s.on('end', () => { console.log(got); process.exit(0); });
s.on('timeout', () => { console.log('unreachable: timeout'); process.exit(0); });
s.on('error', (e) => { console.log('unreachable: ' + e.code); process.exit(0); });`;

describe.skipIf(!support.ok)(withSkipReason('namespace cluster harness', support), () => {
  let cluster: Cluster | undefined;
  let linksBefore = '';

  beforeAll(async () => {
    linksBefore = rootLinks();
    cluster = await startCluster({ hosts: 3 });
  });
  afterAll(() => cluster?.stop());

  it('gives every host its own name, reached through ssh with the cluster config', async () => {
    const c = cluster!;
    expect(c.hosts.map((h) => h.name)).toEqual(['th1', 'th2', 'th3']);
    expect(new Set(c.hosts.map((h) => h.address)).size).toBe(3);
    for (const h of c.hosts) {
      expect(h.address).toMatch(/^198\.(18|19)\.\d+\.\d+$/);
      const r = await c.ssh(h, 'hostname', { from: 'th1', deadlineMs: 30_000 });
      expect(r.stderr).toBe('');
      expect({ code: r.code, out: r.stdout.trim() }).toEqual({ code: 0, out: h.name });
    }
    // The wrapper for remote-shell options that take a program without arguments.
    const viaWrapper = await c.run('th1', [c.sshWrapperPath, 'th3', 'hostname'], { deadlineMs: 30_000 });
    expect({ code: viaWrapper.code, out: viaWrapper.stdout.trim() }).toEqual({ code: 0, out: 'th3' });
    // The Debian trap: a host's own name resolves to 127.0.1.1 there.
    const own = await c.run('th2', ['getent', 'hosts', 'th2']);
    expect(own.stdout).toMatch(/^127\.0\.1\.1\s+th2/);
  });

  it('lets hosts reach each other by address, and linkDown cuts a host off until linkUp', async () => {
    const c = cluster!;
    const [, th2, th3] = c.hosts;
    const port = '7411';
    const server = c.spawn(th2!, ['node', '-e', SERVER, th2!.address, port]);
    try {
      await new Promise<void>((resolve, reject) => {
        let out = '';
        server.stdout!.setEncoding('utf8').on('data', (s: string) => {
          out += s;
          if (out.includes('listening')) resolve();
        });
        server.on('exit', (code) => reject(new Error(`the server on th2 exited with ${code} before listening`)));
      });
      const connect = async (): Promise<string> =>
        (await c.run(th3!, ['node', '-e', CLIENT, th2!.address, port], { deadlineMs: 30_000 })).stdout.trim();

      expect(await connect()).toBe('hello from th2');
      c.linkDown(th2!);
      expect(await connect()).toMatch(/^unreachable/);
      c.linkUp(th2!);
      expect(await connect()).toBe('hello from th2');
    } finally {
      c.linkUp(th2!);
      process.kill(-server.pid!, 'SIGKILL');
    }
  });

  it("runs today's single-host mpiexec inside a host", async () => {
    const c = cluster!;
    const r = await c.run('th3', ['node_modules/.bin/mpiexec', '-n', '2', 'examples/hello.ts'], { deadlineMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(['Hello from rank 0 of 2 on th3', 'Hello from rank 1 of 2 on th3']);
    expect(await c.leftovers()).toEqual([]);
  });

  it('leaves nothing behind after stop()', async () => {
    const c = cluster!;
    const left = await c.leftovers();
    expect(left).toEqual([]);
    const pids = (JSON.parse(readFileSync(`${c.stateDir}/cluster.json`, 'utf8')) as {
      hosts: { holderPid: number; sshdPid: number }[];
    }).hosts.flatMap((h) => [h.holderPid, h.sshdPid]);
    expect(pids.filter(running)).toHaveLength(6);
    // A process left on a host is seen by pidsOn, and stop() ends it.
    // (it says "ready" once it runs on th2, so pidsOn cannot look too early)
    const stray = c.spawn('th2', ['sh', '-c', 'echo ready; exec sleep 600']);
    await new Promise<void>((resolve) => stray.stdout!.once('data', () => resolve()));
    stray.unref();
    const seen = c.pidsOn('th2');
    expect(seen).toContain(stray.pid);
    expect(c.pidsOn('th1')).toEqual([]);
    expect(namespaces()).toContain(`tsmpi-${c.id}-th1`);

    c.stop();
    c.stop(); // idempotent
    expect(namespaces()).not.toContain(`tsmpi-${c.id}-`);
    expect(existsSync(c.stateDir)).toBe(false);
    expect(pids.filter(running)).toEqual([]);
    expect(running(stray.pid!)).toBe(false);
    expect(rootLinks()).toBe(linksBefore);
  });
});
