/**
 * Test helper: a real Slurm (scripts/slurm-cluster.sh) for integration tests.
 *
 *   const why = slurmSupport();            // null when Slurm can run here, else the reason
 *   const slurm = await startSlurm({ nodes: 2, cpusPerNode: 4 });
 *   const r = await slurm.run(['salloc', '-n', '4', 'srun', 'hostname']);
 *   expect(await slurm.leftovers(/mpiexec\.mjs|tsmpi-proxy|my-rank\.ts|slurmstepd/)).toEqual([]);
 *   await slurm.stop();                    // idempotent; also call it in afterAll
 *
 * Each cluster has its own name (from the test process's pid), so two test
 * files, or a cluster started by hand, never share daemons, namespaces or
 * files. Clients (salloc, srun, sbatch, scancel, squeue, scontrol) run in the
 * controller's namespace, the "login node", with SLURM_CONF set. Every run
 * has a hard deadline after which its whole process group is killed, so a
 * hang fails the test instead of hanging the suite.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const SLURM_SCRIPT = path.join(REPO_ROOT, 'scripts/slurm-cluster.sh');

export interface SlurmRunResult {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the deadline killed the command. */
  readonly timedOut: boolean;
}

export interface SlurmRunOptions {
  /** Default 90 s. */
  readonly deadlineMs?: number;
  /** Written to the command's stdin, which is then closed (default: no stdin). */
  readonly input?: string;
  /** Run on this node's namespace instead of the login namespace (e.g. to look at its processes). */
  readonly node?: string;
}

export interface SlurmProcess {
  readonly pid: number;
  readonly cmdline: string;
}

export interface SlurmCluster {
  /** The cluster's name (scripts/slurm-cluster.sh --name). */
  readonly name: string;
  /** Node names in order: n01, n02, ... */
  readonly nodes: readonly string[];
  readonly cpusPerNode: number;
  /** The cluster's temp dir; `${dir}/tmp` is free for the test's files. */
  readonly dir: string;
  /** Runs a Slurm client (or any command) in the login namespace with SLURM_CONF set. */
  run(argv: readonly string[], opts?: SlurmRunOptions): Promise<SlurmRunResult>;
  /**
   * Processes now running in a node's namespace (slurmd, slurmstepd, job tasks);
   * 'ctl' gives the login node's (munged, slurmctld, and clients such as mpiexec).
   */
  nodeProcesses(node: string): SlurmProcess[];
  /**
   * The test's processes still running, as "node: pid cmdline": those whose command line matches
   * `ours`, on the login node ('ctl') and every node (or only `opts.nodes`), and the `opts.pids`
   * still alive (as "pid N alive"). Waits until there are none or `opts.timeoutMs` (default
   * 30 s) passed, and returns what is left then (empty: nothing was left behind).
   */
  leftovers(ours: RegExp, opts?: { readonly timeoutMs?: number; readonly nodes?: readonly string[]; readonly pids?: readonly number[] }): Promise<string[]>;
  /** Pids of the daemons the cluster started (munged, slurmctld, slurmd per node). */
  daemonPids(): number[];
  /** Stops everything; idempotent. */
  stop(): Promise<void>;
}

/**
 * Whether a Slurm can be started here.
 * @returns null when it can, else one line saying why not (for the skip message).
 */
