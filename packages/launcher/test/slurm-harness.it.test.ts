/**
 * Integration test of the Slurm harness (scripts/slurm-cluster.sh through
 * test/slurm/slurm.ts) and of the pure Slurm logic against the real thing:
 * a two-node Slurm 22.05 (4 CPUs per node, each node its own network and UTS
 * namespace) runs salloc/srun/sbatch/scancel; the hostlist parser is checked
 * against `scontrol show hostnames`; the allocation reader against what srun
 * actually places; the srun command line built for the proxies against a
 * real srun inside a step and without an allocation; srun's stderr after a
 * scancel (step, job) and after --kill-on-bad-exit against SrunOutcome. Skipped, with a line saying why, where Slurm cannot
 * start (not root, no namespaces, slurm-wlm not installed).
 * testlist: { file: 'slurm-harness.it.test.ts', np: [2] } (one fork-launched tsmpi job of 2 ranks per node; the rest are Slurm tasks)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive, slurmNamespaces, slurmSupport, startSlurm, waitFor, type SlurmCluster } from './slurm/slurm.ts';
import { compressHostlist, expandHostlist } from '../src/slurm-hostlist.ts';
import { readSlurmAllocation } from '../src/slurm-allocation.ts';
import { buildSrunCommand, parseSlurmVersion } from '../src/slurm-srun.ts';
import { planSlurmJob } from '../src/slurm-plan.ts';
import { SrunOutcome, type SrunVerdict } from '../src/slurm-srun-output.ts';
import fc from 'fast-check';

const why = slurmSupport();
if (why !== null) console.warn(`slurm-harness.it.test.ts: skipped: ${why}`);

function lines(s: string): string[] {
  return s.split('\n').filter((l) => l.trim() !== '');
}

/** What Slurm thought when a command missed its deadline: the queue, the nodes and the daemons' last log lines. */
async function clusterState(slurm: SlurmCluster, r: { stdout: string; stderr: string }): Promise<string> {
  const queue = await slurm.run(['squeue', '-a', '-o', '%i %T %R %N'], { deadlineMs: 15_000 });
  const nodes = await slurm.run(['sinfo', '-N', '-o', '%N %T %E'], { deadlineMs: 15_000 });
  const logs = ['slurmctld', ...slurm.nodes.map((n) => `slurmd-${n}`)].map((name) => {
    let text = '';
    try { text = readFileSync(path.join(slurm.dir, 'log', `${name}.log`), 'utf8'); } catch { /* not written */ }
    return `--- ${name}.log (last lines)\n${text.split('\n').slice(-15).join('\n')}`;
  });
  return [`stdout: ${r.stdout}`, `stderr: ${r.stderr}`, `squeue: ${queue.stdout}${queue.stderr}`, `sinfo: ${nodes.stdout}${nodes.stderr}`, ...logs].join('\n');
}

