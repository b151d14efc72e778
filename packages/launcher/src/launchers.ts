/**
 * The one place that picks which backend starts which rank (rank-launcher.ts):
 * ranks on this machine are forked here (fork-launcher.ts), whatever
 * --launcher says, as PRRTE's mpirun serves its own node; every other host
 * gets a proxy, started by one srun step under --launcher slurm
 * (slurm-launcher.ts), else by ssh (ssh-launcher.ts). main.ts has already
 * refused other hosts under --launcher fork.
 *
 * The two proxy backends (and what only they use: the proxy protocol, srun
 * steps, ssh retries) load only for a job that names another host
 * (loadProxyBackends, issue 38): a job on this machine alone never imports them.
 */
import { isThisMachine, type InterfaceTable } from './iface.ts';
import { ForkLauncher } from './fork-launcher.ts';
import type { Placement } from './process-map.ts';
import type { ProxyLauncher, ProxyLauncherDeps } from './proxy-launcher.ts';
import type { RankLauncherEvents } from './rank-launcher.ts';
import type { SlurmLaunch, SlurmLauncher } from './slurm-launcher.ts';
import type { SshLauncher } from './ssh-launcher.ts';

/** The proxy backends' classes, once loadProxyBackends has imported them. */
interface ProxyBackends {
  readonly Ssh: typeof SshLauncher;
  readonly Slurm: typeof SlurmLauncher;
}

let backends: ProxyBackends | null = null;

/**
 * Whether a job whose ranks and spare slots are on `hosts` needs a proxy backend:
 * some host is not this machine. (Spawned worlds start only on the job's slot hosts.)
 */
export function needsProxyBackends(hosts: Iterable<string>, hostname: string, interfaces: InterfaceTable): boolean {
  for (const h of hosts) if (!isThisMachine(h, hostname, interfaces)) return true;
  return false;
}

/** Imports the ssh and Slurm launchers; chooseLaunchers needs them before it places a rank on another host. */
export async function loadProxyBackends(): Promise<void> {
  if (backends !== null) return;
  const [ssh, slurm] = await Promise.all([import('./ssh-launcher.ts'), import('./slurm-launcher.ts')]);
  backends = { Ssh: ssh.SshLauncher, Slurm: slurm.SlurmLauncher };
}

/** A job's launchers: at most one per backend. */
export interface JobLaunchers {
  /** The ranks on this machine; null when there are none. */
  readonly here: ForkLauncher | null;
  /** The ranks on other hosts; null when there are none. */
  readonly remote: ProxyLauncher | null;
}

/** What the choice depends on besides the placement. */
export interface LauncherChoice {
  /** This machine's host name and interfaces (which hosts are local). */
  readonly hostname: string;
  readonly interfaces: InterfaceTable;
  /** --launcher slurm: how to build its srun; undefined otherwise. */
  readonly slurm: SlurmLaunch | undefined;
}

/** Splits the placement between the backends. */
export function chooseLaunchers(placements: readonly Placement[], choice: LauncherChoice, deps: ProxyLauncherDeps, events: RankLauncherEvents): JobLaunchers {
  const { hostname } = choice;
  const here = placements.filter((p) => isThisMachine(p.host, hostname, choice.interfaces));
  const others = placements.filter((p) => !isThisMachine(p.host, hostname, choice.interfaces));
  let remote: ProxyLauncher | null = null;
  if (others.length > 0) {
    // A caller bug, not a user error: main.ts loads the backends for any job that names another host.
    if (backends === null) throw new Error(`internal: ranks on ${others[0]!.host} but the proxy backends are not loaded (loadProxyBackends)`);
    remote = choice.slurm !== undefined ? new backends.Slurm(others, deps, events, choice.slurm) : new backends.Ssh(others, deps, events);
  }
  return { here: here.length > 0 ? new ForkLauncher(here, deps, events) : null, remote };
}
