/**
 * mpiexec --trace under a real Slurm (issue 41, "Must hold": the trace works under Slurm, with
 * send->receive arrows correct across hosts): a two-node Slurm 22.05 of 2 CPUs per node
 * (scripts/slurm-cluster.sh, as slurm.it.test.ts). mpiexec runs on the login node and starts the 4
 * ranks of fixtures/trace-rank.ts through srun (2 per node, through their proxies), inside
 * `salloc -n 4` and, outside an allocation, with `--launcher slurm` getting its own nodes. The ranks
 * measure their clock offset to mpiexec over the wire-up service and hand their traces over at
 * finalize; the test reads the merged file with trace-checks.ts, as the single-host and namespace
 * cluster tests do: it parses as Chrome trace JSON, every rank is in it named with the node Slurm
 * put it on, every send has its arrow to the receive that matched it, on the other node too, and
 * no arrow ends before it starts once the clocks are aligned. Skipped, with a line saying why,
 * where Slurm cannot start (not root, no namespaces, slurm-wlm not installed).
 * testlist: { file: 'slurm-trace.it.test.ts', np: [4] }
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { slurmSupport, startSlurm, type SlurmCluster, type SlurmRunResult } from './slurm/slurm.ts';
import { FIXTURES } from './run-mpiexec.ts';
import { crossHostArrows, expectArrowsForward, expectEveryRank, expectTraceRankArrows, readTrace } from './trace-checks.ts';

const why = slurmSupport();
if (why !== null) console.warn(`slurm-trace.it.test.ts: skipped: ${why}`);

const MPIEXEC = 'packages/launcher/bin/mpiexec.mjs';
const NODE = process.execPath;
/** Processes of ours (mpiexec, proxies, ranks, their steps) on the login node or any node. */
const OURS = /mpiexec\.mjs|tsmpi-proxy|trace-rank\.ts|slurmstepd/;

/** A shell command that runs mpiexec with `args` and prints its status (salloc's own status is not mpiexec's). */
function mpiexecShell(args: readonly string[]): string {
  const q = (a: string): string => `'${a.replaceAll("'", "'\\''")}'`;
  return `${[NODE, MPIEXEC, ...args].map(q).join(' ')}; echo "mpiexec-status=$?"`;
}

function mpiexecStatus(r: SlurmRunResult): string | undefined {
  return /mpiexec-status=(\d+)/.exec(r.stdout)?.[1];
}

describe.skipIf(why !== null)(`mpiexec --trace under Slurm${why === null ? '' : ` (skipped: ${why})`}`, () => {
  let slurm: SlurmCluster;
  let tmp: string;

  beforeAll(async () => {
    slurm = await startSlurm({ nodes: 2, cpusPerNode: 2 });
    // The cluster's dir, which its stop removes: mpiexec writes the trace on the login node, which shares the file system.
    tmp = mkdtempSync(path.join(slurm.dir, 'tmp', 'trace-'));
  }, 150_000);

  afterAll(async () => {
    await slurm?.stop();
  }, 150_000);

  /**
   * Runs `mpiexec --launcher slurm ARGS --trace FILE trace-rank.ts` in a shell that `start` wraps (in
   * salloc or not); returns the ranks' hosts as the file names them and the arrows between nodes, checked.
   */
  async function traceJob(file: string, args: readonly string[], start: (shell: string) => string[]): Promise<{ hosts: string[]; crossing: string[] }> {
    const r = await slurm.run(start(mpiexecShell(['--launcher', 'slurm', ...args, '--trace', file, `${FIXTURES}/trace-rank.ts`])), { deadlineMs: 150_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(mpiexecStatus(r), `${r.stdout}\n${r.stderr}`).toBe('0');
    expect(r.stdout.split('\n').filter((l) => /^trace-rank \d done$/.test(l)).sort()).toEqual([0, 1, 2, 3].map((x) => `trace-rank ${x} done`));
    const doc = readTrace(file);
    const hosts = doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').sort((a, b) => a.pid - b.pid)
      .map((e) => /^rank \d+ \((.*)\)$/.exec(String(e.args!['name']))?.[1] ?? '');
    expectEveryRank(doc, 4, hosts);
    // Both nodes ran ranks, and each rank's events sit on the node Slurm gave it.
    expect([...new Set(hosts)].sort()).toEqual([...slurm.nodes]);
    const arrows = expectTraceRankArrows(doc.traceEvents, 4);
    // The ranks' clocks are aligned to mpiexec's on the login node (to half a round trip: 1 ms is generous).
    expectArrowsForward(arrows, 1000);
    expect(await slurm.leftovers(OURS)).toEqual([]);
    return { hosts, crossing: crossHostArrows(arrows, hosts) };
  }

  it('salloc -n 4 mpiexec --trace: every rank on its node, and arrows from each send to its receive across the nodes', async () => {
    const { hosts, crossing } = await traceJob(path.join(tmp, 'salloc.json'), [], (shell) => ['salloc', '-n', '4', 'bash', '-c', shell]);
    // Where Slurm placed the tasks (2 CPUs per node: ranks 0-1 on the first node, 2-3 on the second).
    expect(hosts).toEqual([slurm.nodes[0], slurm.nodes[0], slurm.nodes[1], slurm.nodes[1]]);
    // The ring crosses the nodes (1 -> 2, 3 -> 0, twice each), and so do ranks 2 and 3's two messages each to rank 0.
    expect(crossing).toEqual(['1>2', '1>2', '2>0', '2>0', '3>0', '3>0', '3>0', '3>0']);
  }, 200_000);

  it('--launcher slurm -n 4 --ppn 2 outside an allocation: the same, on the nodes srun allocated', async () => {
    const { hosts, crossing } = await traceJob(path.join(tmp, 'srun.json'), ['-n', '4', '--ppn', '2'], (shell) => ['bash', '-c', shell]);
    expect(hosts.filter((h) => h === slurm.nodes[0])).toHaveLength(2);
    // Every arrow between ranks of different nodes is there, whichever ranks srun put together.
    const expected = ['0>1', '1>2', '2>3', '3>0', '0>1', '1>2', '2>3', '3>0', '1>0', '2>0', '3>0', '1>0', '2>0', '3>0']
      .filter((p) => { const [s, d] = p.split('>').map(Number); return hosts[s!] !== hosts[d!]; }).sort();
    expect(crossing).toEqual(expected);
    expect(crossing.length).toBeGreaterThan(0);
  }, 200_000);
});
