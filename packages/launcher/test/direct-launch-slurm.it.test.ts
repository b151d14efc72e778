/**
 * Direct launch by Slurm (issue 38): `srun --mpi=pmi2 -n 4 node app.mjs` on a
 * real two-node Slurm 22.05 (scripts/slurm-cluster.sh: each node its own
 * network and UTS namespace, 2 CPUs each) starts tsmpi ranks with no tsmpi
 * mpiexec; they join through PMI-2 on the PMI_FD slurmstepd hands them
 * (core/src/pmi-direct) and talk across the nodes. Checks a ring of
 * point-to-point messages, an allreduce and a gather spanning both nodes, a
 * TypeScript program run as `node --import tsx`, MPI.abort (Slurm kills the
 * step), a rank exiting before finalize, and that nothing is left on any
 * node. Skipped, with a line saying why, where Slurm cannot start (not root,
 * no namespaces, slurm-wlm not installed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slurmSupport, startSlurm, type SlurmCluster } from './slurm/slurm.ts';
import { FIXTURES, REPO_ROOT } from './run-mpiexec.ts';

const why = slurmSupport();
if (why !== null) console.warn(`direct-launch-slurm.it.test.ts: skipped: ${why}`);

const NODE = process.execPath;
/** The ranks' TMPDIR (the nodes share the file system): the socket files of ranks Slurm kills go here and are removed. */
const TMP = fs.mkdtempSync('/tmp/pmid-');
const RANK_MJS = path.join(REPO_ROOT, FIXTURES, 'direct-rank.mjs');
const RANK_TS = path.join(REPO_ROOT, FIXTURES, 'direct-rank.ts');

interface RankLine { rank: number; size: number; from: number; sum: number; hosts?: string[]; node?: string | null }
const rankLines = (text: string): RankLine[] =>
  text.split('\n').filter((l) => l.startsWith('{"rank"')).map((l) => JSON.parse(l) as RankLine).sort((a, b) => a.rank - b.rank);

function expectRing(lines: RankLine[], n: number): void {
  expect(lines.map((l) => l.rank)).toEqual(Array.from({ length: n }, (_, r) => r));
  for (const l of lines) {
    expect(l.size).toBe(n);
    expect(l.from).toBe((l.rank + n - 1) % n);
    expect(l.sum).toBe((n * (n + 1)) / 2);
  }
}

describe.skipIf(why !== null)(`direct launch by srun --mpi=pmi2 (PMI-2)${why === null ? '' : ` (skipped: ${why})`}`, () => {
  let slurm: SlurmCluster;

  beforeAll(async () => {
    slurm = await startSlurm({ nodes: 2, cpusPerNode: 2 });
  }, 150_000);

  afterAll(async () => {
    await slurm?.stop();
    fs.rmSync(TMP, { recursive: true, force: true });
  }, 150_000);

  /** No rank of these tests is left on any node (srun, on the login node, names the same program). */
  async function expectNothingLeft(): Promise<void> {
    expect(await slurm.leftovers(/direct-rank\.(mjs|ts)/, { nodes: slurm.nodes })).toEqual([]);
  }

  it('srun --mpi=pmi2 -n 4 -N 2 node app.mjs: a ring, an allreduce and a gather across both nodes', async () => {
    const r = await slurm.run(['env', `TMPDIR=${TMP}`, 'srun', '--mpi=pmi2', '-n', '4', '-N', '2', NODE, RANK_MJS], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.status, r.stderr).toBe(0);
    const lines = rankLines(r.stdout);
    expectRing(lines, 4);
    // Slurm's block placement: ranks 0-1 on the first node, 2-3 on the second; the processor names say where each ran.
    expect(lines.map((l) => l.node)).toEqual([slurm.nodes[0], slurm.nodes[0], slurm.nodes[1], slurm.nodes[1]]);
    expect(lines[0]!.hosts).toEqual([slurm.nodes[0], slurm.nodes[0], slurm.nodes[1], slurm.nodes[1]]);
    await expectNothingLeft();
  }, 130_000);

  it('a TypeScript program runs as node --import tsx app.ts', async () => {
    const r = await slurm.run(['env', `TMPDIR=${TMP}`, 'srun', '--mpi=pmi2', '-n', '3', '-N', '2', NODE, '--import', 'tsx', RANK_TS], { deadlineMs: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expectRing(rankLines(r.stdout), 3);
  }, 130_000);

  it('MPI.abort(5) on rank 1: Slurm kills the step, srun names the tasks, the abort line is printed', async () => {
    const r = await slurm.run(['env', `TMPDIR=${TMP}`, 'srun', '--mpi=pmi2', '-n', '4', '-N', '2', NODE, RANK_MJS, '1', '5'], { deadlineMs: 120_000 });
    expect(r.timedOut).toBe(false);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('tsmpi: rank 1: MPI.abort(5) on COMM_WORLD: the launcher ends the job (exit code 5)');
    expect(r.stderr).toMatch(/CANCELLED|Killed/);
    await expectNothingLeft();
  }, 130_000);

  it('a rank that exits 3 before finalize: srun exits non-zero and names it, no rank is left', async () => {
    const r = await slurm.run(['env', `TMPDIR=${TMP}`, 'srun', '--mpi=pmi2', '--kill-on-bad-exit=1', '-n', '4', '-N', '2', NODE, RANK_MJS, '-1', '0', '2', '3'], { deadlineMs: 120_000 });
    expect(r.timedOut).toBe(false);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/task 2: Exited with exit code 3/);
    await expectNothingLeft();
  }, 130_000);
});
