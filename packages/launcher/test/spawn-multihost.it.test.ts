// testlist: { file: 'spawn-multihost.it.test.ts', np: [2] } — spawn onto other hosts (namespace cluster, ssh).
/**
 * Dynamic processes across hosts (issue 37, docs/adr/0040): mpiexec runs on th1 of a namespace
 * cluster (test/cluster/cluster.ts) and spawns children onto the job's next free slots, on
 * another host, through a proxy of their own (ssh, the cluster's config), then onto the host
 * that info `host` names. Parents and children exchange messages over the intercommunicator,
 * merge it and allreduce (fixtures/spawn-hosts.ts checks the values); every process says on
 * which host it ran. After every test, no process of the job is left on any host.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clusterSupport, startCluster, withSkipReason, type Cluster, type ClusterRunResult } from './cluster/cluster.ts';
import { FIXTURES, MPIEXEC } from './run-mpiexec.ts';

const support = clusterSupport();
const SPAWN_HOSTS = `${FIXTURES}/spawn-hosts.ts`;

interface Line {
  role: 'parent' | 'child';
  rank: number;
  size: number;
  host: string;
  name?: string;
  merged?: number;
  bySlots?: string[];
  byInfo?: string[];
  progress?: string;
}

function lines(stdout: string): Line[] {
  return stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);
}

describe.skipIf(!support.ok)(withSkipReason('spawn across hosts (namespace cluster, ssh)', support), () => {
  let cluster: Cluster;

  const mpiexec = (args: readonly string[]): Promise<ClusterRunResult> =>
    cluster.run('th1', ['node', MPIEXEC, '--launcher-exec', cluster.launcherExec, '--timeout', '100', ...args], { deadlineMs: 120_000 });

  beforeAll(async () => {
    cluster = await startCluster({ hosts: 3 });
  }, 120_000);
  afterAll(() => cluster?.stop());
  afterEach(async () => {
    expect(await cluster.leftovers(20_000)).toEqual([]);
  }, 60_000);

  /** Runs the fixture: the parents on `parentHosts` at `level`, 2 children on `slotHosts`, 1 on `infoHost`, each at 'single'. */
  async function check(args: readonly string[], infoHost: string, parentHosts: string[], slotHosts: string[], level = 'single'): Promise<void> {
    const r = await mpiexec([...args, SPAWN_HOSTS, infoHost, level]);
    const report = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    expect(r.code, report).toBe(0);
    expect(r.stderr, report).toBe('');
    const all = lines(r.stdout);
    const parents = all.filter((l) => l.role === 'parent').sort((a, b) => a.rank - b.rank);
    const children = all.filter((l) => l.role === 'child');
    expect(parents.map((p) => p.host), report).toEqual(parentHosts);
    expect(parents[0]!.bySlots, report).toEqual(slotHosts);
    expect(parents[0]!.byInfo, report).toEqual([infoHost]);
    // The two children of the first spawn, then the one of the second, each where its parents saw it.
    expect(children.filter((c) => c.size === 2).map((c) => c.name).sort(), report).toEqual([...slotHosts].sort());
    expect(children.filter((c) => c.size === 1).map((c) => c.name), report).toEqual([infoHost]);
    for (const c of children) expect(c.merged, report).toBe(2 + c.size);
    // Progress auto: threads at 'multiple', else inline, and a spawned process's its parents' (which it must dial).
    for (const c of children) expect(c.progress, report).toBe(level === 'multiple' ? 'threads' : 'inline');
  }

  it('a job whose ranks all run on mpiexec\'s host spawns onto the other hosts of its slots, and where info host says', async () => {
    await check(['-n', '2', '--hosts', 'th1:2,th2:2,th3:1'], 'th3', ['th1', 'th1'], ['th2', 'th2']);
  }, 150_000);

  it('parents at threadLevel \'multiple\' (channel engines) spawn children at \'single\' onto other hosts, which run the parents\' progress', async () => {
    await check(['-n', '2', '--hosts', 'th1:2,th2:2,th3:1'], 'th3', ['th1', 'th1'], ['th2', 'th2'], 'multiple');
  }, 150_000);

  it('a 2-host job spawns onto a third host by slot and back onto mpiexec\'s host by info host (--secure)', async () => {
    await check(['-n', '2', '--secure', '--hosts', 'th1:1,th2:1,th3:3'], 'th1', ['th1', 'th2'], ['th3', 'th3']);
  }, 150_000);
});