describe.skipIf(why !== null)(`Slurm harness${why === null ? '' : ` (skipped: ${why})`}`, () => {
  let slurm: SlurmCluster;

  beforeAll(async () => {
    slurm = await startSlurm({ nodes: 2, cpusPerNode: 4 });
  }, 150_000);

  afterAll(async () => {
    await slurm?.stop();
  }, 150_000);

  it('salloc -n 4 srun hostname prints 4 lines, from the cluster\'s nodes', async () => {
    const r = await slurm.run(['salloc', '-n', '4', 'srun', 'hostname']);
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.status, r.stderr).toBe(0);
    const hosts = lines(r.stdout);
    expect(hosts).toHaveLength(4);
    for (const h of hosts) expect(slurm.nodes).toContain(h);
  });

  it('salloc -N 2 -n 4: the allocation reader agrees with Slurm\'s own expansion and placement', async () => {
    const envFile = path.join(slurm.dir, 'tmp', 'alloc.env');
    const placed = path.join(slurm.dir, 'tmp', 'alloc.hosts');
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'bash', '-c',
      `env -0 > ${envFile}; scontrol show hostnames "$SLURM_JOB_NODELIST" > ${envFile}.expanded; srun hostname > ${placed}`]);
    expect(r.status, r.stderr).toBe(0);
    const env: Record<string, string> = {};
    for (const kv of readFileSync(envFile, 'utf8').split('\0')) {
      const eq = kv.indexOf('=');
      if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    const res = readSlurmAllocation(env);
    if (res.kind !== 'allocation') throw new Error(`reader said ${JSON.stringify(res)} for ${JSON.stringify(env)}`);
    const a = res.allocation;
    expect(a.jobId).toBe(env.SLURM_JOB_ID);
    expect(a.stepId).toBeNull();
    // Hosts in Slurm's order, as scontrol expands the node list.
    expect(a.hosts.map((h) => h.host)).toEqual(lines(readFileSync(`${envFile}.expanded`, 'utf8')));
    expect(a.hosts.map((h) => h.host)).toEqual(slurm.nodes);
    // Slots are where srun really put the tasks; -n is the task count.
    const tally = new Map<string, number>();
    for (const h of lines(readFileSync(placed, 'utf8'))) tally.set(h, (tally.get(h) ?? 0) + 1);
    expect(Object.fromEntries(a.hosts.map((h) => [h.host, h.slots]))).toEqual(Object.fromEntries(tally));
    expect(a.defaultNp).toBe(4);
  });

  it('inside a step the reader still sees the whole job', async () => {
    const envFile = path.join(slurm.dir, 'tmp', 'step.env');
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'srun', '-N', '1', '-n', '1', 'bash', '-c', `env -0 > ${envFile}`]);
    expect(r.status, r.stderr).toBe(0);
    const env = Object.fromEntries(readFileSync(envFile, 'utf8').split('\0').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    const res = readSlurmAllocation(env);
    if (res.kind !== 'allocation') throw new Error(`reader said ${JSON.stringify(res)}`);
    expect(res.allocation.stepId).toBe('0');
    expect(res.allocation.hosts.map((h) => h.host)).toEqual(slurm.nodes);
    expect(res.allocation.hosts.reduce((s, h) => s + h.slots, 0)).toBe(4);
  });

  it('the hostlist parser expands like scontrol show hostnames', async () => {
    const exprs = [
      'n[1-3,5],gpu07', 'n[001-010]', 'n[8-10]', 'n[098-101]', 'rack-a.n[1-2]',
      'r[1-2]n[3-4]', 'a[1-2]b[3-4]c[5-6]', 'x[7]', 'n[1,1]',
      compressHostlist(['c01', 'c02', 'c03', 'c07', 'login', 'c9', 'c10', 'd-1.x', 'd-2.x']),
    ];
    for (const e of exprs) {
      const r = await slurm.run(['scontrol', 'show', 'hostnames', e]);
      expect(r.status, `${e}: ${r.stderr}`).toBe(0);
      expect(expandHostlist(e), e).toEqual(lines(r.stdout));
    }
    const bad = await slurm.run(['scontrol', 'show', 'hostnames', 'n[3-1]']);
    expect(bad.stderr).toContain('Invalid');
    expect(expandHostlist('n[3-1]')).toBeInstanceOf(Error);
    // Text after the last bracket: Slurm reads it since 23.02.5, older ones refuse it. We read it.
    const v = parseSlurmVersion((await slurm.run(['scontrol', '--version'])).stdout)!;
    const suffix = await slurm.run(['scontrol', 'show', 'hostnames', 'n[1-2]-ib']);
    if (v.major > 23 || (v.major === 23 && v.minor >= 2)) expect(lines(suffix.stdout)).toEqual(expandHostlist('n[1-2]-ib'));
    else expect(suffix.stdout + suffix.stderr).toContain('Invalid hostlist');
  });

  it('sbatch --wait runs a script on both nodes and returns its exit status', async () => {
    const script = path.join(slurm.dir, 'tmp', 'job.sh');
    const out = path.join(slurm.dir, 'tmp', 'job.out');
    writeFileSync(script, '#!/bin/bash\n#SBATCH -N 2\n#SBATCH -n 2\nsrun hostname\nexit 3\n', { mode: 0o755 });
    const r = await slurm.run(['sbatch', '--wait', '-o', out, script]);
    expect(r.timedOut).toBe(false);
    expect(r.status, r.stderr).toBe(3);
    expect(lines(readFileSync(out, 'utf8')).sort()).toEqual([...slurm.nodes].sort());
  });

  it('the srun command built for the proxies runs one task per node inside a step and delivers the key on stdin only', async () => {
    const version = parseSlurmVersion((await slurm.run(['srun', '--version'])).stdout);
    expect(version).not.toBeNull();
    const key = 'k3y-' + 'f'.repeat(60);
    const cmd = buildSrunCommand({
      srun: 'srun',
      // Listed in reverse: srun still numbers tasks in Slurm's node order, so a proxy must find its host in SLURMD_NODENAME.
      target: { kind: 'allocation', hosts: [...slurm.nodes].reverse() },
      version,
      // Stands in for the proxy: reads the key line, reports where it runs and what it saw after it.
      proxyArgv: ['bash', '-c', 'read -r k; if read -r more; then echo "$(hostname) $SLURMD_NODENAME key=$k more"; else echo "$(hostname) $SLURMD_NODENAME key=$k eof"; fi'],
      secrets: [key],
    });
    if (cmd instanceof Error) throw cmd;
    expect(cmd.argv.join(' ')).not.toContain(key);
    // Run it from inside a one-task step of the allocation, the hardest case:
    // without --overlap this srun would wait for that step to end.
    const quoted = cmd.argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    const r = await slurm.run(['salloc', '-N', '2', '-n', '4', 'srun', '-N', '1', '-n', '1', 'bash', '-c', quoted], { input: `${key}\n`, deadlineMs: 90_000 });
    expect(r.timedOut, `srun did not finish: ${r.stderr}`).toBe(false);
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stdout).sort()).toEqual(slurm.nodes.map((n) => `${n} ${n} key=${key} eof`).sort());
  });

  it('the srun command for a job without allocation gets its own nodes, one proxy each, key on stdin', async () => {
    const version = parseSlurmVersion((await slurm.run(['srun', '--version'])).stdout);
    const plan = planSlurmJob({ slurm: { kind: 'none' }, np: 4, hosts: null, ppn: 2, jobName: 'tsmpi-test' });
    if (plan instanceof Error) throw plan;
    const cmd = buildSrunCommand({
      srun: 'srun', target: plan.target, version,
      proxyArgv: ['bash', '-c', 'read -r k; echo "$(hostname) key=$k cpus=$SLURM_CPUS_PER_TASK job=$SLURM_JOB_NAME"'],
    });
    if (cmd instanceof Error) throw cmd;
    const r = await slurm.run(cmd.argv, { input: 'K\n' });
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stdout).sort()).toEqual(slurm.nodes.map((n) => `${n} key=K cpus=2 job=tsmpi-test`).sort());
  });

  it('the hostlist parser agrees with scontrol on random expressions', async () => {
    // A differential test against Slurm's own reader: 1-3 brackets of 1-3 ranges, zero padding, no text after the last bracket (22.05).
    const range = fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 3 }))
      .map(([lo, len, width]) => (len === 0 ? String(lo).padStart(width, '0') : `${String(lo).padStart(width, '0')}-${lo + len}`));
    const group = fc.array(range, { minLength: 1, maxLength: 3 }).map((rs) => `[${rs.join(',')}]`);
    const token = fc.tuple(fc.constantFrom('n', 'gpu-', 'r.a'), fc.array(fc.tuple(group, fc.constantFrom('', 'x', '-b')), { minLength: 1, maxLength: 3 }))
      .map(([p, gs]) => p + gs.map(([g, sep], i) => (i === gs.length - 1 ? g : g + sep)).join(''));
    const exprs = fc.sample(fc.array(token, { minLength: 1, maxLength: 3 }).map((ts) => ts.join(',')), { numRuns: 25, seed: 12 });
    for (const e of exprs) {
      const r = await slurm.run(['scontrol', 'show', 'hostnames', e]);
      expect(r.stderr, e).toBe('');
      expect(expandHostlist(e), e).toEqual(lines(r.stdout));
    }
  });

  it('a tsmpi job (fork launcher) runs as a Slurm task on each node, which sees its own host name', async () => {
    // node, tsx and the repo are usable inside Slurm's steps; --launcher fork, since inside an allocation mpiexec would use Slurm.
    const r = await slurm.run(['salloc', '-N', '2', '-n', '2', 'srun', '--ntasks-per-node=1',
      process.execPath, 'packages/launcher/bin/mpiexec.mjs', '--launcher', 'fork', '-n', '2', 'examples/hello.ts'], { deadlineMs: 110_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.status, r.stderr).toBe(0);
    const expected = slurm.nodes.flatMap((n) => [0, 1].map((rank) => `Hello from rank ${rank} of 2 on ${n}`));
    expect(lines(r.stdout).sort()).toEqual(expected.sort());
  }, 120_000);

  /** Pids of the `sleep 3000` tasks now running on the nodes. */
  const sleepers = (): number[] =>
    slurm.nodes.flatMap((n) => slurm.nodeProcesses(n).filter((p) => p.cmdline.endsWith('sleep 3000') && !p.cmdline.startsWith('srun')).map((p) => p.pid));

  /** Waits for the 2 sleep tasks, runs `cancel(jobId)`, and checks that they and the job are gone. Returns salloc's result. */
  async function cancelWhileSleeping(name: string, cancel: (jobId: string) => string[]): Promise<{ stdout: string; srunStderr: string; srunStatus: number }> {
    // srun's stderr alone, as mpiexec (running inside salloc) will see it.
    const errFile = path.join(slurm.dir, 'tmp', `${name}.srun.err`);
    const job = slurm.run(['salloc', '-J', name, '-N', '2', '-n', '2', 'bash', '-c', `srun --kill-on-bad-exit=1 sleep 3000 2> ${errFile}; echo "srun-status=$?"`], { deadlineMs: 100_000 });
    const started = await waitFor(() => sleepers().length === 2, 60_000);
    expect(started, `the step's 2 sleep tasks did not start; seen: ${JSON.stringify(slurm.nodes.map((n) => slurm.nodeProcesses(n)))}`).toBe(true);
    const pids = sleepers();
    const jobId = (await slurm.run(['squeue', '-h', '-n', name, '-o', '%i'])).stdout.trim();
    expect(jobId).toMatch(/^\d+$/);
    const c = await slurm.run(['scancel', ...cancel(jobId)]);
    expect(c.status, c.stderr).toBe(0);
    const r = await job;
    expect(r.timedOut, `salloc did not end after scancel: ${r.stderr}`).toBe(false);
    const gone = await waitFor(() => pids.every((p) => !isAlive(p)), 60_000);
    expect(gone, `tasks still alive after scancel: ${pids.filter(isAlive).join(', ')}`).toBe(true);
    const jobGone = await waitFor(async () => lines((await slurm.run(['squeue', '-h', '-j', jobId])).stdout).length === 0, 60_000);
    expect(jobGone, 'the job is still in squeue').toBe(true);
    // slurmstepd may take a moment to clean up after the job left squeue.
    const onlySlurmd = (): boolean => slurm.nodes.every((n) => slurm.nodeProcesses(n).every((p) => p.cmdline.startsWith('slurmd ')));
    const clean = await waitFor(onlySlurmd, 60_000);
    expect(clean, `left on the nodes: ${JSON.stringify(slurm.nodes.map((n) => slurm.nodeProcesses(n)))}`).toBe(true);
    const m = /srun-status=(\d+)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    return { stdout: r.stdout, srunStderr: readFileSync(errFile, 'utf8'), srunStatus: Number(m![1]) };
  }

  function verdictOf(stderr: string): SrunVerdict {
    const o = new SrunOutcome();
    for (const l of stderr.split('\n')) o.push(l);
    return o.verdict();
  }

  it('scancel of a running step ends its tasks on every node: srun lines say Slurm cancelled it', async () => {
    const r = await cancelWhileSleeping('cancel-step', (id) => [`${id}.0`]);
    expect(r.srunStatus).toBeGreaterThan(128);
    // srun may exit before slurmstepd's CANCELLED line and its own "Terminating" line reach it (the step is then
    // unnamed; slurm-srun-output.test.ts covers which line names it): the verdict is what must hold.
    expect(verdictOf(r.srunStderr), r.srunStderr).toEqual({ kind: 'slurm-cancelled', message: expect.stringMatching(/^Slurm cancelled (step \d+\.0|the step) \(scancel\)$/) });
  });

  it('scancel of the whole job ends its tasks: srun lines say Slurm cancelled the step', async () => {
    const r = await cancelWhileSleeping('cancel-job', (id) => [id]);
    expect(r.srunStatus).toBeGreaterThan(128);
    // As above: the step is unnamed when neither of the lines that name it reached srun before it exited.
    expect(verdictOf(r.srunStderr), r.srunStderr).toEqual({ kind: 'slurm-cancelled', message: expect.stringMatching(/^Slurm cancelled (step \d+\.0|the step) \(scancel\)$/) });
  });

  it('--kill-on-bad-exit: a task exiting 3 ends the others, and srun lines blame the task, not Slurm', async () => {
    const errFile = path.join(slurm.dir, 'tmp', 'bad-exit.srun.err');
    const r = await slurm.run(['salloc', '-N', '2', '-n', '2', 'bash', '-c',
      `srun --kill-on-bad-exit=1 bash -c "if [ \\$SLURM_PROCID = 1 ]; then exit 3; fi; sleep 3000" 2> ${errFile}; echo "srun-status=$?"`], { deadlineMs: 100_000 });
    expect(r.timedOut, r.timedOut ? await clusterState(slurm, r) : '').toBe(false);
    expect(r.stdout).toMatch(/srun-status=[1-9]/);
    const srunStderr = readFileSync(errFile, 'utf8');
    expect(verdictOf(srunStderr), srunStderr).toEqual({ kind: 'task-failed', host: slurm.nodes[1], task: 1, exitCode: 3, signal: null });
    for (const n of slurm.nodes) expect(slurm.nodeProcesses(n).filter((p) => p.cmdline.endsWith('sleep 3000')), n).toEqual([]);
  });

  it('stop leaves no daemon, namespace or file of the cluster', async () => {
    const daemons = slurm.daemonPids();
    expect(daemons.length).toBe(2 + slurm.nodes.length);
    for (const p of daemons) expect(isAlive(p)).toBe(true);
    await slurm.stop();
    for (const p of daemons) expect(isAlive(p), `daemon ${p} survived stop`).toBe(false);
    expect(slurmNamespaces(slurm.name)).toEqual([]);
    expect(() => readFileSync(path.join(slurm.dir, 'nodes'))).toThrow();
  });
});
