// testlist: { file: 'trace-multihost.it.test.ts', np: [4] } — mpiexec --trace across namespaced hosts.
/**
 * mpiexec --trace (issue 41) for a job on two hosts of a namespace cluster (test/cluster/cluster.ts):
 * the ranks on th2 start through ssh and their proxy, measure their clock offset to mpiexec on th1
 * and hand their traces over like the ranks on th1; the file names each rank's host, and every
 * send has its arrow to its receive across the hosts. Skipped, with the reason, where namespaces
 * cannot be made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster } from './cluster/cluster.ts';
import { FIXTURES, MPIEXEC } from './run-mpiexec.ts';
import { crossHostArrows, expectArrowsForward, expectEveryRank, expectTraceRankArrows, readTrace } from './trace-checks.ts';

const support = clusterSupport();

describe.skipIf(!support.ok)(withSkipReason('mpiexec --trace across hosts (namespace cluster, ssh)', support), () => {
  let cluster: Cluster;
  let tmp: string;

  beforeAll(async () => {
    cluster = await startCluster({ hosts: 2 });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-trace-mh-'));
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });

  it('merges the traces of ranks on two hosts, with arrows across them', async () => {
    const file = path.join(tmp, 'mh.json');
    const r = await cluster.run('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '-n', '4', '--hosts', 'th1:2,th2:2', '--trace', file, `${FIXTURES}/trace-rank.ts`], { deadlineMs: 90_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = readTrace(file);
    const hosts = ['th1', 'th1', 'th2', 'th2'];
    expectEveryRank(doc, 4, hosts);
    const arrows = expectTraceRankArrows(doc.traceEvents, 4);
    // the ring crosses hosts (rank 1 (th1) -> rank 2 (th2), rank 3 (th2) -> rank 0 (th1)), and so do ranks 2 and 3's messages to rank 0
    expect(crossHostArrows(arrows, hosts)).toEqual(['1>2', '1>2', '2>0', '2>0', '3>0', '3>0', '3>0', '3>0']);
    // aligned clocks: a receive that completed cannot end before its send began (up to the alignment's error, 1 ms here)
    expectArrowsForward(arrows, 1000);
  }, 150_000);
});
