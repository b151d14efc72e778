/**
 * What the two remote rank launchers share (docs/adr/0007): each other host
 * gets one proxy (proxy.ts), which forks that host's ranks and relays their
 * output, exits and signals over its link to mpiexec (remote-host.ts). The
 * subclasses differ only in how the proxies are started: one ssh each
 * (ssh-launcher.ts) or one srun step for all (slurm-launcher.ts).
 *
 * A host whose proxy fails to start or vanishes is reported once, as
 * `onLost` naming its ranks (status 255, or 127 when node is missing there).
 * "Stdin goes to rank 0" (API.md), wherever it runs: over the proxy's link
 * when rank 0 is on that host.
 */
import path from 'node:path';
import type { Logger } from '@tsmpi/core/pmi';
import { JOB_ENV } from '@tsmpi/core/pmi';
import type { LaunchOptions } from './options.ts';
import type { OutputSink } from './output-forwarder.ts';
import type { Placement } from './process-map.ts';
import { binFile } from './bin-files.ts';
import { PROXY_PROTOCOL_VERSION, type LaunchSpec } from './proxy-protocol.ts';
import type { RankCommand } from './rank-command.ts';
import type { HostLaunchLine, RankLauncher, RankLauncherEvents, WireupAddress } from './rank-launcher.ts';
import { RemoteHost, type RemoteHostEvents } from './remote-host.ts';
import { findSetting } from './settings-flags.ts';

/** The proxy's entry point: the same path on every host (a shared or identical installation). */
export const PROXY_BIN = binFile('tsmpi-proxy.mjs');

/** What a proxy launcher needs from its job. */
export interface ProxyLauncherDeps {
  readonly options: LaunchOptions;
  /** mpiexec's environment (its TSMPI_* go to every remote rank). */
  readonly env: NodeJS.ProcessEnv;
  readonly jobKey: string;
  /** mpiexec --secure: the proxies link over wss:// and their ranks' channels run TLS. */
  readonly secure: boolean;
  readonly command: RankCommand;
  readonly log: Logger;
  /** mpiexec's output; each linked host is a source of both (backpressure). */
  readonly outSink: OutputSink;
  readonly errSink: OutputSink;
  /** A spawned world's first process number (dynamic processes): a rank's TSMPI_RANK is its number minus this. Absent: 0. */
  readonly firstRank?: number;
  /** The index of this launcher's first host among the job's proxies (a spawned world's follow the job's). Absent: 0. */
  readonly firstHostIndex?: number;
}

/** The job's variables of a world that reach its ranks through the launch spec (LaunchSpec.world). */
const WORLD_ENV = [JOB_ENV.universe, JOB_ENV.worldFirst, JOB_ENV.parentSpawn, JOB_ENV.appnum, JOB_ENV.parentProgress] as const;

export abstract class ProxyLauncher implements RankLauncher {
  readonly placements: readonly Placement[];
  /** One per remote host, in placement order. */
  protected readonly hosts: RemoteHost[] = [];
  protected readonly deps: ProxyLauncherDeps;
  protected readonly events: RankLauncherEvents;
  readonly #byRank = new Map<number, RemoteHost>();

  constructor(placements: readonly Placement[], deps: ProxyLauncherDeps, events: RankLauncherEvents) {
    this.placements = placements;
    this.deps = deps;
    this.events = events;
    const byHost = new Map<string, number[]>();
    for (const p of placements) {
      const list = byHost.get(p.host) ?? [];
      list.push(p.rank);
      byHost.set(p.host, list);
    }
    const hostEvents = this.#hostEvents();
    for (const [host, ranks] of byHost) {
      const h = new RemoteHost(host, (deps.firstHostIndex ?? 0) + this.hosts.length, ranks, this.remoteNode(), deps.log, hostEvents);
      this.hosts.push(h);
      for (const r of ranks) this.#byRank.set(r, h);
    }
  }

  /** Its hosts, whose indexes the proxies' hellos name (the job routes a new link among all its launchers' hosts). */
  get remoteHosts(): readonly RemoteHost[] {
    return this.hosts;
  }

  abstract start(wireup: WireupAddress): void;

  abstract plan(): HostLaunchLine[];

  signal(rank: number, sig: NodeJS.Signals): void {
    // The proxy signals the rank's process group on its host (leftover children included).
    this.#byRank.get(rank)?.signal(rank, sig);
  }

