// testlist: { file: 'connect-jobs-multihost.it.test.ts', np: [2] } — two mpiexec jobs on different hosts coupled at a port (namespace cluster, ssh).
/**
 * Coupling two jobs across hosts (issue 37, docs/adr/0043-connect-two-jobs.md): job A's mpiexec runs on
 * th1 (ranks on th1 and th2), job B's on th3 (ranks on th3 and th2); A accepts at a port it writes to a
 * file (the hosts share the file system), B connects to it. The port names A's wire-up address on the
 * cluster's network, so B's mpiexec dials it there, and each job's ranks reach the other's over TCP.
 * core's test/programs/couple-jobs.ts asserts point-to-point both ways, intercomm collectives, merge and
 * disconnect in every process, and a wrong secret refused first. After the test no process is left.
 * The same with both jobs run with --secure (docs/adr/0043, point 7): the port link and the two jobs'
 * TCP connections run TLS keyed by the port's secret and the pair key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster, type ClusterRunResult } from './cluster/cluster.ts';
import { MPIEXEC } from './run-mpiexec.ts';

const support = clusterSupport();
const COUPLE_JOBS = 'packages/core/test/programs/couple-jobs.ts';

function report(name: string, r: ClusterRunResult): string {
  return `${name}: exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

describe.skipIf(!support.ok)(withSkipReason('connect two jobs across hosts (namespace cluster, ssh)', support), () => {
  let cluster: Cluster;
  let dir: string | null = null;

  const mpiexec = (host: string, args: readonly string[]): Promise<ClusterRunResult> =>
    cluster.run(host, ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '--timeout', '100', ...args], { deadlineMs: 120_000 });

  beforeAll(async () => {
    cluster = await startCluster({ hosts: 3 });
  }, 120_000);
  afterAll(() => cluster?.stop());
  afterEach(async () => {
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
    dir = null;
    expect(await cluster.leftovers(20_000)).toEqual([]);
  }, 60_000);

  it.each([['', []], [' (both with --secure)', ['--secure']]])('job A (mpiexec on th1) accepts, job B (mpiexec on th3) connects%s: pt2pt, collectives, merge, disconnect', async (_name, flags) => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-couple-hosts-'));
    const [a, b] = await Promise.all([
      mpiexec('th1', ['-n', '2', ...flags, '--hosts', 'th1:1,th2:3', COUPLE_JOBS, 'accept', dir]),
      mpiexec('th3', ['-n', '2', ...flags, '--hosts', 'th3:1,th2:3', COUPLE_JOBS, 'connect', dir]),
    ]);
    const both = `${report('job A', a)}\n${report('job B', b)}`;
    expect(a.code, both).toBe(0);
    expect(b.code, both).toBe(0);
    expect(a.stdout.split('\n').filter((l) => l.startsWith('coupled OK')).sort(), both).toEqual(['coupled OK A 0/2', 'coupled OK A 1/2']);
    expect(b.stdout.split('\n').filter((l) => l.startsWith('coupled OK')).sort(), both).toEqual(['coupled OK B 0/2', 'coupled OK B 1/2']);
  }, 150_000);
});
