// Over 600 lines: the supervisor is one state machine over the rank table; its parts (rank-state, failure-lines, spawn-launchers, report) are files beside it.
/**
 * One mpiexec job, supervised: starts the ranks through their launchers
 * (launchers.ts picks them: fork here, a proxy per other host through ssh or
 * one srun step; rank-launcher.ts is their contract), runs the wire-up
 * service, forwards output, and turns any failure into a job-wide stop with
 * one message and a meaningful exit status. The rule that matters most:
 * never a hang. Which backend started a rank changes nothing below.
 *
 * Per rank:   spawned -> (joined -> initialized -> finalized) -> exited -> closed
 * A failure is the first of:
 *   - exit with a non-zero code, or by a signal (status: code, 128+signal);
 *   - exit 0 after joining the wire-up service but before finalize (status 1);
 *   - exit 0 without ever joining while some rank joined (status 1; noticed
 *     at whichever of the two events comes second);
 *   - MPI.abort(code) through the wire-up service (status: code);
 *   - the program cannot be started (status 127);
 *   - a host lost (its launcher's status: 255, or 127 when node is missing);
 *     Slurm ending the job (srun's status);
 *   - --timeout (roll-call first; status 124) or SIGINT/SIGTERM (130/143).
 * A failing exit is blamed only after a short settling time, because ranks
 * that lose their connection to a dead rank fail too, and their exits can be
 * seen first: the blame goes to the first failing rank that did not report a
 * lost peer (wire-up peerLost), so the line names the cause.
 * After the first failure, every process group gets SIGTERM and, one second
 * later, SIGKILL; what they do meanwhile is not reported. The failure line
 * is written once every rank ended, so the failed rank's stack comes before
 * it; it is mpiexec's last line, after one line naming the ranks that
 * stopped because of it (ranks that lose a peer exit quietly: core's
 * api/lifecycle.ts), and names the error the rank printed (failure-cause.ts).
 *
 * A job that spans hosts listens on every address (or the --iface address); its ranks listen
 * on an address of their own host: --iface resolved there, else the local
 * address of the proxy's link; for the ranks here, this machine's only
 * non-loopback address, or, when it has several, mpiexec's end of the first
 * proxy link (they then start once the first proxy linked).
 *
 * Dynamic processes (docs/adr/0040-dynamic-processes.md): a spawn's world joins the
 * rank table (dynamic-service.ts decides what to start; #startWorld enters it, with the
 * launchers spawn-launchers.ts makes: fork here, proxies elsewhere), so
 * everything above holds for spawned processes too; a rank's number is its process number.
 * Its parts are files beside it: rank-state.ts (a rank and how its exit counts),
 * failure-lines.ts (the last lines of a failed job), spawn-launchers.ts, report.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { Logger } from '@tsmpi/core/pmi';
import { claimSameHostDirectory, removeSameHostDirectory, sweepStaleSameHostDirectories } from '@tsmpi/transport-tcp/host';
import { CLOSE_CODES, JOB_ENV, wireupUrl } from '@tsmpi/core/pmi';
import { DynamicService, expandSlots, universeSize, type NameService, type SpawnedWorld } from './dynamic-service.ts';
import { startFailureCause } from './failure-cause.ts';
import { failureLines, type BlamedRank } from './failure-lines.ts';
import { externalAddresses, isThisMachine, wireupBinding, type InterfaceTable } from './iface.ts';
import { chooseLaunchers, type JobLaunchers } from './launchers.ts';
import { effectiveSetting, findSetting } from './settings-flags.ts';
import type { LaunchOptions } from './options.ts';
import { OutputSink } from './output-forwarder.ts';
import { RepeatedStderr } from './repeated-stderr.ts';
import type { Placement } from './process-map.ts';
import { rankCommand, resolveProgram } from './rank-command.ts';
import type { HostLaunchLine, RankLauncherEvents, WireupAddress } from './rank-launcher.ts';
import { classifyExit, closeFile, newRankState, openOutputFilesOf, signalNumber, type RankState } from './rank-state.ts';
import { rankReports, writeJobReport, type JobReport } from './report.ts';
import { rollCallLines, rollCallRank } from './roll-call.ts';
import { SpawnLaunchers } from './spawn-launchers.ts';
import { DeadlockHint } from './deadlock-hint.ts';
import type { Dashboard } from './dashboard.ts';
import type { SlurmLaunch } from './slurm-launcher.ts';
import { addRankTrace, withTraceSetting, writeTraceFile } from './trace-file.ts';
import { WireupServer } from './wireup-server.ts';

export type { HostLaunchLine } from './rank-launcher.ts';
export type { SlurmLaunch } from './slurm-launcher.ts';

/** SIGTERM first; SIGKILL this long after, so that everything is gone within 2 s of a failure. */
const KILL_AFTER_MS = 1000;
/** After Ctrl-C or SIGTERM to mpiexec: how long ranks get to handle the forwarded signal. */
const SIGNAL_GRACE_MS = 2000;
/** How much of each rank's stderr is kept to find the cause of its failure (failure-cause.ts). */
const STDERR_TAIL_CHARS = 16 * 1024;
/** How long the --timeout roll-call waits for answers. */
const ROLL_CALL_WAIT_MS = 1000;
/** How long a failing exit waits for other exits and peer-loss reports before one rank is blamed. */
const SETTLE_MS = 200;
/**
 * How long, at most, exits that all followed the loss of a process still running wait for that
 * process's own failure: a rank whose worker thread died (it ends a moment later, with the error
 * that names the cause) is the one to blame, not the peers that lost their connection to it.
 */
