// testlist: { file: 'mpi-operator.it.test.ts', np: [2, 4] } — the Kubeflow MPI Operator's conventions on the namespace cluster.
/**
 * mpiexec started the way the Kubeflow MPI Operator starts a launcher pod
 * (issue 38): no --hosts or --hostfile, the hostfile named by
 * OMPI_MCA_orte_default_hostfile (Open MPI's "host slots=N") or
 * HYDRA_HOST_FILE (MPICH's "host:N"), extra ssh arguments in
 * OMPI_MCA_plm_rsh_args, a worker whose sshd listens on port 2222 (set in the
 * ssh config, as the Operator's images do) and starts only after mpiexec
 * tried it, and a worker whose name resolves only after mpiexec tried it
 * (a pod's DNS record appearing late). th1 plays the launcher pod, th2 and th3 the workers; the ssh
 * config comes only through the arguments variable, so the job runs only if
 * mpiexec applied it. A worker that never comes up ends the job with one line
 * once the retry window is spent. Skipped, with the reason printed, where
 * namespaces cannot be made.
 */
import { type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster, type ClusterRunOptions, type ClusterRunResult } from './cluster/cluster.ts';
import { FIXTURES, MPIEXEC } from './run-mpiexec.ts';

const support = clusterSupport();
const MH_RANK = `${FIXTURES}/mh-rank.ts`;
/** The info line mpiexec writes before each new ssh attempt (remote-host.ts). */
const RETRY_LINE = 'host not reachable yet; trying ssh again';

