/**
 * Unit tests of SpawnLaunchers.whyNotHost: where a spawn may start processes under each launcher
 * (ADR 0040): anywhere under ssh, this machine only under fork, the allocation's nodes under Slurm.
 */
import { describe, expect, it } from 'vitest';
import type { LaunchOptions } from './options.ts';
import type { SlurmLaunch } from './slurm-launcher.ts';
import { SpawnLaunchers, type SpawnLaunchersDeps } from './spawn-launchers.ts';

const INSIDE: SlurmLaunch = {
  srun: ['srun'], version: { major: 22, minor: 5, micro: 8 }, target: { kind: 'allocation', hosts: [] }, hasPlaceholderHosts: false,
  jobId: '12', slots: [{ host: 'n01', slots: 2 }], allocationNodes: ['n01', 'n02', 'n03'],
};

/** Only what whyNotHost reads: the launcher and which hosts are this machine. */
function launchers(launcher: LaunchOptions['launcher'], slurm: SlurmLaunch | undefined): SpawnLaunchers {
  return new SpawnLaunchers({
    options: { launcher } as LaunchOptions, choice: { hostname: 'n01', interfaces: {}, slurm }, initialRemote: null,
  } as unknown as SpawnLaunchersDeps);
}

describe('SpawnLaunchers.whyNotHost', () => {
  it('inside a Slurm allocation: any node of it, including ones --hosts left out; another host is named with the job\'s nodes', () => {
    const s = launchers('slurm', INSIDE);
    expect(s.whyNotHost('n01')).toBeNull();
    expect(s.whyNotHost('n02')).toBeNull();
    expect(s.whyNotHost('n03')).toBeNull();
    expect(s.whyNotHost('n09')).toBe('host n09 is not a node of Slurm job 12 (n[01-03]); srun starts tasks only on the job\'s nodes');
  });

  it('--launcher slurm outside an allocation: mpiexec\'s host only', () => {
    const s = launchers('slurm', { ...INSIDE, target: { kind: 'new', nodes: 2, cpusPerProxy: 1, jobName: 'tsmpi-x' }, jobId: null, slots: null, allocationNodes: [] });
    expect(s.whyNotHost('n01')).toBeNull();
    expect(s.whyNotHost('slurm-node-1')).toMatch(/^host slurm-node-1 is not mpiexec's: --launcher slurm outside an allocation spawns on mpiexec's host only/);
  });

  it('fork: this machine only; ssh: any host', () => {
    expect(launchers('fork', undefined).whyNotHost('n02')).toMatch(/--launcher fork starts processes here only/);
    expect(launchers('ssh', undefined).whyNotHost('n02')).toBeNull();
  });
});
