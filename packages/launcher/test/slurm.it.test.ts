/**
 * mpiexec under a real Slurm (issue 12): a two-node Slurm 22.05 of 2 CPUs per
 * node (scripts/slurm-cluster.sh, each node its own network and UTS
 * namespace; clients and salloc shells run in the controller's namespace,
 * the "login node"). Checks that inside an allocation mpiexec takes its hosts,
 * slots and -n from Slurm and starts the other nodes' ranks through one srun
 * step (each rank's SLURM_STEP_ID and SLURMD_NODENAME say so); that sbatch
 * returns mpiexec's status; that a rank failure is named; that Ctrl-C and
 * --timeout's roll-call reach the ranks srun started; that scancel of the
 * step or the job ends every rank with a line saying Slurm cancelled it and
 * leaves no process on any node; that the job key shows neither in any
 * process's command line nor in `scontrol show step`; and that outside an
 * allocation `--launcher slurm` gets its own nodes from srun; that spawn inside an
 * allocation starts its children on another node through a new srun step. Skipped, with a
 * line saying why, where Slurm cannot start (not root, no namespaces,
 * slurm-wlm not installed).
 * testlist: { file: 'slurm.it.test.ts', np: [2, 4] }
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { slurmSupport, startSlurm, waitFor, type SlurmCluster, type SlurmRunResult } from './slurm/slurm.ts';

const why = slurmSupport();
if (why !== null) console.warn(`slurm.it.test.ts: skipped: ${why}`);

const MPIEXEC = 'packages/launcher/bin/mpiexec.mjs';
const RANK = 'packages/launcher/test/fixtures/slurm-rank.ts';
const SPAWN = 'packages/launcher/test/fixtures/slurm-spawn.ts';
const NODE = process.execPath;

/** One rank's JSON line (fixtures/slurm-rank.ts). */
interface RankLine {
  readonly rank: number;
  readonly size: number;
  readonly sum: number;
  readonly pid: number;
  readonly host: string;
  readonly name: string;
  readonly node: string | null;
  readonly job: string | null;
  readonly step: string | null;
  readonly key: string;
}

/** The ranks' JSON lines in rank order (a -l tag is dropped). */
function rankLines(text: string): RankLine[] {
  return text.split('\n').map((l) => l.replace(/^\[\d+\] /, '')).filter((l) => l.startsWith('{"rank"'))
    .map((l) => JSON.parse(l) as RankLine).sort((a, b) => a.rank - b.rank);
}

/** "mpiexec-status=N" printed by the shell that ran mpiexec inside salloc (salloc's own status is not mpiexec's). */
function mpiexecStatus(r: SlurmRunResult): number {
  const m = /mpiexec-status=(\d+)/.exec(r.stdout);
  if (m === null) throw new Error(`no mpiexec status in:\n${r.stdout}\n${r.stderr}`);
  return Number(m[1]);
}

/** A shell command that runs mpiexec with `args` and prints its status. */
function mpiexecShell(args: readonly string[]): string {
  const q = (a: string): string => `'${a.replaceAll("'", "'\\''")}'`;
  return `${[NODE, MPIEXEC, ...args].map(q).join(' ')}; echo "mpiexec-status=$?"`;
}