const LOST_PEER_WAIT_MS = 3000;
/** The status timeout(1) uses. */
export const TIMEOUT_STATUS = 124;
/** "Command not found", as shells report it. */
const NOT_STARTED_STATUS = 127;

/** What a job needs from its surroundings. */
export interface JobDeps {
  readonly log: Logger;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  /** tsx's loader URL (rank-command.ts). */
  readonly tsxUrl: string;
  /** Extra Node flags for Node programs (rank-command.ts nodeFlagsFor). */
  readonly nodeFlags: readonly string[];
  /** The TypeScript program compiled for plain node (ts-compile.ts); the job's first world runs it. */
  readonly compiledProgram?: string;
  /** This machine's host name and interfaces (which hosts are local; --iface). Default: os. */
  readonly hostname?: string;
  readonly interfaces?: InterfaceTable;
  /** --launcher slurm: start the other hosts' proxies with one srun step (slurm-srun.ts). */
  readonly slurm?: SlurmLaunch;
  /** --nameserver: the proven link to tsmpi-nameserver; the job's name requests go there (dynamic-service.ts). */
  readonly names?: NameService;
}

interface Failure {
  readonly rank: number | null;
  readonly reason: string;
  readonly status: number;
}

/** Runs one job; see the file comment. */
export class Job {
  readonly #o: LaunchOptions;
  readonly #deps: JobDeps;
  readonly #ranks: RankState[];
  readonly #outSink: OutputSink;
  readonly #errSink: OutputSink;
  /** The ranks' stderr goes out through it: a failed rank's copy of an error already shown is dropped (repeated-stderr.ts). */
  readonly #repeatedErr: RepeatedStderr;
  readonly #server: WireupServer;
  readonly #jobKey = randomBytes(32).toString('hex');
  /** mpiexec --secure (or TSMPI_SECURE=on): the wire-up service, the proxies' links and the ranks' channels run TLS keyed by the job. */
  readonly #secure: boolean;
  readonly #launchers: JobLaunchers;
  #t0 = 0;
  #failure: Failure | null = null;
  /** Failing exits seen while settling, in the order seen (SETTLE_MS). */
  #settling: RankState[] = [];
  #settleTimer: NodeJS.Timeout | null = null;
  /** When the first of #settling exited (LOST_PEER_WAIT_MS counts from it). */
  #settlingSince = 0;
  #signalCount = 0;
  #timers: NodeJS.Timeout[] = [];
  /** The rank blamed for the failure and its line, written once every rank ended (#announceFailure). */
  #blamed: BlamedRank | null = null;
  #timeoutTask: Promise<void> = Promise.resolve();
  #deadlockHint: DeadlockHint | null = null;
  /** --dashboard: the live page's server and sampler (dashboard.ts); null without the flag. */
  #dashboard: Dashboard | null = null;
  #resolveDone: (() => void) | null = null;
  #isDone = false;
  readonly #traces = new Map<number, Uint8Array[]>(); // --trace: each rank's, one per thread, as they arrived (trace-file.ts)
  /** Ranks here wait for the first proxy link when their address comes from it. */
  #localStart: ((listenHost: string) => void) | null = null;
  /**
   * Dynamic processes: the universe (or why TSMPI_UNIVERSE is wrong), the service, the launchers of
   * spawned worlds, the wire-up addresses they use (ranks here, proxies), whether the job's slots
   * include other hosts than the initial ranks' (then the job listens for them from the start).
   */
  readonly #universe: number | Error;
  readonly #dynamic: DynamicService | null;
  /** The wire-up service's address as port strings name it (docs/adr/0043), once it listens. */
  #portAddress: string | null = null;
  readonly #spawnLaunchers: SpawnLaunchers | null;
  #wireupHere: WireupAddress | null = null;
  #wireupRemote: WireupAddress | null = null;
  readonly #slotsElsewhere: boolean;

