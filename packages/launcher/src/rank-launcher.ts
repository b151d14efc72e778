/**
 * The contract between a job's supervisor (job.ts) and the backends that
 * start its ranks: fork here (fork-launcher.ts), one proxy per other host
 * through ssh (ssh-launcher.ts) or through one srun step (slurm-launcher.ts).
 * launchers.ts is the one place that picks which backend starts which rank.
 *
 * Callers: only the supervisor calls a launcher, on mpiexec's main thread.
 * A launcher reports back through RankLauncherEvents, synchronously from its
 * own I/O callbacks, and never throws from them: a rank that cannot be
 * started is `onStartError`, a host that is gone is `onLost` (once, naming
 * its ranks). Per rank the events come in this order:
 *   onStarted? -> onOutput* -> onExit -> onClosed        (or onStartError -> onClosed)
 * A launcher never decides the job's fate: which failure is blamed, what is
 * printed and the exit status are the supervisor's; a launcher only says
 * what happened to its processes, in words for the one failure line.
 * Output bytes (`onOutput`) are the caller's for the duration of the call.
 */
import type { Placement } from './process-map.ts';

/** One host's line of the --dry-run launch plan. */
export interface HostLaunchLine {
  readonly host: string;
  readonly ranks: readonly number[];
  /** The command that starts the host's ranks (fork) or its proxy (ssh, srun). */
  readonly command: string;
}

/** Where the job's wire-up service listens, once it does. */
export interface WireupAddress {
  /** The URL ranks on this machine dial. */
  readonly url: string;
  readonly port: number;
  /** The addresses proxies on other hosts try, in order. */
  readonly addresses: readonly string[];
  /** The address ranks started on this machine listen on (a proxy picks its ranks' own on its host). */
  readonly listenHost: string;
}

/** What a launcher tells the supervisor. */
export interface RankLauncherEvents {
  onStarted(rank: number, pid: number): void;
  /** The rank's program could not be started (status 127 for the job). */
  onStartError(rank: number, message: string): void;
  onOutput(rank: number, fd: 1 | 2, data: Buffer): void;
  /** The rank's pipe `fd` ended (its last partial line may be flushed). */
  onOutputEnd(rank: number, fd: 1 | 2): void;
  onExit(rank: number, code: number | null, signal: NodeJS.Signals | null): void;
  /** The rank's output is complete and its launcher holds nothing of it. */
  onClosed(rank: number): void;
  /** A host's proxy linked: `ranks` run on `hostName`; `localAddress` is mpiexec's end of the link. */
  onLinked(ranks: readonly number[], hostName: string, localAddress: string): void;
  /** A host failed to start or vanished; `why` is one line naming it (without "mpiexec: "). */
  onLost(ranks: readonly number[], why: string, status: number): void;
  /** The resource manager ended the job (scancel, time limit); `message` says so. */
  onCancelled(message: string, status: number): void;
}

/** One backend that starts, signals and watches some of a job's ranks. */
export interface RankLauncher {
  /** The ranks this launcher starts, in rank order. */
  readonly placements: readonly Placement[];
  /** Starts the ranks (or the proxies that start them). Called once, after the wire-up service listens. */
  start(wireup: WireupAddress): void;
  /** Sends `sig` to the rank's process group (on its host); a rank not running is left alone. */
  signal(rank: number, sig: NodeJS.Signals): void;
  /** After a failure: stops launches not yet linked. @returns the ranks that will never start */
  abandonUnstarted(): readonly number[];
  /** How this launcher starts its ranks, for --dry-run. */
  plan(): HostLaunchLine[];
  /** Resolves when the launcher's own helper processes ended after the ranks closed (srun), or at once. */
  settled(): Promise<void>;
  /** Ends everything the launcher holds on this side (ssh processes, links, srun); remote ranks then die with their proxies. */
  close(): void;
}
