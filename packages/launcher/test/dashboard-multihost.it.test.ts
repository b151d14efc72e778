// testlist: { file: 'dashboard-multihost.it.test.ts', np: [4] } — the dashboard of a job across namespaced hosts.
/**
 * mpiexec --dashboard across hosts (issue 41, "Must hold"): mpiexec on th1 of a namespace cluster
 * (test/cluster/cluster.ts) starts 2 ranks there and 2 on th2 through ssh and the proxy; the ranks
 * deadlock in a cycle (fixtures/dashboard-cycle.ts). A client on th1 reads the dashboard's
 * WebSocket feed: every rank of both hosts is there, with its host, its call and the traffic
 * matrix, the ranks on th2 answering through their proxy. Skipped where namespaces cannot be made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster } from './cluster/cluster.ts';
import { FIXTURES, MPIEXEC } from './run-mpiexec.ts';

const support = clusterSupport();

describe.skipIf(!support.ok)(withSkipReason('mpiexec --dashboard across hosts (namespace cluster, ssh)', support), () => {
  let cluster: Cluster;
  beforeAll(async () => { cluster = await startCluster({ hosts: 2 }); }, 120_000);
  afterAll(() => cluster?.stop());

  it('shows every rank of both hosts, their calls and their traffic', async () => {
    const child = cluster.spawn('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '-n', '4', '--hosts', 'th1:2,th2:2', '--dashboard', `${FIXTURES}/dashboard-cycle.ts`]);
    let stderr = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no dashboard URL: ${stderr}`)), 60_000);
        child.stderr!.setEncoding('utf8').on('data', (s: string) => {
          stderr += s;
          const m = /mpiexec: dashboard at (http:\/\/\S+)\n/.exec(stderr);
          if (m !== null) { clearTimeout(timer); resolve(m[1]!); }
        });
      });
      child.stdout!.resume();
      const watch = await cluster.run('th1', ['node', `${FIXTURES}/dashboard-watch.mjs`, url], { deadlineMs: 90_000 });
      expect(watch.code, watch.stderr).toBe(0);
      const s = JSON.parse(watch.stdout.trim()) as { size: number; ranks: { rank: number; host: string; pid: number; threads: { call: string }[] }[]; views: { cycles: number[][]; matrix: { bytes: number[][] } } };
      expect(s.size).toBe(4);
      expect(s.ranks.map((r) => r.host)).toEqual(['th1', 'th1', 'th2', 'th2']);
      for (const r of s.ranks) expect(r.pid).toBeGreaterThan(0);
      expect(s.ranks.map((r) => r.threads[0]!.call)).toEqual([
        'Recv (comm COMM_WORLD, peer 1, tag 9)', 'Recv (comm COMM_WORLD, peer 2, tag 9)', 'Recv (comm COMM_WORLD, peer 0, tag 9)', 'barrier (comm COMM_WORLD)',
      ]);
      expect(s.views.cycles).toEqual([[0, 1, 2]]);
      // The ring's messages, 1 -> 2 and 3 -> 0 crossing hosts, are in the matrix.
      for (let r = 0; r < 4; r++) expect(s.views.matrix.bytes[r]![(r + 1) % 4]).toBeGreaterThan(4096);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
    expect(await cluster.leftovers(20_000, (l) => l.includes('sshd:'))).toEqual([]);
  }, 240_000);
});
