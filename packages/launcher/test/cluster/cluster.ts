/**
 * Test helper: a cluster of "hosts" made of network namespaces on this one
 * machine (issue 11 section 6), for the multi-host integration tests. It drives
 * scripts/netns-cluster.sh, the one implementation people use by hand too (see
 * docs/ARCHITECTURE.md, "The multi-host test clusters"): each host thK has its own network, UTS (host name) and mount
 * (/etc/hosts) namespace, its own address in 198.18.0.0/15 and its own sshd; a
 * switch namespace bridges them. Nothing is made in the root namespace, so ssh
 * and the hosts' addresses are reachable only from inside a host: run mpiexec
 * on one with `cluster.run('th1', [...])`.
 *
 * Typical use:
 *   const support = clusterSupport();
 *   describe.skipIf(!support.ok)(withSkipReason('my tests', support), () => {
 *     let cluster: Cluster;
 *     beforeAll(async () => { cluster = await startCluster({ hosts: 3 }); });
 *     afterAll(() => cluster?.stop());
 *     ...cluster.run('th1', ['node', MPIEXEC, '--launcher', 'ssh', '--launcher-exec', cluster.launcherExec, ...])
 *   });
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const CLUSTER_SCRIPT = path.join(REPO_ROOT, 'scripts/netns-cluster.sh');

export type ClusterSupport = { readonly ok: true } | { readonly ok: false; readonly why: string };

export interface ClusterHost {
  /** Host name (th1, th2, ...): its name in the ssh config and /etc/hosts, and its UTS host name unless sameName. */
  readonly name: string;
  /** Its UTS host name (what os.hostname() says there): `name`, or "node" on every host of a sameName cluster. */
  readonly hostName: string;
  /** Its IPv4 address on the cluster's bridge. */
  readonly address: string;
  /** Its network namespace (for `ip netns exec`, by hand). */
  readonly namespace: string;
}

export interface ClusterRunOptions {
  /** Working directory on the host (default: the repository root; the file system is shared). */
  readonly cwd?: string;
  /** Environment (default: this process's, with NODE_OPTIONS emptied). */
  readonly env?: NodeJS.ProcessEnv;
  /** Written to the process's stdin, which is then closed (default: stdin is /dev/null). */
  readonly input?: string;
  /** Kill the process (its whole process group) after this long; the result says timedOut. Default 60 s. */
  readonly deadlineMs?: number;
  /** Called once the process printed `text` on stdout or stderr (e.g. to signal it or cut a link). */
  readonly onOutput?: { readonly text: string; readonly action: (child: ChildProcess) => void };
}

export interface ClusterRunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the deadline killed it. */
  readonly timedOut: boolean;
}

type HostRef = string | ClusterHost;

export interface Cluster {
  readonly id: string;
  readonly hosts: readonly ClusterHost[];
  /** The cluster's /24, e.g. "198.19.52.0/24" (what `--iface` may be given as a CIDR). */
  readonly subnet: string;
  /** ssh_config with every host (Host thK -> HostName address, key, known_hosts, BatchMode). */
  readonly sshConfigPath: string;
  /** The remote shell for mpiexec's --launcher-exec: `ssh -F <sshConfigPath>`. */
  readonly launcherExec: string;
  /** An executable that runs `ssh -F <sshConfigPath> "$@"`, for options that take a program without arguments. */
  readonly sshWrapperPath: string;
  /** Directory with the cluster's keys, configs, logs (removed by stop()). */
  readonly stateDir: string;
  /**
   * Starts argv on the host (nsenter into its namespaces; cwd and env kept), in its own process group.
   * It returns before the process has entered the host: wait for its output before pidsOn() looks for it.
   */
  spawn(host: HostRef, argv: readonly string[], opts?: ClusterRunOptions): ChildProcess;
  /** Runs argv on the host and resolves when it exits (killed at its deadline, never hangs). */
  run(host: HostRef, argv: readonly string[], opts?: ClusterRunOptions): Promise<ClusterRunResult>;
  /** Runs a shell command on `to` through ssh from `from` (default the first host), with the cluster's ssh config. */
  ssh(to: HostRef, command: string, opts?: ClusterRunOptions & { readonly from?: HostRef }): Promise<ClusterRunResult>;
  /** Takes the host's port on the bridge down (inside the switch namespace): the host is cut off. */
  linkDown(host: HostRef): void;
  /** Brings it back up. */
  linkUp(host: HostRef): void;
  /** Processes in the host's namespace other than the harness's holder and listening sshd. */
  pidsOn(host: HostRef): number[];
  /**
   * Waits (up to timeoutMs) until no host has a process left (see pidsOn) other than those `ignore`
   * accepts, and returns what is still there, one "thK pid command line" string each: [] is clean.
   */
  leftovers(timeoutMs?: number, ignore?: (line: string) => boolean): Promise<string[]>;
  /** Kills everything in the cluster's namespaces and removes them and the state directory. Idempotent. */
  stop(): void;
}

