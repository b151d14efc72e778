/**
 * Starts the worlds of dynamic processes (docs/adr/0040-dynamic-processes.md) with the same
 * backends that started the job (launchers.ts): the children on this machine are forked here,
 * those on the job's other hosts get a proxy of their own through ssh, or under --launcher slurm
 * inside an allocation through a new srun step per spawn on the allocation's nodes (a new proxy
 * per host and spawn: the job's proxies start only the ranks of their launch spec). Also routes every proxy
 * link of the job, the initial ones and the spawned worlds', to the host its hello names (host
 * indexes are unique in the job: a spawned world's follow the ones given out before).
 */
import type { Logger } from '@tsmpi/core/pmi';
import { JOB_ENV } from '@tsmpi/core/pmi';
import type { SpawnedWorld } from './dynamic-service.ts';
import { chooseLaunchers, type LauncherChoice } from './launchers.ts';
import type { LaunchOptions } from './options.ts';
import type { OutputSink } from './output-forwarder.ts';
import { isThisMachine } from './iface.ts';
import type { Placement } from './process-map.ts';
import type { ProxyLauncher } from './proxy-launcher.ts';
import { rankCommand } from './rank-command.ts';
import type { RankLauncher, RankLauncherEvents, WireupAddress } from './rank-launcher.ts';
import { acceptProxyLink } from './remote-host.ts';
import { compressHostlist } from './slurm-hostlist.ts';
import type { PendingLink } from './wireup-server.ts';

/** What the spawned worlds' launchers need from their job. */
export interface SpawnLaunchersDeps {
  readonly options: LaunchOptions;
  /** mpiexec's environment. */
  readonly env: NodeJS.ProcessEnv;
  readonly jobKey: string;
  readonly secure: boolean;
  readonly log: Logger;
  readonly outSink: OutputSink;
  readonly errSink: OutputSink;
  readonly tsxUrl: string;
  readonly nodeFlags: readonly string[];
  readonly universe: number;
  /** Which hosts are this machine; Slurm: other hosts are started by srun steps, a new one per spawn. */
  readonly choice: LauncherChoice;
  /** The proxies of the initial world, null without other hosts. */
  readonly initialRemote: ProxyLauncher | null;
}

/** The spawned worlds' launchers of one job. */
export class SpawnLaunchers {
  readonly #deps: SpawnLaunchersDeps;
  readonly #launchers: RankLauncher[] = [];
  readonly #proxies: ProxyLauncher[] = [];
  #nextHostIndex: number;

  constructor(deps: SpawnLaunchersDeps) {
    this.#deps = deps;
    if (deps.initialRemote !== null) this.#proxies.push(deps.initialRemote);
    this.#nextHostIndex = deps.initialRemote?.remoteHosts.length ?? 0;
  }

  /** Why children cannot start on `host` in this job, or null when they can. */
  whyNotHost(host: string): string | null {
    const { choice, options } = this.#deps;
    if (isThisMachine(host, choice.hostname, choice.interfaces)) return null;
    const slurm = choice.slurm;
    if (slurm !== undefined) {
      // srun starts a step's tasks only on the allocation's nodes; outside one srun's own allocation ends with its step.
      if (slurm.jobId === null || slurm.target.kind !== 'allocation') return `host ${host} is not mpiexec's: --launcher slurm outside an allocation spawns on mpiexec's host only (run mpiexec inside salloc or sbatch)`;
      if (!slurm.allocationNodes.includes(host)) return `host ${host} is not a node of Slurm job ${slurm.jobId} (${compressHostlist(slurm.allocationNodes)}); srun starts tasks only on the job's nodes`;
      return null;
    }
    if (options.launcher === 'fork') return `host ${host} is not this machine: --launcher fork starts processes here only`;
    return null;
  }

  /**
   * Starts world `w`: `addRank` enters each process in the job's rank table (before anything can
   * report about it), then the launchers start. `here` is the wire-up address of the ranks on this
   * machine, `remote` the one proxies dial.
   * @returns an Error saying why the world cannot start (nothing was started then)
   */
  launch(w: SpawnedWorld, here: WireupAddress | null, remote: WireupAddress | null, events: RankLauncherEvents, addRank: (p: Placement, l: RankLauncher) => void): Error | null {
    const perHost = new Map<string, number>();
    for (const c of w.commands) for (const h of c.hosts) perHost.set(h, (perHost.get(h) ?? 0) + 1);
    const seen = new Map<string, number>();
    let next = w.first;
    const started: { readonly launcher: RankLauncher; readonly wireup: WireupAddress }[] = [];
    const { choice } = this.#deps;
    for (const [appnum, c] of w.commands.entries()) {
      const placements: Placement[] = c.hosts.map((host) => {
        const localRank = seen.get(host) ?? 0;
        seen.set(host, localRank + 1);
        return { rank: next++, host, localRank, localSize: perHost.get(host)! };
      });
      const isHere = placements.map((p) => isThisMachine(p.host, choice.hostname, choice.interfaces));
      if (isHere.includes(true) && here === null) return new Error('mpiexec starts no processes on its own host in this job');
      if (isHere.includes(false) && remote === null) return new Error('this job does not listen for other hosts');
      const env: NodeJS.ProcessEnv = {
        ...this.#deps.env,
        [JOB_ENV.worldFirst]: String(w.first), [JOB_ENV.universe]: String(this.#deps.universe), [JOB_ENV.parentSpawn]: String(w.spawnId), [JOB_ENV.appnum]: String(appnum),
        ...(w.parentProgress === undefined ? {} : { [JOB_ENV.parentProgress]: w.parentProgress }),
      };
      // Under Slurm the other hosts' proxies come from a new srun step of their own (slurm-launcher.ts), in the allocation.
      const launchers = chooseLaunchers(placements, choice, {
        options: { ...this.#deps.options, np: w.size, wdir: c.wdir }, env, jobKey: this.#deps.jobKey, secure: this.#deps.secure, firstRank: w.first,
        firstHostIndex: this.#nextHostIndex, command: rankCommand(c.program, c.args, this.#deps.tsxUrl, this.#deps.nodeFlags),
        log: this.#deps.log, outSink: this.#deps.outSink, errSink: this.#deps.errSink,
      }, events);
      if (launchers.here !== null) started.push({ launcher: launchers.here, wireup: here! });
      if (launchers.remote !== null) {
        started.push({ launcher: launchers.remote, wireup: remote! });
        this.#proxies.push(launchers.remote);
        this.#nextHostIndex += launchers.remote.remoteHosts.length;
      }
    }
    for (const { launcher } of started) {
      this.#launchers.push(launcher);
      for (const p of launcher.placements) addRank(p, launcher);
    }
    for (const { launcher, wireup } of started) launcher.start(wireup);
    return null;
  }

  /** The wire-up service's handler for a new connection on the proxy path: the host its hello names, in any world. */
  acceptLink(link: PendingLink): void {
    acceptProxyLink(link, this.#deps.jobKey, this.#proxies.flatMap((p) => p.remoteHosts), this.#deps.log);
  }

  /** After a failure: stops launches not yet linked. @returns the ranks that will never start */
  abandonUnstarted(): number[] {
    return this.#launchers.flatMap((l) => l.abandonUnstarted());
  }

  /** Once every rank closed: waits for the spawned worlds' srun steps to end with their proxies (as the initial one's). */
  async settled(): Promise<void> {
    await Promise.all(this.#launchers.map((l) => l.settled()));
  }

  /** Ends what the spawned worlds' launchers hold on this side (their proxies then kill their ranks). */
  close(): void {
    for (const l of this.#launchers) l.close();
  }
}
