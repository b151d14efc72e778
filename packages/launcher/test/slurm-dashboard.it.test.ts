/**
 * mpiexec --dashboard under a real Slurm (issue 41, "Must hold": the dashboard works under Slurm):
 * a two-node Slurm 22.05 of 2 CPUs per node (scripts/slurm-cluster.sh, as slurm.it.test.ts). Inside
 * `salloc -n 4`, mpiexec on the login node starts the 4 ranks through srun (2 per node, through
 * their proxies); they hold in a wait-for cycle (fixtures/dashboard-cycle.ts). A client on the login
 * node reads the dashboard's WebSocket feed (fixtures/dashboard-watch.mjs: what the page reads) and
 * the test checks that every rank is there with the node Slurm put it on, its pid, its state and its
 * call, that the cycle is found, and that the ring's bytes are in the matrix. Skipped, with a line
 * saying why, where Slurm cannot start (not root, no namespaces, slurm-wlm not installed).
 * testlist: { file: 'slurm-dashboard.it.test.ts', np: [4] }
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slurmSupport, startSlurm, type SlurmCluster } from './slurm/slurm.ts';
import { FIXTURES } from './run-mpiexec.ts';

const why = slurmSupport();
if (why !== null) console.warn(`slurm-dashboard.it.test.ts: skipped: ${why}`);

const MPIEXEC = 'packages/launcher/bin/mpiexec.mjs';
const NODE = process.execPath;

/** What the test reads of a dashboard snapshot (dashboard-state.ts). */
interface Snapshot {
  readonly size: number;
  readonly ranks: readonly { rank: number; host: string; pid: number; state: string; threads: { call: string }[] }[];
  readonly views: { cycles: number[][]; matrix: { bytes: number[][] } };
}

/**
 * A shell script for inside the allocation: mpiexec --dashboard in the background, its URL read from
 * its stderr, the watcher run against it, then mpiexec ended (SIGTERM: the ranks never end by
 * themselves). Prints the watcher's line, `watch-status=N` and `mpiexec-status=N`; mpiexec's stderr
 * goes to stderr.
 */
function dashboardScript(): string {
  const q = (a: string): string => `'${a.replaceAll("'", "'\\''")}'`;
  return [
    'err=$(mktemp)',
    `${q(NODE)} ${q(MPIEXEC)} --dashboard ${q(`${FIXTURES}/dashboard-cycle.ts`)} >/dev/null 2>"$err" &`,
    'm=$!',
    'url=',
    'for i in $(seq 1 900); do url=$(sed -n "s/^mpiexec: dashboard at \\(http:[^ ]*\\)$/\\1/p" "$err" | head -n 1); [ -n "$url" ] && break; sleep 0.1; done',
    `${q(NODE)} ${q(`${FIXTURES}/dashboard-watch.mjs`)} "$url"`,
    'echo "watch-status=$?"',
    'kill -TERM "$m"; wait "$m"; echo "mpiexec-status=$?"',
    'cat "$err" >&2; rm -f "$err"',
  ].join('\n');
}

describe.skipIf(why !== null)(`mpiexec --dashboard under Slurm${why === null ? '' : ` (skipped: ${why})`}`, () => {
  let slurm: SlurmCluster;

  beforeAll(async () => {
    slurm = await startSlurm({ nodes: 2, cpusPerNode: 2 });
  }, 150_000);

  afterAll(async () => {
    await slurm?.stop();
  }, 150_000);

  it('salloc -n 4 mpiexec --dashboard: the feed shows every rank on its node, in its call, and the cycle', async () => {
    const r = await slurm.run(['salloc', '-n', '4', 'bash', '-c', dashboardScript()], { deadlineMs: 150_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(/watch-status=(\d+)/.exec(r.stdout)?.[1], `${r.stdout}\n${r.stderr}`).toBe('0');
    const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
    expect(line, r.stdout).toBeDefined();
    const s = JSON.parse(line!) as Snapshot;
    expect(s.size).toBe(4);
    expect(s.ranks.map((x) => x.rank)).toEqual([0, 1, 2, 3]);
    // Where Slurm placed the tasks (2 CPUs per node: ranks 0-1 on the first node, 2-3 on the second).
    expect(s.ranks.map((x) => x.host)).toEqual([slurm.nodes[0], slurm.nodes[0], slurm.nodes[1], slurm.nodes[1]]);
    for (const x of s.ranks) {
      expect(x.pid).toBeGreaterThan(0);
      expect(x.state).toBe('in MPI');
    }
    expect(s.ranks.map((x) => x.threads[0]!.call)).toEqual([
      'Recv (comm COMM_WORLD, peer 1, tag 9)', 'Recv (comm COMM_WORLD, peer 2, tag 9)', 'Recv (comm COMM_WORLD, peer 0, tag 9)', 'barrier (comm COMM_WORLD)',
    ]);
    expect(s.views.cycles).toEqual([[0, 1, 2]]);
    // The ring's Sendrecv (4096 (r+1) bytes from r to r+1), within and across the nodes.
    for (let x = 0; x < 4; x++) expect(s.views.matrix.bytes[x]![(x + 1) % 4]).toBeGreaterThanOrEqual(4096 * (x + 1));
    // mpiexec ended on SIGTERM, and no rank, proxy or step is left on any node.
    expect(/mpiexec-status=(\d+)/.exec(r.stdout)?.[1]).toBeDefined();
    expect(await slurm.leftovers(/mpiexec\.mjs|tsmpi-proxy|dashboard-cycle\.ts|slurmstepd/)).toEqual([]);
  }, 320_000);
});