function which(cmd: string): boolean {
  if (cmd.startsWith('/')) return existsSync(cmd);
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

let supportCache: ClusterSupport | undefined;

/** Whether a cluster can be built here (root, network namespaces, sshd, ssh, nsenter); if not, why. */
export function clusterSupport(): ClusterSupport {
  if (supportCache !== undefined) return supportCache;
  supportCache = probe();
  return supportCache;
}

function probe(): ClusterSupport {
  if (process.platform !== 'linux') return { ok: false, why: 'network namespaces need Linux' };
  if (process.getuid?.() !== 0) return { ok: false, why: 'not root (network namespaces need root)' };
  const install = 'install with: apt-get install -y openssh-server openssh-client iproute2 util-linux';
  for (const tool of ['ip', 'nsenter', 'unshare', 'ssh', 'ssh-keygen', '/usr/sbin/sshd']) {
    if (!which(tool)) return { ok: false, why: `${tool} not found (${install})` };
  }
  const name = `tsmpi-probe${process.pid}`;
  const add = spawnSync('ip', ['netns', 'add', name], { encoding: 'utf8' });
  spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
  if (add.status !== 0) {
    return { ok: false, why: `cannot create a network namespace: ${(add.stderr || '').trim() || `ip exited ${add.status}`}` };
  }
  return { ok: true };
}

/** A describe() title that carries the reason when the block is skipped, and a console line saying so. */
export function withSkipReason(title: string, support: ClusterSupport): string {
  if (support.ok) return title;
  console.warn(`[cluster] skipping "${title}": ${support.why}`);
  return `${title} (skipped: ${support.why})`;
}

let idCounter = 0;
const live = new Set<string>();
let exitHook = false;

function script(args: readonly string[]): string {
  return execFileSync(CLUSTER_SCRIPT, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // `prune` takes down clusters whose owner is gone (a test run killed before afterAll).
    env: { ...process.env, TSMPI_CLUSTER_OWNER: String(process.pid) },
  });
}

interface ClusterJson {
  id: string;
  stateDir: string;
  sshConfig: string;
  sshWrapper: string;
  subnet: string;
  hosts: { name: string; hostName: string; address: string; namespace: string; holderPid: number; sshdPid: number }[];
}

/**
 * Builds a cluster of `hosts` hosts (th1..thN) with a fresh id; stop() it in afterAll. With sameName every
 * host's UTS host name is "node" (issue 11 section 3: hosts sharing one name), the ssh aliases staying th1..thN.
 */