export function slurmSupport(): string | null {
  if (process.platform !== 'linux') return `Slurm tests need Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'Slurm tests need root (network and UTS namespaces, slurmd)';
  const r = spawnSync('bash', [SLURM_SCRIPT, 'support'], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return `Slurm cannot start here: ${(r.stdout + r.stderr).trim() || `support check exited ${r.status}`}`;
  return null;
}

function runScript(args: readonly string[], deadlineMs: number): Promise<SlurmRunResult> {
  return runCommand('bash', [SLURM_SCRIPT, ...args], { deadlineMs });
}

function runCommand(cmd: string, args: readonly string[], opts: SlurmRunOptions): Promise<SlurmRunResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, detached: true, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (s: string) => { stdout += s; });
    child.stderr!.setEncoding('utf8').on('data', (s: string) => { stderr += s; });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    let isSettled = false;
    const settle = (status: number | null, signal: NodeJS.Signals | null): void => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
      // salloc runs its command in a process group of its own, which may keep the pipes open: answer
      // anyway, so the test reports the deadline with what was printed instead of timing out itself.
      setTimeout(() => settle(child.exitCode, child.signalCode), 5_000).unref();
    }, opts.deadlineMs ?? 90_000);
    child.on('close', (status, signal) => settle(status, signal));
  });
}

function pidsIn(netns: string): number[] {
  const r = spawnSync('ip', ['netns', 'pids', netns], { encoding: 'utf8' });
  if (r.status !== 0) return [];
  return r.stdout.split(/\s+/).filter((s) => s !== '').map(Number);
}

function cmdlineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return null;
  }
}

/**
 * Starts a Slurm with `nodes` nodes of `cpusPerNode` CPUs each (CPUs may
 * exceed the machine's) and waits until every node is idle.
 * @throws Error with the script's output when it cannot start (after cleaning up)
 */
export async function startSlurm(opts: { readonly nodes: number; readonly cpusPerNode: number; readonly name?: string }): Promise<SlurmCluster> {
  await removeStaleClusters();
  const name = opts.name ?? `t${process.pid}`;
  const dir = `/tmp/tsmpi-slurm-${name}`;
  const up = await runScript(['up', '--name', name, '--nodes', String(opts.nodes), '--cpus', String(opts.cpusPerNode)], 120_000);
  if (up.status !== 0) {
    await runScript(['down', '--name', name], 60_000);
    throw new Error(`slurm-cluster.sh up failed (status ${up.status}${up.timedOut ? ', timed out' : ''}):\n${up.stdout}${up.stderr}`);
  }
  const nodes = readFileSync(path.join(dir, 'nodes'), 'utf8').split('\n').filter((s) => s !== '');
  let stopped = false;
  const nodeProcesses = (node: string): SlurmProcess[] => {
    const out: SlurmProcess[] = [];
    for (const pid of pidsIn(`tsmpi-slurm-${name}-${node}`)) {
      const cmdline = cmdlineOf(pid);
      if (cmdline !== null) out.push({ pid, cmdline });
    }
    return out;
  };
  return {
    name,
    nodes,
    cpusPerNode: opts.cpusPerNode,
    dir,
    run(argv, runOpts = {}) {
      const where = runOpts.node === undefined ? [] : ['--node', runOpts.node];
      return runCommand('bash', [SLURM_SCRIPT, 'exec', '--name', name, ...where, '--', ...argv], runOpts);
    },
    nodeProcesses,
    async leftovers(ours, leftOpts = {}) {
      const where = leftOpts.nodes ?? ['ctl', ...nodes];
      const look = (): string[] => [
        ...where.flatMap((n) => nodeProcesses(n).filter((p) => ours.test(p.cmdline)).map((p) => `${n}: ${p.pid} ${p.cmdline}`)),
        ...(leftOpts.pids ?? []).filter(isAlive).map((p) => `pid ${p} alive`),
      ];
      let left: string[] = [];
      await waitFor(() => (left = look()).length === 0, leftOpts.timeoutMs ?? 30_000);
      return left;
    },
    daemonPids() {
      const run = path.join(dir, 'run');
      if (!existsSync(run)) return [];
      return readdirSync(run).filter((f) => f.endsWith('.pid')).map((f) => Number(readFileSync(path.join(run, f), 'utf8').trim()));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const r = await runScript(['down', '--name', name], 120_000);
      if (r.status !== 0) throw new Error(`slurm-cluster.sh down failed (status ${r.status}):\n${r.stdout}${r.stderr}`);
    },
  };
}

/**
 * Takes down clusters that an earlier test process started and could not stop
 * (it was killed): those named t<pid> whose pid is gone. Clusters of live
 * processes, and clusters started by hand under other names, are left alone.
 */
async function removeStaleClusters(): Promise<void> {
  const names = new Set<string>();
  for (const d of readdirSync('/tmp')) {
    const m = /^tsmpi-slurm-(t\d+)$/.exec(d);
    if (m !== null) names.add(m[1]!);
  }
  for (const ns of spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n')) {
    const m = /^tsmpi-slurm-(t\d+)-/.exec(ns);
    if (m !== null) names.add(m[1]!);
  }
  for (const n of names) {
    if (!isAlive(Number(n.slice(1)))) await runScript(['down', '--name', n], 120_000);
  }
}

/** Namespaces of the cluster `name` that exist now (empty after stop). */
export function slurmNamespaces(name: string): string[] {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return r.stdout.split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`tsmpi-slurm-${name}-`));
}

/** Whether a process is alive (signal 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `check` every 200 ms until it returns true or `deadlineMs` passes; returns its last answer. */
export async function waitFor(check: () => boolean | Promise<boolean>, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}
