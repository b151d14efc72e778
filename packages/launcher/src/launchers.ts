/**
 * The one place that picks which backend starts which rank (rank-launcher.ts):
 * ranks on this machine are forked here (fork-launcher.ts), whatever
 * --launcher says, as PRRTE's mpirun serves its own node; every other host
 * gets a proxy, started by one srun step under --launcher slurm
 * (slurm-launcher.ts), else by ssh (ssh-launcher.ts). main.ts has already
 * refused other hosts under --launcher fork.
 */
import { isThisMachine, type InterfaceTable } from './iface.ts';
import { ForkLauncher } from './fork-launcher.ts';
import type { Placement } from './process-map.ts';
import type { ProxyLauncher, ProxyLauncherDeps } from './proxy-launcher.ts';
import type { RankLauncherEvents } from './rank-launcher.ts';
import { SlurmLauncher, type SlurmLaunch } from './slurm-launcher.ts';
import { SshLauncher } from './ssh-launcher.ts';

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
  if (others.length > 0) remote = choice.slurm !== undefined ? new SlurmLauncher(others, deps, events, choice.slurm) : new SshLauncher(others, deps, events);
  return { here: here.length > 0 ? new ForkLauncher(here, deps, events) : null, remote };
}
