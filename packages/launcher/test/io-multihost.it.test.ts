// testlist: { file: 'io-multihost.it.test.ts', np: [4] } — MPI-IO across namespaced hosts sharing one directory.
/**
 * Issue 37 on a real multi-host network: the File program of core's tests
 * (packages/core/test/programs/file-io.ts: explicit offsets, the 3-D array
 * through subarray views, the shared pointer, ordered access, external32,
 * atomic mode, the error classes) runs on 2 hosts of a namespace cluster x 2
 * ranks, in a directory every host sees (the hosts share this machine's file
 * system, as NFS would share a real one). By default there is one
 * aggregator per host (the program checks cb_nodes = 2), and the two-phase
 * path is forced on (romio_cb_* = enable) and left to choose (automatic).
 * Skipped, with the reason printed, where namespaces cannot be made.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster } from './cluster/cluster.ts';
import { MPIEXEC } from './run-mpiexec.ts';

const support = clusterSupport();
const FILE_IO = 'packages/core/test/programs/file-io.ts';

describe.skipIf(!support.ok)(withSkipReason('MPI-IO across hosts (namespace cluster, ssh)', support), () => {
  let cluster: Cluster;
  let tmp: string;

  beforeAll(async () => {
    cluster = await startCluster({ hosts: 2 });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-io-mh-'));
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect(await cluster.leftovers(20_000)).toEqual([]);
  }, 60_000);

  it.each(['enable', 'automatic'])('file-io on th1:2,th2:2 with romio_cb_* %s: every rank OK, one aggregator per host', async (cb) => {
    const dir = mkdtempSync(path.join(tmp, `${cb}-`));
    const r = await cluster.run('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '-n', '4', '--hosts', 'th1:2,th2:2', '--timeout', '150', FILE_IO, dir, cb], { deadlineMs: 170_000 });
    const ok = r.stdout.split('\n').filter((l) => /file-io OK/.test(l)).length;
    if (r.code !== 0 || ok !== 4) throw new Error(`job failed (exit ${r.code}, ${ok} of 4 ranks OK)\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    expect(readdirSync(dir).sort()).toEqual(['array3d.dat', 'blocks.dat', 'misc.dat']);
  }, 180_000);
});