export async function startCluster(opts: { readonly hosts: number; readonly id?: string; readonly sameName?: boolean }): Promise<Cluster> {
  const support = clusterSupport();
  if (!support.ok) throw new Error(`startCluster: cannot build a cluster here: ${support.why}`);
  // Short and unique per process: ids name namespaces and the state directory.
  const id = opts.id ?? `v${process.pid.toString(36)}${(idCounter++).toString(36)}`;
  try {
    script(['prune']);
  } catch {
    // a stale cluster that cannot be pruned does not stop a new one
  }
  let out: string;
  try {
    out = script(['up', '--id', id, '--hosts', String(opts.hosts), ...(opts.sameName === true ? ['--same-name'] : []), '--json']);
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`startCluster: ${CLUSTER_SCRIPT} up failed: ${err.stderr?.trim() || err.message}`);
  }
  live.add(id);
  if (!exitHook) {
    exitHook = true;
    // A test file that dies before afterAll still leaves nothing behind.
    process.once('exit', () => {
      for (const left of live) spawnSync(CLUSTER_SCRIPT, ['down', '--id', left], { stdio: 'ignore' });
    });
  }
  const info = JSON.parse(out) as ClusterJson;
  return makeCluster(info);
}

function makeCluster(info: ClusterJson): Cluster {
  const hosts: ClusterHost[] = info.hosts.map((h) => ({ name: h.name, hostName: h.hostName, address: h.address, namespace: h.namespace }));
  const byName = new Map(info.hosts.map((h) => [h.name, h]));
  const id = info.id;
  const hostOf = (ref: HostRef): string => {
    const name = typeof ref === 'string' ? ref : ref.name;
    if (!byName.has(name)) throw new Error(`cluster ${id}: no host '${name}' (hosts: ${[...byName.keys()].join(', ')})`);
    return name;
  };
  const launcherExec = `ssh -F ${info.sshConfig}`;

  const spawnOn = (host: HostRef, argv: readonly string[], opts: ClusterRunOptions = {}): ChildProcess => {
    if (argv.length === 0) throw new Error('cluster.spawn: argv is empty');
    // The script execs nsenter, which execs argv: the child's pid is argv's pid.
    return spawn(CLUSTER_SCRIPT, ['exec', '--id', id, hostOf(host), '--', ...argv], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: opts.env ?? { ...process.env, NODE_OPTIONS: '' },
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
  };

  const run = (host: HostRef, argv: readonly string[], opts: ClusterRunOptions = {}): Promise<ClusterRunResult> =>
    new Promise((resolve) => {
      const child = spawnOn(host, argv, opts);
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      let fired = false;
      const check = (): void => {
        if (opts.onOutput === undefined || fired) return;
        if (stdout.includes(opts.onOutput.text) || stderr.includes(opts.onOutput.text)) {
          fired = true;
          opts.onOutput.action(child);
        }
      };
      child.stdout!.setEncoding('utf8').on('data', (s: string) => { stdout += s; check(); });
      child.stderr!.setEncoding('utf8').on('data', (s: string) => { stderr += s; check(); });
      if (opts.input !== undefined) child.stdin!.end(opts.input);
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }, opts.deadlineMs ?? 60_000);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr, timedOut });
      });
    });

  const pidsOn = (host: HostRef): number[] =>
    script(['pids', '--id', id, hostOf(host)])
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map(Number);

  const describePid = (pid: number): string => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() || '(no command line)';
    } catch {
      return '(exited)';
    }
  };

  let stopped = false;
  return {
    id,
    hosts,
    subnet: info.subnet,
    sshConfigPath: info.sshConfig,
    launcherExec,
    sshWrapperPath: info.sshWrapper,
    stateDir: info.stateDir,
    spawn: spawnOn,
    run,
    ssh: (to, command, opts = {}) =>
      run(opts.from ?? hosts[0]!, ['ssh', '-F', info.sshConfig, hostOf(to), command], opts),
    linkDown: (host) => void script(['link-down', '--id', id, hostOf(host)]),
    linkUp: (host) => void script(['link-up', '--id', id, hostOf(host)]),
    pidsOn,
    leftovers: async (timeoutMs = 5_000, ignore = () => false) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const left = hosts.flatMap((h) => pidsOn(h).map((pid) => `${h.name} ${pid} ${describePid(pid)}`)).filter((l) => !ignore(l));
        if (left.length === 0 || Date.now() >= deadline) return left;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      script(['down', '--id', id]);
      live.delete(id);
    },
  };
}