  /**
   * @param options - the parsed command line (program already resolved to a path)
   * @param placements - where each rank runs (process-map.ts)
   */
  constructor(options: LaunchOptions, placements: readonly Placement[], deps: JobDeps) {
    options = withTraceSetting(options, deps.env);
    // Inside a Slurm allocation the job's slots are Slurm's (the hosts ranks are placed on), as Open MPI's universe is.
    const slotList = deps.slurm?.slots ?? options.hosts;
    this.#universe = universeSize(options.np, slotList, options.ppn, deps.env);
    // Every rank sizes its device for the universe (its later processes' numbers): it travels as an --env pair.
    if (typeof this.#universe === 'number' && this.#universe > options.np) options = { ...options, env: [...options.env, [JOB_ENV.universe, String(this.#universe)]] };
    this.#o = options;
    this.#deps = deps;
    this.#outSink = new OutputSink(deps.stdout);
    this.#errSink = new OutputSink(deps.stderr);
    this.#repeatedErr = new RepeatedStderr((b) => this.#errSink.write(b), (r) => this.#ranks[r]?.hasExited ?? true);
    this.#ranks = placements.map((p) => this.#newRank(p));
    const secureRow = findSetting('secure');
    this.#secure = secureRow !== undefined && effectiveSetting(secureRow, options.settings, deps.env) === 'on';
    const command = rankCommand(options.program, options.args, deps.tsxUrl, deps.nodeFlags, deps.compiledProgram);
    const choice = { hostname: deps.hostname ?? os.hostname(), interfaces: deps.interfaces ?? os.networkInterfaces(), slurm: deps.slurm };
    this.#launchers = chooseLaunchers(
      placements, choice,
      { options, env: deps.env, jobKey: this.#jobKey, secure: this.#secure, command, log: deps.log, outSink: this.#outSink, errSink: this.#errSink },
      this.#launcherEvents(),
    );
    for (const l of [this.#launchers.here, this.#launchers.remote]) {
      if (l !== null) for (const p of l.placements) this.#ranks[p.rank]!.launcher = l;
    }
    const remote = this.#launchers.remote;
    this.#server = new WireupServer(options.np, this.#jobKey, deps.log, {
      onJoined: (rank) => this.#onJoined(rank),
      onInitialized: (rank) => {
        this.#ranks[rank]!.isInitialized = true;
      },
      onFinalized: (rank, report) => {
        const s = this.#ranks[rank]!;
        s.isFinalized = true;
        s.report = report;
        // A job coupled with this one at a port (docs/adr/0043) hears that this process ended normally.
        this.#dynamic?.processEnded(rank, null);
      },
      onAbort: (rank, code, message) => this.#onAbort(rank, code, message),
      onPeerLost: (rank, lost) => {
        const s = this.#ranks[rank]!;
        if (s.lostPeer === null) s.lostPeer = lost;
      },
      onTrace: (rank, data) => addRankTrace(this.#traces, rank, data),
      onDynamic: (rank, op, args) => this.#dynamic === null ? Promise.resolve({ error: ['ERR_SPAWN', 'no dynamic processes in this job'] as const }) : this.#dynamic.handle(rank, op, args),
      onPortLink: (link) => {
        if (this.#dynamic === null) link.refuse(CLOSE_CODES.protocol, 'port link: no dynamic processes in this job');
        else this.#dynamic.acceptLink(link);
      },
      onProxyLink: (link) => {
        if (this.#spawnLaunchers !== null) this.#spawnLaunchers.acceptLink(link);
        else link.refuse(CLOSE_CODES.protocol, 'proxy link: no host waits in this job');
      },
      // Under --secure another secure job's mpiexec dials a port with TLS keyed by the port (docs/adr/0043).
    }, { secure: this.#secure, portPsk: (identity) => this.#dynamic?.portPsk(identity) ?? null });
    const slotHosts = expandSlots(slotList, options.ppn, placements[0]?.host ?? choice.hostname);
    const universe = this.#universe;
    this.#spawnLaunchers = typeof universe === 'number'
      ? new SpawnLaunchers({
        options, env: deps.env, jobKey: this.#jobKey, secure: this.#secure, log: deps.log, outSink: this.#outSink, errSink: this.#errSink,
        tsxUrl: deps.tsxUrl, nodeFlags: deps.nodeFlags, universe, choice, initialRemote: remote,
      })
      : null;
    const spawns = this.#spawnLaunchers;
    this.#dynamic = typeof universe === 'number' && spawns !== null
      ? new DynamicService({
        universe, initial: options.np, slotHosts, wdir: options.wdir,
        whyNotHost: (h) => spawns.whyNotHost(h), resolveProgram, startWorld: (w) => this.#startWorld(w),
        // Another job dials the address the wire-up service listens on (docs/adr/0043); under --secure over TLS keyed by the port.
        portAddress: () => this.#portAddress,
        secure: this.#secure,
        store: { get: (k) => this.#server.committed(k), put: (k, v) => this.#server.commit(k, v) },
        tellPeerFailed: (to, failed, why) => this.#server.tellPeerFailed(to, failed, why),
        log: deps.log,
        ...(deps.names !== undefined ? { names: deps.names } : {}),
      })
      : null;
    // Spare slots on other hosts: the job listens for them (and its ranks here on an address they reach) from the start.
    this.#slotsElsewhere = universe !== options.np && slotHosts.some((h) => !isThisMachine(h, choice.hostname, choice.interfaces) && spawns?.whyNotHost(h) === null);
  }

  /**
   * Starts a spawned world here (dynamic-service.ts placed and resolved it): its processes join
   * the rank table, the wire-up service admits their numbers, one fork launcher per command.
   */
  #startWorld(w: SpawnedWorld): Error | null {
    if (this.#failure !== null || this.#isDone) return new Error('the job is ending');
    if (w.first !== this.#ranks.length) return new Error(`process numbers out of step (${w.first}, ${this.#ranks.length} known)`);
    const err = this.#spawnLaunchers!.launch(w, this.#wireupHere, this.#wireupRemote, this.#launcherEvents(), (p, launcher) => {
      if (p.rank === w.first) this.#server.addWorld(w.first, w.size);
      const s = this.#newRank(p);
      s.launcher = launcher;
      this.#ranks[p.rank] = s;
      if (this.#o.outputDir !== null) openOutputFilesOf(s, this.#o.outputDir);
    });
    if (err !== null) return err;
    this.#deps.log.debug({ first: w.first, size: w.size, spawn: w.spawnId }, 'spawned a world');
    return null;
  }

  /** Runs the job to its end. @returns mpiexec's exit status */
  async run(): Promise<number> {
    this.#t0 = performance.now();
    if (this.#universe instanceof Error) {
      this.#errSink.write(`mpiexec: ${this.#universe.message}\n`);
      return 2;
    }
    // However mpiexec ends (a failed start returns early, a second signal exits at once), the job's
    // same-host directory on this host goes with it; the end of run() removes it sooner (docs/adr/0029).
    process.once('exit', () => removeSameHostDirectory(this.#jobKey));
    // What an earlier job left when nothing of it survived (mpiexec killed -9) goes now; this job's
    // directory is claimed for this mpiexec, so that a later one can tell when it is left over.
    const swept = sweepStaleSameHostDirectories();
    if (swept.length > 0) this.#deps.log.debug({ swept }, 'removed same-host directories of jobs that are gone');
    claimSameHostDirectory(this.#jobKey);
    const done = new Promise<void>((resolve) => {
      this.#resolveDone = resolve;
    });
    if (this.#o.outputDir !== null) await mkdir(this.#o.outputDir, { recursive: true });
    if (this.#o.dashboardPort !== null) {
      // Imported with --dashboard only: its server, page and views are no part of a plain job's start-up (issue 38).
      const { startDashboard } = await import('./dashboard.ts');
      this.#dashboard = await startDashboard(this.#o.dashboardPort, this.#o.dashboardHost, { log: this.#deps.log, sample: (ms) => this.#server.rollCall(ms, true), ranks: () => this.#ranks }, (l) => this.#errSink.write(l));
      if (this.#dashboard === null) return 2;
    }
    const started = await this.#startRanks();
    if (started !== null) {
      await this.#dashboard?.stop();
      return started;
    }
    if (this.#o.timeoutSec !== null) {
      this.#timers.push(
        setTimeout(() => {
          this.#timeoutTask = this.#onTimeout();
        }, this.#o.timeoutSec * 1000),
      );
    } else if (this.#o.deadlockHintSec > 0) {
      this.#deadlockHint = new DeadlockHint(this.#o.deadlockHintSec, (ms) => this.#server.rollCall(ms), () => this.#ranks.map(rollCallRank), (l) => this.#errSink.write(l)).start();
    }
    this.#checkDone();
    await done;
    await this.#timeoutTask; // a roll-call in progress still prints
    this.#announceFailure(this.#repeatedErr.finish((r) => {
      const s = this.#ranks[r];
      return s !== undefined && (s.signal !== null || (s.exitCode !== null && s.exitCode !== 0));
    }));
    for (const t of this.#timers) clearTimeout(t);
    this.#deadlockHint?.stop();
    await this.#dashboard?.stop();
    for (const s of this.#ranks) this.#killGroup(s, 'SIGKILL'); // leftover children of finished ranks
    await Promise.all([this.#launchers.remote?.settled(), this.#spawnLaunchers?.settled()]);
    this.#launchers.here?.close();
    this.#spawnLaunchers?.close();
    this.closeRemote();
    this.#dynamic?.close(); // the links to jobs coupled at a port: the other side fails what did not finalize
    // Every rank here is gone: what killed ones left of the job's same-host sockets goes too (docs/adr/0029).
    removeSameHostDirectory(this.#jobKey);
    await this.#server.close();
    await Promise.all(this.#ranks.flatMap((s) => [closeFile(s.outFile), closeFile(s.errFile)]));
    const status = this.#failure?.status ?? 0;
    if (this.#o.reportJson !== null) await writeJobReport(this.#o.reportJson, this.#report(status));
    if (this.#o.traceFile !== null) await writeTraceFile(this.#o.traceFile, this.#ranks, this.#traces, this.#deps.log);
    return status;
  }

  /** SIGINT/SIGTERM to mpiexec: forward, then kill after a grace period; a second one kills at once. */
  signal(sig: 'SIGINT' | 'SIGTERM'): void {
    this.#signalCount++;
    if (this.#signalCount === 1 && this.#failure === null) {
      this.#failure = { rank: null, reason: `received ${sig}`, status: 128 + signalNumber(sig) };
      // Inside an allocation SIGTERM is how Slurm ends a job step (scancel, time limit, preemption).
      const jobId = this.#deps.slurm?.jobId ?? null;
      const from = sig === 'SIGTERM' && jobId !== null ? ` (Slurm sends it when job ${jobId} is cancelled or reaches its time limit)` : '';
      this.#errSink.write(`mpiexec: received ${sig}${from}; forwarding it to ${this.#ranks.length} processes\n`);
      this.#abandonUnstarted();
      for (const s of this.#ranks) if (!s.hasExited) this.#killGroup(s, sig);
      this.#timers.push(setTimeout(() => this.killNow(), SIGNAL_GRACE_MS));
      return;
    }
    this.killNow();
  }

  /** SIGKILL to every process group, synchronously (also used on mpiexec's own exit). */
  killNow(): void {
    for (const s of this.#ranks) if (!s.hasExited || !s.isClosed) this.#killGroup(s, 'SIGKILL');
  }

  /** Ends every remote launch on this side (ssh process groups, proxy links, srun's step); their proxies then kill their ranks. */
  closeRemote(): void {
    this.#launchers.remote?.close();
  }

  /** How each host is started (--dry-run): forked ranks here, a proxy through ssh or srun elsewhere. */
  launchPlan(): HostLaunchLine[] {
    return [...(this.#launchers.here?.plan() ?? []), ...(this.#launchers.remote?.plan() ?? [])];
  }

  /**
   * Starts the wire-up service and the ranks: here at once (or after the
   * first proxy link), elsewhere through their hosts' proxies.
   * @returns null, or an exit status when the job cannot start at all
   */
  async #startRanks(): Promise<number | null> {
    const { here, remote } = this.#launchers;
    const table = this.#deps.interfaces ?? os.networkInterfaces();
    const { bindHost, localListen, ifaceError } = wireupBinding(remote !== null || this.#slotsElsewhere, remote !== null, this.#o.iface, table);
    if (ifaceError !== null && here !== null) {
      this.#errSink.write(`mpiexec: ${ifaceError.message} (on mpiexec's host ${this.#deps.hostname ?? os.hostname()})\n`);
      return 2;
    }
    let port: number;
    try {
      port = await this.#server.start(bindHost, this.#o.portRange);
    } catch (err) {
      this.#errSink.write(`mpiexec: cannot start the wire-up service on ${bindHost}: ${(err as Error).message}\n`);
      return 2;
    }
    const url = wireupUrl(this.#secure, bindHost === '0.0.0.0' ? '127.0.0.1' : bindHost, port);
    const addresses = bindHost === '0.0.0.0' ? externalAddresses(table) : [bindHost];
    const portHost = addresses[0] ?? bindHost;
    this.#portAddress = `${portHost.includes(':') ? `[${portHost}]` : portHost}:${port}`;
    this.#deps.log.debug({ url, bindHost, size: this.#o.np, remoteRanks: remote?.placements.length ?? 0 }, 'wire-up service listening');
    if (this.#o.outputDir !== null) this.#openOutputFiles(this.#o.outputDir);
    if (here !== null) {
      const startHere = (listenHost: string): void => {
        this.#localStart = null;
        this.#wireupHere = { url, port, addresses, listenHost };
        here.start(this.#wireupHere);
      };
      if (localListen !== null) startHere(localListen);
      else this.#localStart = startHere;
    }
    // A proxy picks its ranks' address on its own host.
    this.#wireupRemote = { url, port, addresses, listenHost: '' };
    remote?.start(this.#wireupRemote);
    return null;
  }

  /** --output-dir: each rank's output also goes to DIR/rank.N.out and DIR/rank.N.err. */
  #openOutputFiles(dir: string): void {
    for (const s of this.#ranks) openOutputFilesOf(s, dir);
  }

  #launcherEvents(): RankLauncherEvents {
    const rank = (r: number): RankState => this.#ranks[r]!;
    return {
      onStarted: (r, pid) => {
        const s = rank(r);
        s.pid = pid;
        s.startedAt = performance.now();
      },
      onStartError: (r, message) => {
        const s = rank(r);
        if (!s.hasExited) this.#onStartError(s, message);
      },
      onOutput: (r, fd, data) => {
        const s = rank(r);
        this.#dashboard?.output(r, fd, data);
        if (fd === 1) {
          s.out.push(data);
          s.outFile?.write(data);
        } else {
          s.err.push(data);
          s.errFile?.write(data);
          s.errTail = (s.errTail + data.toString('utf8')).slice(-STDERR_TAIL_CHARS);
        }
      },
      onOutputEnd: (r, fd) => (fd === 1 ? rank(r).out : rank(r).err).flush(),
      onExit: (r, code, signal) => {
        const s = rank(r);
        if (!s.hasExited) this.#onExit(s, code, signal);
      },
      onClosed: (r) => this.#markClosed(rank(r)),
      onLinked: (ranks, hostName, localAddress) => {
        for (const r of ranks) rank(r).host = hostName;
        this.#localStart?.(localAddress);
      },
      onLost: (ranks, why, status) => this.#onHostLost(ranks, why, status),
      onCancelled: (message, status) => this.#onSlurmCancelled(message, status),
    };
  }

  /**
   * Slurm ended the step or the job: this is the job's one line and srun's
   * status is mpiexec's, even when a rank's failure (a consequence: its peer
   * was killed) was seen first; only Ctrl-C and --timeout, mpiexec's own
   * decisions, stay the cause.
   */
  #onSlurmCancelled(message: string, status: number): void {
    const f = this.#failure;
    if (f !== null && f.rank === null && (f.status === TIMEOUT_STATUS || f.reason === 'received SIGINT')) return;
    this.#failure = { rank: null, reason: message, status };
    this.#errSink.write(`mpiexec: ${message}; ending the job (${this.#jobSize()})\n`);
    this.#stopAll();
  }

  /** A host failed to start or vanished: its ranks are gone; the first such event ends the job. */
  #onHostLost(ranks: readonly number[], why: string, status: number): void {
    const lost = ranks.map((r) => this.#ranks[r]!).filter((s) => !s.hasExited || !s.isClosed);
    const now = performance.now();
    for (const s of lost) {
      if (!s.hasExited) {
        s.hasExited = true;
        s.endedAt = now;
      }
      if (!s.isFinalized) this.#dynamic?.processEnded(s.rank, `its host was lost: ${why}`);
    }
    if (this.#failure === null && lost.length > 0) {
      const list = lost.map((s) => s.rank).join(', ');
      const started = lost.some((s) => s.pid !== null);
      this.#failure = { rank: lost[0]!.rank, reason: why, status };
      this.#errSink.write(`mpiexec: ${why}; ${started ? `lost rank${lost.length === 1 ? '' : 's'}` : `rank${lost.length === 1 ? '' : 's'} never started:`} ${list}; aborting the job (${this.#jobSize()})\n`);
      this.#stopAll();
    }
    for (const s of lost) this.#markClosed(s);
    this.#checkDone();
  }

  /** After a failure: ranks that were never started (waiting for a link, or on a host still launching) are done. */
  #abandonUnstarted(): void {
    this.#localStart = null;
    const never = [...(this.#launchers.here?.abandonUnstarted() ?? []), ...(this.#launchers.remote?.abandonUnstarted() ?? []), ...(this.#spawnLaunchers?.abandonUnstarted() ?? [])];
    for (const r of never) {
      const s = this.#ranks[r]!;
      if (s.hasExited) continue;
      s.hasExited = true;
      this.#markClosed(s);
    }
  }

  #newRank(p: Placement): RankState {
    const tag = this.#o.tagOutput ? `[${p.rank}] ` : '';
    const prefix =
      this.#o.timestampOutput ? () => `[${((performance.now() - this.#t0) / 1000).toFixed(3)}] ${tag}` : tag === '' ? null : () => tag;
    return newRankState(p, prefix, this.#outSink, (b) => this.#repeatedErr.push(p.rank, b, prefix));
  }

  #onStartError(s: RankState, message: string): void {
    s.hasExited = true;
    s.endedAt = performance.now();
    s.exitCode = NOT_STARTED_STATUS;
    const cause = startFailureCause(message);
    this.#fail(s, `could not be started: ${cause}; aborting the job (${this.#jobSize()})`, `could not be started: ${cause}`, NOT_STARTED_STATUS);
    this.#markClosed(s);
  }

  #onExit(s: RankState, code: number | null, signal: NodeJS.Signals | null): void {
    s.hasExited = true;
    s.endedAt = performance.now();
    s.exitCode = code;
    s.signal = signal;
    this.#deps.log.debug({ rank: s.rank, pid: s.pid, code, signal }, 'rank exited');
    if (!s.isFinalized) this.#tellCoupled(s);
    if (this.#failure === null && classifyExit(s, this.#ranks) !== null) {
      if (this.#settling.length === 0) this.#settlingSince = s.endedAt;
      this.#settling.push(s);
      this.#settleTimer ??= setTimeout(() => this.#settle(), SETTLE_MS);
    }
    this.#checkDone();
  }

  /**
   * A job coupled with this one at a port (docs/adr/0043) fails `s` in its group's processes. When `s`
   * stopped because it lost a process of this job that has not ended yet, that process is the cause:
   * it is told first, so that the other job's ranks hear of the cause rather than of its consequence.
   */
  #tellCoupled(s: RankState): void {
    const lost = s.lostPeer === null ? undefined : this.#ranks[s.lostPeer];
    if (lost !== undefined && !lost.hasExited && !lost.isFinalized) this.#dynamic?.processEnded(lost.rank, `process ${s.rank} of its job lost its connection to it`);
    const how = s.signal !== null ? `it was ended by ${s.signal}` : `it exited with code ${s.exitCode ?? '?'} before MPI.finalize`;
    this.#dynamic?.processEnded(s.rank, lost === undefined ? how : `${how}, after losing its connection to process ${lost.rank} of its job`);
  }

  /** Blames one of the failing exits seen while settling: the first that is not a consequence of a lost peer. */
  #settle(): void {
    if (this.#settleTimer !== null) clearTimeout(this.#settleTimer);
    this.#settleTimer = null;
    const exits = this.#settling;
    if (this.#failure !== null || exits.length === 0) {
      this.#settling = [];
      return;
    }
    const lostIsRunning = (e: RankState): boolean => e.lostPeer !== null && this.#ranks[e.lostPeer]?.hasExited === false;
    if (exits.every(lostIsRunning) && performance.now() - this.#settlingSince < LOST_PEER_WAIT_MS) {
      this.#settleTimer = setTimeout(() => this.#settle(), SETTLE_MS);
      return;
    }
    this.#settling = [];
    // Else a rank that lost a process outside the rank table (another job's, coupled at a port): the ranks that lost it are the consequence.
    const s = exits.find((e) => e.lostPeer === null) ?? exits.find((e) => this.#ranks[e.lostPeer!] === undefined) ?? exits[0]!;
    const f = classifyExit(s, this.#ranks)!;
    // A lost peer of another job coupled at a port (docs/adr/0043) is named as that job's process.
    const peer = s.lostPeer === null ? null : this.#dynamic?.coupledPeer(s.lostPeer) ?? `rank ${s.lostPeer}`;
    const reason = peer === null ? f.reason : `${f.reason} after losing its connection to ${peer}`;
    this.#fail(s, `${reason}; aborting the job (${this.#jobSize()})`, reason, f.status, s.lostPeer === null);
  }

  #onJoined(rank: number): void {
    const s = this.#ranks[rank]!;
    s.hasJoined = true;
    if (this.#failure !== null) return;
    // A rank that already left without joining will never reach the fences the others are about to wait in.
    const gone = this.#ranks.find((r) => r.hasExited && !r.hasJoined && r.exitCode === 0 && r.signal === null);
    if (gone !== undefined) {
      const reason = 'exited with code 0 before calling MPI.init, while other ranks did';
      this.#fail(gone, `${reason}; aborting the job (${this.#jobSize()})`, reason, 1);
    }
  }

  #onAbort(rank: number, code: number, message: string): void {
    if (this.#failure !== null) return;
    const s = this.#ranks[rank]!;
    const status = code >= 0 && code <= 255 ? code : 1;
    this.#fail(s, `called MPI.abort(${code}): ${message}`, `called MPI.abort(${code}): ${message}`, status, false, `rank ${rank} called MPI.abort`);
  }

  /**
   * Records the first failure and stops every process. Its line is written
   * once every rank ended (#announceFailure): the failed rank's stack then
   * came before it, and the other ranks' ends are known.
   * @param withCause - the line names the error the rank printed (failure-cause.ts)
   * @param stoppedBecause - how the summary line says why the other ranks stopped
   */
  /** The job's size for mpiexec's last line: "1 process", "4 processes". */
  #jobSize(): string {
    return this.#ranks.length === 1 ? '1 process' : `${this.#ranks.length} processes`;
  }

  #fail(s: RankState, text: string, reason: string, status: number, withCause = false, stoppedBecause = 'peer failed'): void {
    if (this.#failure !== null) return;
    this.#failure = { rank: s.rank, reason, status };
    this.#blamed = { s, text, reason, withCause, stoppedBecause };
    this.#stopAll();
  }

  /**
   * The end of a failed job, as Open MPI and Hydra end theirs: one line for
   * the ranks stopped because of the failure, then the failure itself,
   * naming the error the rank printed and where in the user's code, last.
   * @param repeated - the failed ranks whose stderr, the same as another's, was not repeated (rank to that rank)
   */
  #announceFailure(repeated: ReadonlyMap<number, number>): void {
    const cwd = path.resolve(this.#o.wdir ?? process.cwd());
    for (const line of failureLines(this.#blamed, this.#ranks, cwd, repeated)) this.#errSink.write(line);
  }

  #stopAll(): void {
    this.#abandonUnstarted();
    for (const s of this.#ranks) if (!s.hasExited || !s.isClosed) this.#killGroup(s, 'SIGTERM');
    this.#timers.push(setTimeout(() => this.killNow(), KILL_AFTER_MS));
  }

  async #onTimeout(): Promise<void> {
    if (this.#failure !== null || this.#isDone) return;
    const sec = this.#o.timeoutSec!;
    this.#failure = { rank: null, reason: `timeout after ${sec} s`, status: TIMEOUT_STATUS };
    this.#errSink.write(`mpiexec: the job did not finish within --timeout ${sec} s; roll-call of ${this.#ranks.length} processes:\n`);
    const answers = await this.#server.rollCall(ROLL_CALL_WAIT_MS);
    const lines = rollCallLines(this.#ranks.map(rollCallRank), answers);
    // Another job's processes coupled at a port answer their own mpiexec's roll-call: which numbers they are.
    for (const l of this.#dynamic?.couplingLines() ?? []) lines.push(`mpiexec: ${l}`);
    this.#errSink.write(`${lines.join('\n')}\nmpiexec: --timeout ${sec} s fired; ending the job (${this.#jobSize()})\n`);
    this.#stopAll();
  }

  #killGroup(s: RankState, sig: NodeJS.Signals): void {
    s.launcher?.signal(s.rank, sig);
  }

  #markClosed(s: RankState): void {
    if (s.isClosed) return;
    s.isClosed = true;
    s.out.flush();
    s.err.flush();
    if (s.hasExited && s.exitCode === 0 && s.signal === null) this.#repeatedErr.release(s.rank);
    this.#checkDone();
  }

  #checkDone(): void {
    if (this.#isDone || this.#resolveDone === null) return;
    if (!this.#ranks.every((s) => s.hasExited && s.isClosed)) return;
    if (this.#settleTimer !== null) this.#settle();
    this.#isDone = true;
    this.#resolveDone();
  }

  #report(status: number): JobReport {
    return {
      program: this.#o.program,
      args: this.#o.args,
      size: this.#o.np,
      exitStatus: status,
      failure: this.#failure === null ? null : { rank: this.#failure.rank, reason: this.#failure.reason },
      durationMs: Math.round(performance.now() - this.#t0),
      ranks: rankReports(this.#ranks),
    };
  }
}
