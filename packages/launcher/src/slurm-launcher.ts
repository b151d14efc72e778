/**
 * The rank launcher for other hosts under Slurm (--launcher slurm): one
 * srun step starts every other node's proxy (proxy-launcher.ts) instead of
 * one ssh each (slurm-step.ts), as PRRTE's plm/slurm does beside the node
 * mpirun serves itself. Every proxy reads the same stdin, one launch spec
 * line per node, and takes its own.
 *
 * Slurm may end the step itself (scancel, a time limit, a node failure);
 * then the proxies vanish before srun says why. So a host lost while srun
 * runs waits (LOSS_WAIT_MS, longer once srun has said Slurm is ending the
 * step) for srun's account: when Slurm did it, the job hears `onCancelled`
 * with srun's status, else the host's loss.
 * Every Slurm decision before the start (which nodes, -n, the srun command
 * line) is in slurm-plan.ts and slurm-srun.ts.
 */
import os from 'node:os';
import type { Placement } from './process-map.ts';
import { PROXY_BIN, ProxyLauncher, type ProxyLauncherDeps } from './proxy-launcher.ts';
import type { HostLaunchLine, RankLauncherEvents, WireupAddress } from './rank-launcher.ts';
import { shellQuote } from './remote-command.ts';
import { HOST_FAILED_STATUS, type RemoteHost } from './remote-host.ts';
import { buildSrunCommand, srunEnvironment, type SlurmVersion, type SrunTarget } from './slurm-srun.ts';
import { SrunStep, type SrunExit } from './slurm-step.ts';

/** Inside an allocation: every proxy of the srun step must connect back within this time. */
const SRUN_CONNECT_BACK_MS = 60_000;
/**
 * How long a host lost while srun still runs waits for srun's own account (scancel, time limit,
 * node failure) before it is reported as a lost host. srun tells its step's end within a few
 * seconds (it waits up to 7 s for the step's tasks after Slurm ended it, seen on 22.05).
 */
const LOSS_WAIT_MS = 8000;
/**
 * When LOSS_WAIT_MS is over and srun has already said that Slurm is ending the step (its CANCELLED or
 * "Job step aborted" line came) but has not exited: how much longer its account is waited for. srun
 * waits up to 32 s for the step's tasks then; on CI's loaded machine it took more than LOSS_WAIT_MS.
 */
const SLURM_ENDING_WAIT_MS = 35_000;
/** After the last rank closed: how long srun gets to see its proxies exit before it is told to end the step. */
const SRUN_EXIT_WAIT_MS = 10_000;

/** What a --launcher slurm job needs to build its srun (main.ts fills it from slurm-plan.ts). */
export interface SlurmLaunch {
  /** The srun to run and extra words for it (--launcher-exec). */
  readonly srun: readonly string[];
  readonly version: SlurmVersion | null;
  /** 'allocation': inside one (its hosts are filled in from the placement); 'new': srun allocates. */
  readonly target: SrunTarget;
  /** True when the hosts are placeholders for nodes srun picks itself: proxies match by SLURM_NODEID. */
  readonly hasPlaceholderHosts: boolean;
  /** The Slurm job mpiexec runs in, for messages; null outside an allocation. */
  readonly jobId: string | null;
  /**
   * Inside an allocation: the hosts ranks are placed on with Slurm's slots (--hosts may narrow
   * them), the job's slots for UNIVERSE_SIZE and spawn; null outside one (srun picks the nodes).
   */
  readonly slots: readonly { readonly host: string; readonly slots: number }[] | null;
  /** Inside an allocation: every node of it (spawn may start processes on any of them); empty outside. */
  readonly allocationNodes: readonly string[];
}

export class SlurmLauncher extends ProxyLauncher {
  readonly #slurm: SlurmLaunch;
  /** The srun step, once started. */
  #srun: SrunStep | null = null;
  /** Hosts lost while srun runs, waiting for srun's account (LOSS_WAIT_MS). */
  #deferredLosses: { readonly host: RemoteHost; readonly why: string; readonly status: number }[] = [];
  #lossTimer: NodeJS.Timeout | null = null;

  constructor(placements: readonly Placement[], deps: ProxyLauncherDeps, events: RankLauncherEvents, slurm: SlurmLaunch) {
    super(placements, deps, events);
    this.#slurm = slurm;
  }