describe.skipIf(!support.ok)(withSkipReason('mpiexec under the MPI Operator\'s conventions (namespace cluster)', support), () => {
  let cluster: Cluster;
  let tmp: string;
  /** ssh_config: th2's sshd on port 2222 (the Operator's images put the port in the ssh config), the cluster's settings for the rest. */
  let sshConfig: string;
  let lateSshd: ChildProcess | null = null;

  /** mpiexec on th1 (the launcher pod) with `env` added, and no --launcher-exec: ssh as the Operator's launcher runs it. */
  const mpiexec = (args: readonly string[], env: NodeJS.ProcessEnv, opts: ClusterRunOptions = {}): Promise<ClusterRunResult> =>
    cluster.run('th1', ['node', MPIEXEC, ...args], { deadlineMs: 120_000, env: { ...process.env, NODE_OPTIONS: '', ...env }, ...opts });

  /** Starts an sshd on th2's address, port 2222: the worker whose container came up late. */
  const startLateSshd = (): void => {
    const config = readFileSync(path.join(cluster.stateDir, 'th2.sshd_config'), 'utf8')
      .replace(/^Port 22$/m, 'Port 2222')
      .replace(/^PidFile .*$/m, `PidFile ${path.join(tmp, 'th2-2222.pid')}`);
    const file = path.join(tmp, 'th2-2222.sshd_config');
    writeFileSync(file, config);
    lateSshd = cluster.spawn('th2', ['/usr/sbin/sshd', '-D', '-e', '-f', file]);
  };

  const hostfile = (name: string, text: string): string => {
    const file = path.join(tmp, name);
    writeFileSync(file, text);
    return file;
  };

  beforeAll(async () => {
    cluster = await startCluster({ hosts: 3 });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-operator-'));
    sshConfig = path.join(tmp, 'ssh_config');
    // First match wins in ssh_config: th2's port (and its host key under its name, not "[th2]:2222") before the cluster's blocks.
    // th3late: th3 under a name that th1 cannot resolve until the test adds it (a pod's DNS record appearing late).
    writeFileSync(sshConfig, `Host th2\n  Port 2222\n  HostKeyAlias th2\nHost th3late\n  HostKeyAlias th3\n${readFileSync(cluster.sshConfigPath, 'utf8')}`);
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(async () => {
    if (lateSshd?.pid !== undefined) {
      try {
        process.kill(-lateSshd.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    lateSshd = null;
    // Nothing of the job may survive on any host (proxies, ranks, their children, the late sshd).
    expect(await cluster.leftovers(20_000)).toEqual([]);
  }, 60_000);

  it('runs on the hosts of OMPI_MCA_orte_default_hostfile with OMPI_MCA_plm_rsh_args, waiting for a worker whose sshd (port 2222) starts late', async () => {
    const env = {
      OMPI_MCA_orte_default_hostfile: hostfile('ompi-hostfile', 'th2 slots=2\nth3 slots=2\n'),
      OMPI_MCA_plm_rsh_args: `-F ${sshConfig} -o ConnectionAttempts=1`,
    };
    // th2's sshd starts only once mpiexec has found it down and said it tries again.
    const r = await mpiexec(['--log-level', 'info', '-n', '4', MH_RANK], env, { onOutput: { text: RETRY_LINE, action: startLateSshd } });
    expect(r.code, r.stderr).toBe(0);
    const ranks = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { rank: number; host: string; sum: number });
    expect(ranks.sort((a, b) => a.rank - b.rank).map((x) => x.host)).toEqual(['th2', 'th2', 'th3', 'th3']);
    for (const x of ranks) expect(x.sum).toBe(6);
    const retries = r.stderr.split('\n').filter((l) => l.includes(RETRY_LINE));
    expect(retries.length).toBeGreaterThanOrEqual(1);
    for (const l of retries) expect(l).toMatch(/^mpiexec: info: host not reachable yet; trying ssh again \(remoteHost=th2, attempt=\d+, retryInSec=\d+, ssh=.*port 2222: Connection refused/);
  }, 150_000);

  it('gives up on a worker that never comes up once --connect-retry is spent, with one line naming it (HYDRA_HOST_FILE)', async () => {
    const env = {
      HYDRA_HOST_FILE: hostfile('hydra-hostfile', 'th3:1\nth2:1\n'),
      HYDRA_LAUNCH_EXTRA_ARGS: `-F ${sshConfig}`,
    };
    const r = await mpiexec(['--log-level', 'info', '--connect-retry', '4', '-n', '2', MH_RANK], env);
    expect(r.code).toBe(255);
    expect(r.stderr).toMatch(/^mpiexec: host th2: unreachable: .*port 2222: Connection refused; check the host name.* \(gave up after [34] attempts in [3-5] s; --connect-retry SECONDS waits longer\)/m);
    expect(r.stderr.split('\n').filter((l) => l.includes(RETRY_LINE)).length).toBeGreaterThanOrEqual(2);
  }, 150_000);

  it('does not retry hosts named on the command line unless asked', async () => {
    const r = await mpiexec(['--hosts', 'th2', '-n', '1', MH_RANK], { OMPI_MCA_plm_rsh_args: `-F ${sshConfig}` });
    expect(r.code).toBe(255);
    expect(r.stderr).toMatch(/^mpiexec: host th2: unreachable: .*Connection refused/m);
    expect(r.stderr).not.toContain('gave up after');
  }, 150_000);

  it('waits for a worker whose name does not resolve yet (its DNS record appears late)', async () => {
    const env = {
      OMPI_MCA_orte_default_hostfile: hostfile('late-name-hostfile', 'th3late slots=2\n'),
      OMPI_MCA_plm_rsh_args: `-F ${sshConfig}`,
    };
    // th1's /etc/hosts is a bind mount of this file (scripts/netns-cluster.sh): appending to it is th1's DNS learning the name.
    const th3 = cluster.hosts.find((h) => h.name === 'th3')!;
    const addName = (): void => appendFileSync(path.join(cluster.stateDir, 'th1.etc-hosts'), `${th3.address} th3late\n`);
    const r = await mpiexec(['--log-level', 'info', '-n', '2', MH_RANK], env, { onOutput: { text: RETRY_LINE, action: addName } });
    expect(r.code, r.stderr).toBe(0);
    const ranks = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { name: string; sum: number });
    expect(ranks.map((x) => x.name)).toEqual(['th3', 'th3']);
    for (const x of ranks) expect(x.sum).toBe(1);
    expect(r.stderr).toMatch(/^mpiexec: info: host not reachable yet; trying ssh again \(remoteHost=th3late, attempt=2, .*Could not resolve hostname th3late/m);
  }, 150_000);
});