  abandonUnstarted(): readonly number[] {
    const ranks: number[] = [];
    for (const h of this.hosts) {
      if (h.isLinked || h.isDone) continue;
      h.abandon();
      ranks.push(...h.ranks);
    }
    return ranks;
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    for (const h of this.hosts) h.close();
  }

  /** node on the remote hosts: --prefix DIR/bin/node, else this very binary's path. */
  protected remoteNode(): string {
    const prefix = this.deps.options.prefix;
    return prefix === null ? process.execPath : path.join(prefix, 'bin', 'node');
  }

  /** The working directory of the remote ranks: mpiexec's (or --wdir), as an absolute path. */
  protected remoteWdir(): string {
    return path.resolve(this.deps.options.wdir ?? process.cwd());
  }

  /** The launch spec of host `h`'s proxy: its ranks, the program, the environment. */
  protected launchSpec(h: RemoteHost, port: number, addresses: readonly string[]): LaunchSpec {
    const o = this.deps.options;
    const command = this.deps.command;
    const cmd = command.kind === 'node' ? { file: this.remoteNode(), args: command.args } : command;
    const placement = (r: number): Placement => this.placements.find((p) => p.rank === r)!;
    return {
      v: PROXY_PROTOCOL_VERSION, key: this.deps.jobKey, index: h.index, host: h.host, port, addresses, size: o.np,
      ranks: h.ranks.map((r) => ({ rank: r, localRank: placement(r).localRank, localSize: placement(r).localSize })),
      file: cmd.file, args: [...cmd.args], wdir: this.remoteWdir(), env: this.#forwardedEnv(), iface: o.iface,
      portRange: o.portRange === null ? null : `${o.portRange.lo}-${o.portRange.hi}`,
      ...(this.deps.secure ? { secure: true } : {}),
      ...this.#world(),
    };
  }

  /** The name the ranks of `h` run on, once it linked: the host's own (the Slurm launcher may know better). */
  protected linkedHostName(h: RemoteHost): string {
    return h.host;
  }

  /** Host `h` is gone (the Slurm launcher first waits for srun's account). */
  protected hostLost(h: RemoteHost, why: string, status: number): void {
    this.reportLost(h, why, status);
  }

  protected reportLost(h: RemoteHost, why: string, status: number): void {
    this.deps.outSink.removeSource(h);
    this.deps.errSink.removeSource(h);
    this.events.onLost(h.ranks, why, status);
  }

  /** The spec's world: the first process number and the job's world variables (--env pairs first: the universe travels as one). */
  #world(): { world?: NonNullable<LaunchSpec['world']> } {
    const env: Record<string, string> = {};
    for (const k of WORLD_ENV) {
      const v = this.deps.options.env.find(([name]) => name === k)?.[1] ?? this.deps.env[k];
      if (v !== undefined) env[k] = v;
    }
    const first = this.deps.firstRank ?? 0;
    return first === 0 && Object.keys(env).length === 0 ? {} : { world: { first, env } };
  }

  /** The environment every remote rank gets on top of its host's: TSMPI_* of mpiexec, settings flags, --env, -x. */
  #forwardedEnv(): Record<string, string> {
    const o = this.deps.options;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.deps.env)) if (k.startsWith('TSMPI_') && v !== undefined) env[k] = v;
    for (const [name, v] of o.settings) {
      const row = findSetting(name);
      if (row !== undefined) env[row.env] = String(v);
    }
    for (const [k, v] of o.env) env[k] = v;
    for (const k of Object.values(JOB_ENV)) delete env[k];
    return env;
  }

  #hostEvents(): RemoteHostEvents {
    const ev = this.events;
    return {
      onLinked: (h, _listenHost, localAddress) => {
        this.deps.outSink.addSource(h);
        this.deps.errSink.addSource(h);
        if (h.ranks.includes(0)) h.forwardStdin(process.stdin);
        ev.onLinked(h.ranks, this.linkedHostName(h), localAddress);
      },
      onStarted: (r, pid) => ev.onStarted(r, pid),
      onStartError: (r, message) => ev.onStartError(r, message),
      onOut: (r, fd, data) => ev.onOutput(r, fd, data),
      onExit: (r, code, signal) => ev.onExit(r, code, signal as NodeJS.Signals | null),
      onClosed: (r) => ev.onClosed(r),
      onLost: (h, why, status) => this.hostLost(h, why, status),
    };
  }
}