describe.skipIf(why !== null)(`mpiexec under Slurm${why === null ? '' : ` (skipped: ${why})`}`, () => {
  let slurm: SlurmCluster;

  beforeAll(async () => {
    slurm = await startSlurm({ nodes: 2, cpusPerNode: 2 });
  }, 150_000);

  afterAll(async () => {
    await slurm?.stop();
  }, 150_000);

  /** Processes of ours (mpiexec, proxies, ranks, their steps) on the login node or any node. */
  const OURS = /mpiexec\.mjs|tsmpi-proxy|slurm-rank\.ts|slurmstepd/;

  /** Nothing of ours is left on any node, and none of the ranks' `pids` is alive. */
  async function expectNothingLeft(pids: readonly number[] = []): Promise<void> {
    expect(await slurm.leftovers(OURS, { pids })).toEqual([]);
  }

  it('salloc -n 4 mpiexec (no -n): 4 ranks across both nodes as Slurm placed its tasks, all through one srun step', async () => {
    const r = await slurm.run(['salloc', '-n', '4', 'bash', '-c', mpiexecShell(['-l', RANK])], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(mpiexecStatus(r), r.stderr).toBe(0);
    const ranks = rankLines(r.stdout);
    expect(ranks.map((x) => x.rank)).toEqual([0, 1, 2, 3]);
    for (const x of ranks) {
      expect(x.size).toBe(4);
      expect(x.sum).toBe(6);
      // Where Slurm put them (2 CPUs per node: ranks 0-1 on n01, 2-3 on n02), and mpiexec agrees.
      expect(x.node).toBe(slurm.nodes[x.rank < 2 ? 0 : 1]);
      expect(x.host).toBe(x.node);
      expect(x.name).toBe(x.node);
      // Started by srun (mpiexec runs on the login node, which is not in the allocation): step 0 of the job.
      expect(x.step).toBe('0');
      expect(x.job).toMatch(/^\d+$/);
    }
    expect(new Set(ranks.map((x) => x.job)).size).toBe(1);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 130_000);

  it('--dry-run inside an allocation shows what Slurm gave and the srun command, without the key', async () => {
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(['--dry-run', RANK])], { deadlineMs: 60_000 });
    expect(mpiexecStatus(r), r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Slurm job \d+: n01:2,n02:2 \(SLURM_JOB_NODELIST=n\[01-02\], SLURM_TASKS_PER_NODE=2\(x2\)\); -n defaults to 4 \(SLURM_NTASKS=4\)/);
    expect(r.stdout).toContain('launcher: slurm (inside an allocation, chosen by default');
    expect(r.stdout).toMatch(/srun --nodes=2 --ntasks=2 --ntasks-per-node=1 '--nodelist=n\[01-02\]' --overlap --kill-on-bad-exit=1 --cpu-bind=none --mpi=none --export=ALL --input=all \S+ \S+tsmpi-proxy\.mjs --slurm/);
    expect(r.stdout).not.toMatch(/[0-9a-f]{64}/);
  }, 70_000);

  it('inside an allocation --launcher fork and --hosts (ssh) still win over Slurm', async () => {
    const fork = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(['--launcher', 'fork', '-n', '2', '--dry-run', RANK])], { deadlineMs: 60_000 });
    expect(mpiexecStatus(fork), fork.stderr).toBe(0);
    expect(fork.stdout).not.toMatch(/srun|Slurm job/);
    expect(fork.stdout).toMatch(/^host slurmctl \(ranks 0, 1\): fork here: /m);
    const ssh = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(['-n', '2', '--hosts', 'n01,n02', '--dry-run', RANK])], { deadlineMs: 60_000 });
    expect(mpiexecStatus(ssh), ssh.stderr).toBe(0);
    expect(ssh.stdout).not.toMatch(/srun|Slurm job/);
    expect(ssh.stdout).toMatch(/^host n02 \(ranks 1\): proxy: ssh -x -T /m);
  }, 70_000);

  it('sbatch --wait of a script running mpiexec: its status and output file; the batch node\'s ranks forked, the other node\'s through srun', async () => {
    const script = path.join(slurm.dir, 'tmp', 'ok.sh');
    const out = path.join(slurm.dir, 'tmp', 'ok.out');
    writeFileSync(script, `#!/bin/bash\n#SBATCH -N 2\n#SBATCH -n 4\ncd ${process.cwd()}\n${NODE} ${MPIEXEC} -l ${RANK}\n`, { mode: 0o755 });
    const r = await slurm.run(['sbatch', '--wait', '-o', out, script], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    const text = readFileSync(out, 'utf8');
    expect(r.status, `${r.stderr}\n${text}`).toBe(0);
    const ranks = rankLines(text);
    expect(ranks.map((x) => [x.rank, x.node, x.host])).toEqual([[0, 'n01', 'n01'], [1, 'n01', 'n01'], [2, 'n02', 'n02'], [3, 'n02', 'n02']]);
    // As PRRTE's mpirun serves its own node: the batch script runs on n01, whose ranks mpiexec forks (no step);
    // n02's come from the srun step mpiexec started.
    expect(ranks.map((x) => x.step)).toEqual([null, null, '0', '0']);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 130_000);

  it('sbatch --wait: a rank failing on the other node is named, and its exit code is the job\'s', async () => {
    const script = path.join(slurm.dir, 'tmp', 'fail.sh');
    const out = path.join(slurm.dir, 'tmp', 'fail.out');
    writeFileSync(script, `#!/bin/bash\n#SBATCH -N 2\n#SBATCH -n 4\ncd ${process.cwd()}\n${NODE} ${MPIEXEC} ${RANK} 0 3 5\n`, { mode: 0o755 });
    const r = await slurm.run(['sbatch', '--wait', '-o', out, script], { deadlineMs: 120_000 });
    const text = readFileSync(out, 'utf8');
    expect(r.status, `${r.stderr}\n${text}`).toBe(5);
    expect(text).toMatch(/^mpiexec: rank 3 \(host n02, pid \d+\) exited with code 5; aborting the job \(4 processes\)$/m);
    await expectNothingLeft(rankLines(text).map((x) => x.pid));
  }, 130_000);

  it('salloc: a rank failing ends the job within the fail-fast, named, with its exit code', async () => {
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell([RANK, '0', '1', '7'])], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(mpiexecStatus(r), r.stderr).toBe(7);
    expect(r.stderr).toMatch(/^mpiexec: rank 1 \(host n01, pid \d+\) exited with code 7; aborting the job \(4 processes\)$/m);
    expect(r.stderr).not.toContain('Slurm cancelled');
    await expectNothingLeft(rankLines(r.stdout).map((x) => x.pid));
  }, 130_000);

  /**
   * Starts a 4-rank job that sleeps, waits until every rank is sleeping,
   * runs `cancel(jobId)`, and returns the run's result and the ranks' lines.
   */
  /** Starts a 4-rank job whose ranks sleep after init, and waits until all four are sleeping. */
  async function startSleepingJob(name: string, start: (args: readonly string[]) => string[]): Promise<{ job: Promise<SlurmRunResult>; ranks: RankLine[]; jobId: string }> {
    // Each rank writes its line to a file in `ready` once it is past init and about to sleep.
    const ready = mkdtempSync(path.join(slurm.dir, 'tmp', `${name}-`));
    const job = slurm.run(start([RANK, '120000', '-1', '0', ready]), { deadlineMs: 120_000 });
    const readyRanks = (): RankLine[] => readdirSync(ready).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(path.join(ready, f), 'utf8')) as RankLine);
    const sleeping = await waitFor(() => readyRanks().length === 4, 90_000);
    expect(sleeping, `the 4 ranks did not start: ${(await slurm.leftovers(OURS, { timeoutMs: 0 })).join('; ')}`).toBe(true);
    const ranks = readyRanks().sort((a, b) => a.rank - b.rank);
    const jobId = (await slurm.run(['squeue', '-h', '-n', name, '-o', '%i'])).stdout.trim();
    expect(jobId, 'job not in squeue').toMatch(/^\d+$/);
    expect(ranks.every((x) => x.job === jobId)).toBe(true);
    return { job, ranks, jobId };
  }

  /**
   * Starts a sleeping 4-rank job, checks that its key shows nowhere, runs
   * `cancel(jobId)`, and returns the run's result, the ranks' lines and the output file's text.
   */
  async function cancelMidJob(name: string, start: (args: readonly string[]) => string[], cancel: (jobId: string) => string[], outFile?: string): Promise<{ r: SlurmRunResult; ranks: RankLine[]; text: string }> {
    const { job, ranks, jobId } = await startSleepingJob(name, start);
    // The key is in no command line on any node and not in scontrol's view of the step.
    const key = ranks[0]!.key;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const step = await slurm.run(['scontrol', 'show', 'step', `${jobId}.0`]);
    expect(step.stdout).toContain(`StepId=${jobId}.0`);
    expect(step.stdout).not.toContain(key);
    const cmdlines = ['ctl', ...slurm.nodes].flatMap((n) => slurm.nodeProcesses(n).map((p) => p.cmdline));
    expect(cmdlines.some((c) => c.includes('tsmpi-proxy.mjs --slurm'))).toBe(true);
    expect(cmdlines.filter((c) => c.includes(key))).toEqual([]);
    const c = await slurm.run(['scancel', ...cancel(jobId)]);
    expect(c.status, c.stderr).toBe(0);
    const r = await job;
    expect(r.timedOut, `the job did not end after scancel: ${r.stderr}`).toBe(false);
    let text = '';
    if (outFile !== undefined) text = readFileSync(outFile, 'utf8');
    return { r, ranks, text };
  }

  it('Ctrl-C to mpiexec inside salloc reaches the ranks on every node through their proxies', async () => {
    const { job, ranks } = await startSleepingJob('ctrl-c', (args) => ['salloc', '-J', 'ctrl-c', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(args)]);
    const head = slurm.nodeProcesses('ctl').filter((p) => p.cmdline.startsWith(`${NODE} ${MPIEXEC} `));
    expect(head, 'mpiexec not found on the login node').toHaveLength(1);
    process.kill(head[0]!.pid, 'SIGINT');
    const r = await job;
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.stderr).toMatch(/^mpiexec: received SIGINT; forwarding it to 4 processes$/m);
    expect(r.stderr).not.toContain('Slurm cancelled');
    expect(mpiexecStatus(r)).toBe(130);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 150_000);

  it('--timeout inside salloc: the roll-call covers the ranks srun started, then every rank ends', async () => {
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(['--timeout', '25', RANK, '600000'])], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(mpiexecStatus(r), r.stderr).toBe(124);
    expect(r.stderr).toMatch(/the job did not finish within --timeout 25 s; roll-call of 4 processes/);
    for (const [rank, host] of [[0, 'n01'], [1, 'n01'], [2, 'n02'], [3, 'n02']] as const) {
      expect(r.stderr).toMatch(new RegExp(`^mpiexec: {3}rank ${rank} \\(host ${host}, pid \\d+\\): not in MPI$`, 'm'));
    }
    await expectNothingLeft(rankLines(r.stdout).map((x) => x.pid));
  }, 130_000);

  it('scancel of the srun step mid-job: every rank ends, mpiexec says Slurm cancelled it and exits with srun\'s status', async () => {
    const { r, ranks } = await cancelMidJob('cancel-step', (args) => ['salloc', '-J', 'cancel-step', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(args)], (id) => [`${id}.0`]);
    expect(r.stderr).toMatch(/^mpiexec: Slurm cancelled step \d+\.0 \(scancel\); ending the job \(4 processes\)$/m);
    expect(mpiexecStatus(r)).toBe(137);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 150_000);

  it('scancel of the whole job mid-job: every rank ends and mpiexec says Slurm cancelled it', async () => {
    const { r, ranks } = await cancelMidJob('cancel-job', (args) => ['salloc', '-J', 'cancel-job', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(args)], (id) => [id]);
    expect(r.stderr).toMatch(/^mpiexec: Slurm cancelled step \d+\.0 \(scancel\); ending the job \(4 processes\)$/m);
    expect(mpiexecStatus(r)).toBe(143);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 150_000);

  it('scancel of a batch job mid-job: mpiexec says Slurm ended it, nothing is left on any node', async () => {
    const script = path.join(slurm.dir, 'tmp', 'cancel.sh');
    const out = path.join(slurm.dir, 'tmp', 'cancel.out');
    const start = (args: readonly string[]): string[] => {
      writeFileSync(script, `#!/bin/bash\n#SBATCH -J cancel-batch\n#SBATCH -N 2\n#SBATCH -n 4\ncd ${process.cwd()}\n${NODE} ${MPIEXEC} ${args.join(' ')}\n`, { mode: 0o755 });
      return ['sbatch', '--wait', '-o', out, script];
    };
    const { ranks } = await cancelMidJob('cancel-batch', start, (id) => [id], out);
    // mpiexec runs in the batch step, which Slurm signals itself; srun's step is cancelled with it.
    // sbatch --wait returns once the job is marked cancelled, which can be before the batch step wrote its last lines.
    const said = /^mpiexec: (received SIGTERM|Slurm cancelled)/m;
    await waitFor(() => said.test(readFileSync(out, 'utf8')), 30_000);
    const text = readFileSync(out, 'utf8');
    expect(text).toMatch(/^mpiexec: (received SIGTERM \(Slurm sends it when job \d+ is cancelled or reaches its time limit\)|Slurm cancelled step \d+\.0 \(scancel\))/m);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 150_000);

  /** fixtures/slurm-spawn.ts's JSON lines. */
  interface SpawnLine {
    readonly role: 'parent' | 'child';
    readonly rank: number;
    readonly size: number;
    readonly host: string;
    readonly name: string;
    readonly node: string | null;
    readonly step: string | null;
    readonly pid: number;
    readonly got?: number;
    readonly remoteSize?: number;
    readonly children?: { readonly from: number; readonly host: string; readonly node: string | null }[];
  }
  const spawnLines = (text: string): SpawnLine[] => text.split('\n').filter((l) => l.startsWith('{"role"')).map((l) => JSON.parse(l) as SpawnLine);

  it('spawn inside salloc: the parents on n01 (srun step 0), 2 children on n02\'s free slots through a new srun step, messages both ways', async () => {
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(['-n', '2', '--timeout', '100', SPAWN])], { deadlineMs: 120_000 });
    const report = `${r.stdout}\n${r.stderr}`;
    expect(r.timedOut, report).toBe(false);
    expect(mpiexecStatus(r), report).toBe(0);
    // Nothing but salloc's own lines (no srun noise from the spawn's step).
    expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('salloc: ')), report).toEqual([]);
    const all = spawnLines(r.stdout);
    const parents = all.filter((l) => l.role === 'parent').sort((a, b) => a.rank - b.rank);
    const children = all.filter((l) => l.role === 'child').sort((a, b) => a.rank - b.rank);
    // The universe is the allocation's 4 slots: the 2 parents fill n01's, the children take n02's.
    expect(parents.map((p) => [p.rank, p.host, p.node, p.step]), report).toEqual([[0, 'n01', 'n01', '0'], [1, 'n01', 'n01', '0']]);
    expect(children.map((c) => [c.rank, c.size, c.got, c.host, c.name, c.node]), report).toEqual([[0, 2, 0, 'n02', 'n02', 'n02'], [1, 2, 1, 'n02', 'n02', 'n02']]);
    // A step of their own (step 1 of the same job): srun started their proxy, not the parents' step.
    expect(children.map((c) => c.step), report).toEqual(['1', '1']);
    expect(parents[0]!.remoteSize).toBe(2);
    expect(parents[0]!.children!.map((c) => [c.from, c.host, c.node])).toEqual([[0, 'n02', 'n02'], [1, 'n02', 'n02']]);
    await expectNothingLeft(all.map((x) => x.pid));
  }, 130_000);

  it('spawn in a batch job: the parents forked on the batch node n01, children on the node info host names (n02) through srun; a child exiting 3 ends the job', async () => {
    const script = path.join(slurm.dir, 'tmp', 'spawn.sh');
    const out = path.join(slurm.dir, 'tmp', 'spawn.out');
    writeFileSync(script, `#!/bin/bash\n#SBATCH -N 2\n#SBATCH -n 4\ncd ${process.cwd()}\n${NODE} ${MPIEXEC} -n 2 --timeout 100 ${SPAWN} n02 fail\n`, { mode: 0o755 });
    const r = await slurm.run(['sbatch', '--wait', '-o', out, script], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    const text = readFileSync(out, 'utf8');
    expect(r.status, text).toBe(3);
    const all = spawnLines(text);
    // Child 1 prints before it exits; child 0's line may be cut off by the abort.
    const children = all.filter((l) => l.role === 'child');
    expect(children.map((c) => c.rank), text).toContain(1);
    // On the node info host named, through the batch job's first srun step (the parents were forked, no step).
    for (const c of children) expect([c.host, c.node, c.step], text).toEqual(['n02', 'n02', '0']);
    // The child's label is its process number (2 parents, so child 1 is process 3), with its node.
    expect(text).toMatch(/^mpiexec: rank 3 \(host n02, pid \d+\) exited with code 3; aborting the job \(4 processes\)$/m);
    await expectNothingLeft(all.map((x) => x.pid));
  }, 130_000);

  it('spawn inside salloc, --timeout: the roll-call lists the children srun started on n02, then every process on every node ends', async () => {
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c', mpiexecShell(['-n', '2', '--timeout', '30', SPAWN, '-', 'hang'])], { deadlineMs: 120_000 });
    const report = `${r.stdout}\n${r.stderr}`;
    expect(r.timedOut, report).toBe(false);
    expect(mpiexecStatus(r), report).toBe(124);
    expect(r.stderr).toMatch(/the job did not finish within --timeout 30 s; roll-call of 4 processes/);
    for (const [rank, host] of [[0, 'n01'], [1, 'n01'], [2, 'n02']] as const) {
      expect(r.stderr, report).toMatch(new RegExp(`^mpiexec: {3}rank ${rank} \\(host ${host}, pid \\d+\\): `, 'm'));
    }
    expect(r.stderr, report).toMatch(/^mpiexec: {3}rank 3 \(host n02, pid \d+\): not in MPI$/m);
    await expectNothingLeft(spawnLines(r.stdout).map((x) => x.pid));
  }, 130_000);

  it('--launcher slurm outside an allocation: srun allocates 2 nodes itself (-n 4 --ppn 2)', async () => {
    const r = await slurm.run(['bash', '-c', mpiexecShell(['--launcher', 'slurm', '-n', '4', '--ppn', '2', RANK])], { deadlineMs: 120_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(mpiexecStatus(r), r.stderr).toBe(0);
    const ranks = rankLines(r.stdout);
    expect(ranks.map((x) => x.rank)).toEqual([0, 1, 2, 3]);
    // Two ranks per node, each node one task of the same new job's step 0; the rank's host is its Slurm node.
    const byNode = new Map<string, number[]>();
    for (const x of ranks) byNode.set(x.node!, [...(byNode.get(x.node!) ?? []), x.rank]);
    expect([...byNode.keys()].sort()).toEqual([...slurm.nodes]);
    expect([...byNode.values()].map((v) => v.length)).toEqual([2, 2]);
    for (const x of ranks) {
      expect(x.host).toBe(x.node);
      expect(x.step).toBe('0');
    }
    expect(new Set(ranks.map((x) => x.job)).size).toBe(1);
    await expectNothingLeft(ranks.map((x) => x.pid));
  }, 130_000);
});