  start(wireup: WireupAddress): void {
    const argv = this.#srunCommand();
    if (argv instanceof Error) {
      for (const h of this.hosts) h.launcherEnded(`host ${h.host}: ${argv.message}`, HOST_FAILED_STATUS);
      return;
    }
    const step = new SrunStep(this.deps.log, (line) => this.deps.errSink.write(line));
    this.#srun = step;
    // srun may wait in the queue for nodes when it allocates them itself; inside an allocation it starts at once.
    const connectBackMs = this.#slurm.target.kind === 'new' ? null : SRUN_CONNECT_BACK_MS;
    for (const h of this.hosts) h.awaitLink(connectBackMs, 'srun', () => undefined);
    const lines = this.hosts.map((h) => {
      const spec = this.launchSpec(h, wireup.port, wireup.addresses);
      return JSON.stringify(this.#slurm.hasPlaceholderHosts ? { ...spec, slurmNodeId: h.index } : spec);
    });
    this.deps.log.debug({ argv }, 'starting the srun step');
    step.start(argv, srunEnvironment(this.deps.env), lines, (e) => this.#onSrunExit(e));
  }

  override abandonUnstarted(): readonly number[] {
    const ranks = super.abandonUnstarted();
    // A proxy srun has not started yet (srun may still wait in the queue for nodes) is not waited for.
    if (ranks.length > 0) this.#srun?.close();
    return ranks;
  }

  plan(): HostLaunchLine[] {
    const srun = this.#srunCommand();
    return this.hosts.map((h) => {
      const how = srun instanceof Error ? srun.message : `${srun.map(shellQuote).join(' ')}  (one launch spec line per node, with the job key, on its stdin)`;
      return { host: h.host, ranks: h.ranks, command: h.index === 0 ? `proxy, one task of the job's one srun step: ${how}` : 'proxy, a task of the same srun step' };
    });
  }

  /** The proxies exit once their ranks closed, and srun with them; only then is its status known. */
  override async settled(): Promise<void> {
    if (this.#srun === null) return;
    let t: NodeJS.Timeout | undefined;
    await Promise.race([this.#srun.exited, new Promise<void>((resolve) => { t = setTimeout(resolve, SRUN_EXIT_WAIT_MS); })]);
    clearTimeout(t);
  }

  override close(): void {
    super.close();
    if (this.#lossTimer !== null) clearTimeout(this.#lossTimer);
    this.#srun?.close();
  }

  /** Under Slurm without --hosts the host names were placeholders until each proxy said where it runs. */
  protected override linkedHostName(h: RemoteHost): string {
    return this.#slurm.hasPlaceholderHosts && h.linkedName !== '' ? h.linkedName : h.host;
  }

  protected override hostLost(h: RemoteHost, why: string, status: number): void {
    if (this.#srun === null || !this.#srun.isRunning) {
      this.reportLost(h, why, status);
      return;
    }
    // srun will say whether Slurm did it (scancel kills the proxies before srun reports).
    this.#deferredLosses.push({ host: h, why, status });
    this.#lossTimer ??= setTimeout(() => {
      if (this.#srun?.isSlurmEnding === true) this.#lossTimer = setTimeout(() => this.#flushLosses(), SLURM_ENDING_WAIT_MS);
      else this.#flushLosses();
    }, LOSS_WAIT_MS);
  }

  /** The srun command (argv[0] is srun), or an Error saying why there is none. */
  #srunCommand(): readonly string[] | Error {
    const sl = this.#slurm;
    const target: SrunTarget = sl.target.kind === 'allocation' ? { kind: 'allocation', hosts: this.hosts.map((h) => h.host) } : sl.target;
    const cmd = buildSrunCommand({
      srun: sl.srun[0]!, extraArgs: sl.srun.slice(1), target, version: sl.version,
      proxyArgv: [this.remoteNode(), PROXY_BIN, '--slurm'], secrets: [this.deps.jobKey],
    });
    return cmd instanceof Error ? cmd : cmd.argv;
  }

  /** srun ended: Slurm's account of it, then every host it leaves without a proxy. */
  #onSrunExit(e: SrunExit): void {
    const status = e.code ?? (e.signal !== null ? 128 + (os.constants.signals[e.signal] ?? 0) : HOST_FAILED_STATUS);
    const v = e.verdict;
    if (v.kind === 'slurm-cancelled' && !e.wasClosedByMpiexec) {
      this.events.onCancelled(v.message, status === 0 ? HOST_FAILED_STATUS : status);
    }
    const how = v.kind === 'task-failed'
      ? `its proxy ${v.exitCode !== null ? `exited with code ${v.exitCode}` : `ended (${v.signal ?? '?'})`} under srun`
      : `srun ended (status ${e.code ?? e.signal ?? '?'}) before its proxy connected back${e.lastLine === null ? '' : `: ${e.lastLine}`}`;
    for (const h of this.hosts) h.launcherEnded(`host ${h.host}: ${how}`, status === 0 ? HOST_FAILED_STATUS : status);
    this.#flushLosses();
  }

  #flushLosses(): void {
    if (this.#lossTimer !== null) clearTimeout(this.#lossTimer);
    this.#lossTimer = null;
    const losses = this.#deferredLosses;
    this.#deferredLosses = [];
    for (const l of losses) this.reportLost(l.host, l.why, l.status);
  }
}
