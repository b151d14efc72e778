/**
 * One mpiexec job: spawns the ranks, forwards their output, runs the wire-up
 * service, and turns any failure into a job-wide stop with one message and a
 * meaningful exit status. The rule that matters most: never a hang.
 *
 * Per rank:   spawned -> (joined -> initialized -> finalized) -> exited -> closed
 * A failure is the first of:
 *   - exit with a non-zero code, or by a signal (status: code, 128+signal);
 *   - exit 0 after joining the wire-up service but before finalize (status 1);
 *   - exit 0 without ever joining while some rank joined (status 1; noticed
 *     at whichever of the two events comes second);
 *   - MPI.abort(code) through the wire-up service (status: code);
 *   - the program cannot be started (status 127);
 *   - --timeout (roll-call first; status 124) or SIGINT/SIGTERM (130/143).
 * A failing exit is blamed only after a short settling time, because ranks
 * that lose their connection to a dead rank fail too, and their exits can be
 * seen first: the blame goes to the first failing rank that did not report a
 * lost peer (wire-up peerLost), so the line names the cause.
 * After the first failure, every process group gets SIGTERM and, one second
 * later, SIGKILL; what they do meanwhile is not reported. The failure line
 * waits (briefly) for the failed rank's output to drain, so a JavaScript
 * stack comes before it.
 *
 * Each rank is the leader of its own process group (detached), so killing
 * the group also kills its children, and a Ctrl-C at the terminal reaches
 * only mpiexec, which forwards it.
 *
 * Hosts (docs/adr/0007): ranks on this machine are forked by mpiexec itself,
 * as above. Each other host gets one proxy (proxy.ts) started through ssh
 * (remote-host.ts), which forks that host's ranks and relays their output,
 * exits and signals; a remote rank is then the same RankState with
 * `remote` set, and every rule above holds for it. A host whose proxy fails
 * to start or vanishes ends the job with one line naming the host and its
 * ranks (status 255, or 127 when node is missing there). Under Slurm
 * (deps.slurm) one srun step starts every other node's proxy instead of one
 * ssh each (slurm-step.ts), as PRRTE's plm/slurm does beside the node mpirun
 * serves itself; a host lost while srun runs waits (at most LOSS_WAIT_MS)
 * for srun's account of it, so that a scancel, a time limit or a node
 * failure ends the job with one line saying Slurm did it, and srun's status.
 * A job that spans hosts listens on every address (or the --iface address); its ranks listen
 * on an address of their own host: --iface resolved there, else the local
 * address of the proxy's link; for the ranks here, this machine's only
 * non-loopback address, or, when it has several, mpiexec's end of the first
 * proxy link (they then start once the first proxy linked).
 *
 * Length: this file is the one state machine of a job's ranks, local and
 * remote (about 900 lines); the remote half stays here because it drives the
 * same per-rank transitions. ssh and the proxy link are in remote-host.ts,
 * the proxy in proxy.ts, addresses in iface.ts, the srun step in
 * slurm-step.ts and every Slurm decision before the start in slurm-plan.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { JOB_ENV } from '@tsmpi/core/pmi';
import { claimSameHostDirectory, removeSameHostDirectory, sweepStaleSameHostDirectories } from '@tsmpi/transport-tcp';
import { externalAddresses, isThisMachine, resolveIface, type InterfaceTable } from './iface.ts';
import type { FinalizeReport } from '@tsmpi/core/pmi';
import type { LaunchOptions } from './options.ts';
import { LineForwarder, OutputSink } from './output-forwarder.ts';
import type { Placement } from './process-map.ts';
import { findSetpriv, withParentDeath } from './parent-death.ts';
import { rankCommand, type RankCommand } from './rank-command.ts';
import { remoteLaunchArgv, remoteShellCommand, shellQuote } from './remote-command.ts';
import { acceptProxyLink, HOST_FAILED_STATUS, RemoteHost } from './remote-host.ts';
import { PROXY_PROTOCOL_VERSION, type LaunchSpec } from './proxy-protocol.ts';
import { writeJobReport, type JobReport } from './report.ts';
import { rollCallLines } from './roll-call.ts';
import { effectiveSetting, findSetting } from './settings-flags.ts';
import { WireupServer, type PendingLink } from './wireup-server.ts';
import { buildSrunCommand, srunEnvironment, type SlurmVersion, type SrunTarget } from './slurm-srun.ts';
import { SrunStep, type SrunExit } from './slurm-step.ts';

/** SIGTERM first; SIGKILL this long after, so that everything is gone within 2 s of a failure. */
const KILL_AFTER_MS = 1000;
/** After Ctrl-C or SIGTERM to mpiexec: how long ranks get to handle the forwarded signal. */
const SIGNAL_GRACE_MS = 2000;
/** How long a failure line waits for the failed rank's output (its stack) to drain. */
const ANNOUNCE_WAIT_MS = 300;
/** How long a rank's pipes may stay open after it exited (held by its children) before they are killed. */
const STDIO_GRACE_MS = 500;
/** How long the --timeout roll-call waits for answers. */
const ROLL_CALL_WAIT_MS = 1000;
/** How long a failing exit waits for other exits and peer-loss reports before one rank is blamed. */
const SETTLE_MS = 200;
/** The status timeout(1) uses. */
export const TIMEOUT_STATUS = 124;
/** "Command not found", as shells report it. */
const NOT_STARTED_STATUS = 127;
/** Remote launches (ssh connections) in progress at once; the next starts when one proxy linked or failed. */
const MAX_CONCURRENT_LAUNCHES = 8;
/** Under Slurm, inside an allocation: every proxy of the srun step must connect back within this time. */
const SRUN_CONNECT_BACK_MS = 60_000;
/**
 * Under Slurm: how long a host lost while srun still runs waits for srun's own account (scancel,
 * time limit, node failure) before it is reported as a lost host. srun tells its step's end within
 * a few seconds (it waits up to 7 s for the step's tasks after Slurm ended it, seen on 22.05).
 */
const LOSS_WAIT_MS = 8000;
/** After the last rank closed: how long srun gets to see its proxies exit before it is told to end the step. */
const SRUN_EXIT_WAIT_MS = 10_000;
/** The proxy's entry point: the same path on every host (a shared or identical installation). */
export const PROXY_BIN = fileURLToPath(new URL('../bin/tsmpi-proxy.mjs', import.meta.url));

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
  /** This machine's host name and interfaces (which hosts are local; --iface). Default: os. */
  readonly hostname?: string;
  readonly interfaces?: InterfaceTable;
  /** --launcher slurm: start the other hosts' proxies with one srun step (slurm-srun.ts). */
  readonly slurm?: SlurmLaunch;
}

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
}

/** One host's line of the --dry-run launch plan. */
export interface HostLaunchLine {
  readonly host: string;
  readonly ranks: readonly number[];
  /** The command that starts the host's ranks (fork) or its proxy (ssh). */
  readonly command: string;
}

interface RankState {
  readonly rank: number;
  /** Where it runs; a placeholder is replaced by the Slurm node name once its proxy linked. */
  host: string;
  readonly localRank: number;
  readonly localSize: number;
  /** The host's proxy for a rank on another host; null for a rank forked here. */
  remote: RemoteHost | null;
  child: ChildProcess | null;
  pid: number | null;
  startedAt: number;
  endedAt: number | null;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  hasExited: boolean;
  isClosed: boolean;
  hasJoined: boolean;
  isInitialized: boolean;
  isFinalized: boolean;
  report: FinalizeReport | null;
  /** The process this rank reported losing its connection to, if any. */
  lostPeer: number | null;
  readonly out: LineForwarder;
  readonly err: LineForwarder;
  outFile: WriteStream | null;
  errFile: WriteStream | null;
  closeWaiters: (() => void)[];
}

interface Failure {
  readonly rank: number | null;
  readonly reason: string;
  readonly status: number;
}

function signalNumber(sig: NodeJS.Signals): number {
  return os.constants.signals[sig] ?? 0;
}

/** Runs one job; see the file comment. */
export class Job {
  readonly #o: LaunchOptions;
  readonly #deps: JobDeps;
  readonly #ranks: RankState[];
  readonly #outSink: OutputSink;
  readonly #errSink: OutputSink;
  readonly #server: WireupServer;
  readonly #jobKey = randomBytes(32).toString('hex');
  /** mpiexec --secure (or TSMPI_SECURE=on): the wire-up service, the proxies' links and the ranks' channels run TLS keyed by the job. */
  readonly #secure: boolean;
  readonly #command: RankCommand;
  /** setpriv when this host has one that sets a parent-death signal, null when it has none; undefined until probed. */
  #setpriv: string | null | undefined = undefined;
  #t0 = 0;
  #failure: Failure | null = null;
  /** Failing exits seen while settling, in the order seen (SETTLE_MS). */
  #settling: RankState[] = [];
  #settleTimer: NodeJS.Timeout | null = null;
  #signalCount = 0;
  #timers: NodeJS.Timeout[] = [];
  #announcement: Promise<void> = Promise.resolve();
  #timeoutTask: Promise<void> = Promise.resolve();
  #resolveDone: (() => void) | null = null;
  #isDone = false;
  /** One per remote host, in placement order. */
  readonly #hosts: RemoteHost[] = [];
  #launchQueue: (() => void)[] = [];
  #launching = 0;
  /** Ranks here wait for the first proxy link when their address comes from it. */
  #localStart: ((listenHost: string) => void) | null = null;
  /** The srun step of a --launcher slurm job, once started. */
  #srun: SrunStep | null = null;
  /** Hosts lost while srun runs, waiting for srun's account (LOSS_WAIT_MS). */
  #deferredLosses: { readonly host: RemoteHost; readonly why: string; readonly status: number }[] = [];
  #lossTimer: NodeJS.Timeout | null = null;

  /**
   * @param options - the parsed command line (program already resolved to a path)
   * @param placements - where each rank runs (process-map.ts)
   */
  constructor(options: LaunchOptions, placements: readonly Placement[], deps: JobDeps) {
    this.#o = options;
    this.#deps = deps;
    this.#outSink = new OutputSink(deps.stdout);
    this.#errSink = new OutputSink(deps.stderr);
    this.#command = rankCommand(options.program, options.args, deps.tsxUrl, deps.nodeFlags);
    this.#ranks = placements.map((p) => this.#newRank(p));
    const secureRow = findSetting('secure');
    this.#secure = secureRow !== undefined && effectiveSetting(secureRow, options.settings, deps.env) === 'on';
    const hostname = deps.hostname ?? os.hostname();
    const table = deps.interfaces ?? os.networkInterfaces();
    const byHost = new Map<string, RankState[]>();
    for (const s of this.#ranks) {
      if (isThisMachine(s.host, hostname, table)) continue;
      const list = byHost.get(s.host) ?? [];
      list.push(s);
      byHost.set(s.host, list);
    }
    for (const [host, list] of byHost) {
      const h = new RemoteHost(host, this.#hosts.length, list.map((s) => s.rank), this.#remoteNode(), deps.log, this.#hostEvents());
      this.#hosts.push(h);
      for (const s of list) s.remote = h;
    }
    this.#server = new WireupServer(options.np, this.#jobKey, deps.log, {
      onJoined: (rank) => this.#onJoined(rank),
      onInitialized: (rank) => {
        this.#ranks[rank]!.isInitialized = true;
      },
      onFinalized: (rank, report) => {
        const s = this.#ranks[rank]!;
        s.isFinalized = true;
        s.report = report;
      },
      onAbort: (rank, code, message) => this.#onAbort(rank, code, message),
      onPeerLost: (rank, lost) => {
        const s = this.#ranks[rank]!;
        if (s.lostPeer === null) s.lostPeer = lost;
      },
      ...(this.#hosts.length === 0 ? {} : {
        onProxyLink: (link: PendingLink) => acceptProxyLink(link, this.#jobKey, this.#hosts, deps.log),
      }),
    }, { secure: this.#secure });
  }

  /** Runs the job to its end. @returns mpiexec's exit status */
  async run(): Promise<number> {
    this.#t0 = performance.now();
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
    const started = await this.#startRanks();
    if (started !== null) return started;
    if (this.#o.timeoutSec !== null) {
      this.#timers.push(
        setTimeout(() => {
          this.#timeoutTask = this.#onTimeout();
        }, this.#o.timeoutSec * 1000),
      );
    }
    this.#checkDone();
    await done;
    await this.#timeoutTask; // a roll-call in progress still prints
    await this.#announcement;
    for (const t of this.#timers) clearTimeout(t);
    for (const s of this.#ranks) this.#killGroup(s, 'SIGKILL'); // leftover children of finished ranks
    if (this.#srun !== null) {
      // The proxies exit once their ranks closed, and srun with them; only then is its status known.
      let t: NodeJS.Timeout | undefined;
      await Promise.race([this.#srun.exited, new Promise<void>((resolve) => { t = setTimeout(resolve, SRUN_EXIT_WAIT_MS); })]);
      clearTimeout(t);
    }
    this.closeRemote();
    // Every rank here is gone: what killed ones left of the job's same-host sockets goes too (docs/adr/0029).
    removeSameHostDirectory(this.#jobKey);
    await this.#server.close();
    await Promise.all(this.#ranks.flatMap((s) => [closeFile(s.outFile), closeFile(s.errFile)]));
    const status = this.#failure?.status ?? 0;
    if (this.#o.reportJson !== null) await writeJobReport(this.#o.reportJson, this.#report(status));
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
      this.#errSink.write(`mpiexec: received ${sig}${from}; forwarding it to ${this.#o.np} processes\n`);
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
    for (const h of this.#hosts) h.close();
    this.#srun?.close();
  }

  /**
   * Starts the wire-up service and the ranks: here at once (or after the
   * first proxy link), elsewhere through their hosts' proxies.
   * @returns null, or an exit status when the job cannot start at all
   */
  async #startRanks(): Promise<number | null> {
    const table = this.#deps.interfaces ?? os.networkInterfaces();
    const isMulti = this.#hosts.length > 0;
    let bindHost = '127.0.0.1';
    let localListen: string | null = '127.0.0.1';
    if (isMulti) {
      bindHost = '0.0.0.0';
      localListen = null;
      if (this.#o.iface !== null) {
        const a = resolveIface(this.#o.iface, table);
        if (!(a instanceof Error)) {
          bindHost = a;
          localListen = a;
        } else if (this.#ranks.some((s) => s.remote === null)) {
          this.#errSink.write(`mpiexec: ${a.message} (on mpiexec's host ${this.#deps.hostname ?? os.hostname()})\n`);
          return 2;
        }
      } else {
        // One non-loopback address: the only one other hosts can reach this one by, so no need to wait for a link.
        const external = externalAddresses(table);
        if (external.length === 1) localListen = external[0]!;
      }
    }
    let port: number;
    try {
      port = await this.#server.start(bindHost, this.#o.portRange);
    } catch (err) {
      this.#errSink.write(`mpiexec: cannot start the wire-up service on ${bindHost}: ${(err as Error).message}\n`);
      return 2;
    }
    const localUrl = `${this.#secure ? 'wss' : 'ws'}://${bindHost === '0.0.0.0' ? '127.0.0.1' : bindHost}:${port}`;
    this.#deps.log.debug({ url: localUrl, bindHost, size: this.#o.np, hosts: this.#hosts.length }, 'wire-up service listening');
    const spawnLocal = (listenHost: string): void => {
      this.#localStart = null;
      for (const s of this.#ranks) if (s.remote === null && !s.hasExited) this.#spawn(s, localUrl, listenHost);
    };
    if (localListen !== null) spawnLocal(localListen);
    else this.#localStart = spawnLocal;
    if (isMulti) this.#launchHosts(port, bindHost === '0.0.0.0' ? externalAddresses(table) : [bindHost]);
    return null;
  }

  /** node on the remote hosts: --prefix DIR/bin/node, else this very binary's path. */
  #remoteNode(): string {
    return this.#o.prefix === null ? process.execPath : path.join(this.#o.prefix, 'bin', 'node');
  }

  /** The environment every remote rank gets on top of its host's: TSMPI_* of mpiexec, settings flags, --env, -x. */
  #forwardedEnv(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#deps.env)) if (k.startsWith('TSMPI_') && v !== undefined) env[k] = v;
    for (const [name, v] of this.#o.settings) {
      const row = findSetting(name);
      if (row !== undefined) env[row.env] = String(v);
    }
    for (const [k, v] of this.#o.env) env[k] = v;
    for (const k of Object.values(JOB_ENV)) delete env[k];
    return env;
  }

  /** The command and stdin line that start host `h`'s proxy. */
  remoteLaunch(h: RemoteHost, port: number, addresses: readonly string[]): { file: string; args: string[]; spec: LaunchSpec } {
    const node = this.#remoteNode();
    const wdir = path.resolve(this.#o.wdir ?? process.cwd());
    const cmd = this.#command.kind === 'node' ? { file: node, args: this.#command.args } : this.#command;
    const spec: LaunchSpec = {
      v: PROXY_PROTOCOL_VERSION, key: this.#jobKey, index: h.index, host: h.host, port, addresses, size: this.#o.np,
      ranks: h.ranks.map((r) => ({ rank: r, localRank: this.#ranks[r]!.localRank, localSize: this.#ranks[r]!.localSize })),
      file: cmd.file, args: [...cmd.args], wdir, env: this.#forwardedEnv(), iface: this.#o.iface,
      portRange: this.#o.portRange === null ? null : `${this.#o.portRange.lo}-${this.#o.portRange.hi}`,
      ...(this.#secure ? { secure: true } : {}),
    };
    const argv = remoteLaunchArgv(this.#o.launcherExec, h.host, remoteShellCommand(wdir, node, [PROXY_BIN]));
    return { ...argv, spec: this.#deps.slurm?.hasPlaceholderHosts === true ? { ...spec, slurmNodeId: h.index } : spec };
  }

  /** The srun command of a --launcher slurm job (argv[0] is srun), or an Error saying why there is none. */
  srunCommand(): readonly string[] | Error {
    const sl = this.#deps.slurm;
    if (sl === undefined) return new Error('not a --launcher slurm job');
    const target: SrunTarget = sl.target.kind === 'allocation' ? { kind: 'allocation', hosts: this.#hosts.map((h) => h.host) } : sl.target;
    const cmd = buildSrunCommand({
      srun: sl.srun[0]!, extraArgs: sl.srun.slice(1), target, version: sl.version,
      proxyArgv: [this.#remoteNode(), PROXY_BIN, '--slurm'], secrets: [this.#jobKey],
    });
    return cmd instanceof Error ? cmd : cmd.argv;
  }

  /** How each host is started (--dry-run): forked ranks here, a proxy through ssh elsewhere. */
  launchPlan(): HostLaunchLine[] {
    const lines: HostLaunchLine[] = [];
    const here = this.#ranks.filter((s) => s.remote === null);
    for (const host of new Set(here.map((s) => s.host))) {
      const ranks = here.filter((s) => s.host === host).map((s) => s.rank);
      lines.push({ host, ranks, command: `fork here: ${[this.#command.file, ...this.#command.args].join(' ')}` });
    }
    const srun = this.#deps.slurm === undefined ? null : this.srunCommand();
    for (const h of this.#hosts) {
      if (srun !== null) {
        const how = srun instanceof Error ? srun.message : `${srun.map(shellQuote).join(' ')}  (one launch spec line per node, with the job key, on its stdin)`;
        lines.push({ host: h.host, ranks: h.ranks, command: h.index === 0 ? `proxy, one task of the job's one srun step: ${how}` : 'proxy, a task of the same srun step' });
        continue;
      }
      const { file, args } = this.remoteLaunch(h, 0, []);
      lines.push({ host: h.host, ranks: h.ranks, command: `proxy: ${[file, ...args].map(shellQuote).join(' ')}  (launch spec and job key on its stdin)` });
    }
    return lines;
  }

  /** --launcher slurm: one srun step starts every other host's proxy; each reads its own spec line. */
  #launchSrun(port: number, addresses: readonly string[]): void {
    const sl = this.#deps.slurm!;
    const argv = this.srunCommand();
    if (argv instanceof Error) {
      for (const h of this.#hosts) h.launcherEnded(`host ${h.host}: ${argv.message}`, HOST_FAILED_STATUS);
      return;
    }
    const step = new SrunStep(this.#deps.log, (line) => this.#errSink.write(line));
    this.#srun = step;
    // srun may wait in the queue for nodes when it allocates them itself; inside an allocation it starts at once.
    const connectBackMs = sl.target.kind === 'new' ? null : SRUN_CONNECT_BACK_MS;
    for (const h of this.#hosts) h.awaitLink(connectBackMs, 'srun', () => undefined);
    const lines = this.#hosts.map((h) => JSON.stringify(this.remoteLaunch(h, port, addresses).spec));
    this.#deps.log.debug({ argv }, 'starting the srun step');
    step.start(argv, srunEnvironment(this.#deps.env), lines, (e) => this.#onSrunExit(e));
  }

  /** srun ended: Slurm's account of it, then every host it leaves without a proxy. */
  #onSrunExit(e: SrunExit): void {
    const status = e.code ?? (e.signal !== null ? 128 + signalNumber(e.signal) : HOST_FAILED_STATUS);
    const v = e.verdict;
    if (v.kind === 'slurm-cancelled' && !e.wasClosedByMpiexec) {
      this.#onSlurmCancelled(v.message, status === 0 ? HOST_FAILED_STATUS : status);
    }
    const how = v.kind === 'task-failed'
      ? `its proxy ${v.exitCode !== null ? `exited with code ${v.exitCode}` : `ended (${v.signal ?? '?'})`} under srun`
      : `srun ended (status ${e.code ?? e.signal ?? '?'}) before its proxy connected back${e.lastLine === null ? '' : `: ${e.lastLine}`}`;
    for (const h of this.#hosts) h.launcherEnded(`host ${h.host}: ${how}`, status === 0 ? HOST_FAILED_STATUS : status);
    this.#flushLosses();
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
    this.#errSink.write(`mpiexec: ${message}; ending the job (${this.#o.np} processes)\n`);
    this.#stopAll();
  }

  #flushLosses(): void {
    if (this.#lossTimer !== null) clearTimeout(this.#lossTimer);
    this.#lossTimer = null;
    const losses = this.#deferredLosses;
    this.#deferredLosses = [];
    for (const l of losses) this.#onHostLost(l.host, l.why, l.status);
  }

  #launchHosts(port: number, addresses: readonly string[]): void {
    if (this.#deps.slurm !== undefined) {
      this.#launchSrun(port, addresses);
      return;
    }
    for (const h of this.#hosts) {
      this.#launchQueue.push(() => {
        if (this.#failure !== null || h.isDone) {
          this.#launchNext();
          return;
        }
        const { file, args, spec } = this.remoteLaunch(h, port, addresses);
        this.#deps.log.debug({ host: h.host, file, args }, 'starting a proxy');
        this.#launching++;
        h.start(file, args, JSON.stringify(spec), () => {
          this.#launching--;
          this.#launchNext();
        });
      });
    }
    this.#launchNext();
  }

  #launchNext(): void {
    while (this.#launching < MAX_CONCURRENT_LAUNCHES && this.#launchQueue.length > 0) this.#launchQueue.shift()!();
  }

  #hostEvents(): ConstructorParameters<typeof RemoteHost>[5] {
    const rank = (r: number): RankState => this.#ranks[r]!;
    return {
      onLinked: (h, _listenHost, localAddress) => {
        this.#outSink.addSource(h);
        this.#errSink.addSource(h);
        // "Stdin goes to rank 0" (API.md), wherever it runs: over the proxy's link when rank 0 is there.
        if (h.ranks.includes(0)) h.forwardStdin(process.stdin);
        // Under Slurm without --hosts the host names were placeholders until each proxy said where it runs.
        if (this.#deps.slurm?.hasPlaceholderHosts === true && h.linkedName !== '') {
          for (const r of h.ranks) this.#ranks[r]!.host = h.linkedName;
        }
        this.#localStart?.(localAddress);
      },
      onStarted: (r, pid) => {
        const s = rank(r);
        s.pid = pid;
        s.startedAt = performance.now();
      },
      onStartError: (r, message) => {
        const s = rank(r);
        if (!s.hasExited) this.#onStartError(s, new Error(message));
      },
      onOut: (r, fd, data) => {
        const s = rank(r);
        if (fd === 1) {
          s.out.push(data);
          s.outFile?.write(data);
        } else {
          s.err.push(data);
          s.errFile?.write(data);
        }
      },
      onExit: (r, code, signal) => {
        const s = rank(r);
        if (!s.hasExited) this.#onExit(s, code, signal as NodeJS.Signals | null);
      },
      onClosed: (r) => this.#markClosed(rank(r)),
      onLost: (h, why, status) => {
        if (this.#srun === null || !this.#srun.isRunning) {
          this.#onHostLost(h, why, status);
          return;
        }
        // srun will say whether Slurm did it (scancel kills the proxies before srun reports).
        this.#deferredLosses.push({ host: h, why, status });
        this.#lossTimer ??= setTimeout(() => this.#flushLosses(), LOSS_WAIT_MS);
      },
    };
  }

  /** A host failed to start or vanished: its ranks are gone; the first such event ends the job. */
  #onHostLost(h: RemoteHost, why: string, status: number): void {
    this.#outSink.removeSource(h);
    this.#errSink.removeSource(h);
    const lost = h.ranks.map((r) => this.#ranks[r]!).filter((s) => !s.hasExited || !s.isClosed);
    const now = performance.now();
    for (const s of lost) {
      if (!s.hasExited) {
        s.hasExited = true;
        s.endedAt = now;
      }
    }
    if (this.#failure === null && lost.length > 0) {
      const list = lost.map((s) => s.rank).join(', ');
      const started = lost.some((s) => s.pid !== null);
      this.#failure = { rank: lost[0]!.rank, reason: why, status };
      this.#errSink.write(`mpiexec: ${why}; ${started ? `lost rank${lost.length === 1 ? '' : 's'}` : `rank${lost.length === 1 ? '' : 's'} never started:`} ${list}; aborting the job (${this.#o.np} processes)\n`);
      this.#stopAll();
    }
    for (const s of lost) this.#markClosed(s);
    this.#checkDone();
  }

  /** After a failure: ranks that were never started (waiting for a link, or on a host still launching) are done. */
  #abandonUnstarted(): void {
    if (this.#localStart !== null) {
      this.#localStart = null;
      for (const s of this.#ranks) {
        if (s.remote !== null || s.child !== null || s.hasExited) continue;
        s.hasExited = true;
        this.#markClosed(s);
      }
    }
    let hasAbandoned = false;
    for (const h of this.#hosts) {
      if (h.isLinked || h.isDone) continue;
      this.#launchQueue = [];
      h.abandon();
      hasAbandoned = true;
      for (const r of h.ranks) {
        const s = this.#ranks[r]!;
        s.hasExited = true;
        this.#markClosed(s);
      }
    }
    // A proxy srun has not started yet (srun may still wait in the queue for nodes) is not waited for.
    if (hasAbandoned) this.#srun?.close();
  }

  #newRank(p: Placement): RankState {
    const tag = this.#o.tagOutput ? `[${p.rank}] ` : '';
    const prefix =
      this.#o.timestampOutput ? () => `[${((performance.now() - this.#t0) / 1000).toFixed(3)}] ${tag}` : tag === '' ? null : () => tag;
    return {
      rank: p.rank, host: p.host, localRank: p.localRank, localSize: p.localSize, remote: null, child: null, pid: null, startedAt: 0, endedAt: null,
      exitCode: null, signal: null, hasExited: false, isClosed: false, hasJoined: false, isInitialized: false,
      isFinalized: false, report: null, lostPeer: null,
      out: new LineForwarder((b) => this.#outSink.write(b), prefix),
      err: new LineForwarder((b) => this.#errSink.write(b), prefix),
      outFile: null, errFile: null, closeWaiters: [],
    };
  }

  #rankEnv(s: RankState, url: string, listenHost: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...this.#deps.env };
    for (const [k, v] of this.#o.env) env[k] = v;
    for (const [name, v] of this.#o.settings) {
      const row = findSetting(name);
      if (row !== undefined) env[row.env] = String(v);
    }
    env[JOB_ENV.rank] = String(s.rank);
    env[JOB_ENV.size] = String(this.#o.np);
    env[JOB_ENV.localRank] = String(s.localRank);
    env[JOB_ENV.localSize] = String(s.localSize);
    env[JOB_ENV.pmiUrl] = url;
    env[JOB_ENV.jobKey] = this.#jobKey;
    env[JOB_ENV.host] = s.host;
    env[JOB_ENV.listenHost] = listenHost;
    if (this.#o.portRange !== null) env[JOB_ENV.portRange] = `${this.#o.portRange.lo}-${this.#o.portRange.hi}`;
    return env;
  }

  #spawn(s: RankState, url: string, listenHost: string): void {
    const stdinIsTty = s.rank === 0 && process.stdin.isTTY === true;
    const stdin = s.rank !== 0 ? 'ignore' : stdinIsTty ? 'pipe' : 'inherit';
    if (this.#o.outputDir !== null) {
      s.outFile = createWriteStream(path.join(this.#o.outputDir, `rank.${s.rank}.out`));
      s.errFile = createWriteStream(path.join(this.#o.outputDir, `rank.${s.rank}.err`));
      s.outFile.on('error', () => undefined);
      s.errFile.on('error', () => undefined);
    }
    s.startedAt = performance.now();
    let child: ChildProcess;
    try {
      // A Node rank dies with mpiexec, even with one killed -9 before the rank joined (parent-death.ts); other
      // programs start directly, so that one that cannot be executed is reported as before.
      if (this.#setpriv === undefined) this.#setpriv = findSetpriv();
      const cmd = this.#command.kind === 'node' ? withParentDeath(this.#command, this.#setpriv) : this.#command;
      child = spawn(cmd.file, [...cmd.args], {
        cwd: this.#o.wdir ?? process.cwd(),
        env: this.#rankEnv(s, url, listenHost),
        detached: true,
        stdio: [stdin, 'pipe', 'pipe'],
      });
    } catch (err) {
      this.#onStartError(s, err as Error);
      return;
    }
    s.child = child;
    s.pid = child.pid ?? null;
    const { stdout, stderr } = child;
    if (stdinIsTty && child.stdin !== null) {
      child.stdin.on('error', () => undefined);
      process.stdin.pipe(child.stdin);
    }
    if (stdout !== null) {
      this.#outSink.addSource(stdout);
      stdout.on('data', (b: Buffer) => {
        s.out.push(b);
        s.outFile?.write(b);
      });
      stdout.on('end', () => s.out.flush());
    }
    if (stderr !== null) {
      this.#errSink.addSource(stderr);
      stderr.on('data', (b: Buffer) => {
        s.err.push(b);
        s.errFile?.write(b);
      });
      stderr.on('end', () => s.err.flush());
    }
    child.on('error', (err) => {
      if (s.pid === null && !s.hasExited) this.#onStartError(s, err);
    });
    child.on('exit', (code, signal) => this.#onExit(s, code, signal));
    child.on('close', () => this.#markClosed(s));
  }

  #onStartError(s: RankState, err: Error): void {
    s.hasExited = true;
    s.endedAt = performance.now();
    s.exitCode = NOT_STARTED_STATUS;
    this.#fail(s, `could not be started: ${err.message}; aborting the job (${this.#o.np} processes)`, `could not be started: ${err.message}`, NOT_STARTED_STATUS);
    this.#markClosed(s);
  }

  #onExit(s: RankState, code: number | null, signal: NodeJS.Signals | null): void {
    s.hasExited = true;
    s.endedAt = performance.now();
    s.exitCode = code;
    s.signal = signal;
    this.#deps.log.debug({ rank: s.rank, pid: s.pid, code, signal }, 'rank exited');
    if (this.#failure === null && this.#classifyExit(s) !== null) {
      this.#settling.push(s);
      this.#settleTimer ??= setTimeout(() => this.#settle(), SETTLE_MS);
    }
    if (!s.isClosed && s.remote === null) {
      const t = setTimeout(() => {
        if (s.isClosed) return;
        this.#killGroup(s, 'SIGKILL');
        s.child?.stdout?.destroy();
        s.child?.stderr?.destroy();
        this.#markClosed(s);
      }, STDIO_GRACE_MS);
      this.#timers.push(t);
    }
    this.#checkDone();
  }

  /** Blames one of the failing exits seen while settling: the first that is not a consequence of a lost peer. */
  #settle(): void {
    if (this.#settleTimer !== null) clearTimeout(this.#settleTimer);
    this.#settleTimer = null;
    const exits = this.#settling;
    this.#settling = [];
    if (this.#failure !== null || exits.length === 0) return;
    const s = exits.find((e) => e.lostPeer === null) ?? exits[0]!;
    const f = this.#classifyExit(s)!;
    const reason = s.lostPeer === null ? f.reason : `${f.reason} after losing its connection to rank ${s.lostPeer}`;
    this.#fail(s, `${reason}; aborting the job (${this.#o.np} processes)`, reason, f.status);
  }

  #classifyExit(s: RankState): { reason: string; status: number } | null {
    if (s.signal !== null) return { reason: `was killed by signal ${s.signal}`, status: 128 + signalNumber(s.signal) };
    if (s.exitCode !== null && s.exitCode !== 0) return { reason: `exited with code ${s.exitCode}`, status: s.exitCode };
    if (s.isFinalized) return null;
    if (s.isInitialized) return { reason: 'exited with code 0 without calling MPI.finalize', status: 1 };
    if (s.hasJoined) return { reason: 'exited with code 0 during MPI.init', status: 1 };
    if (this.#ranks.some((r) => r.hasJoined)) return { reason: 'exited with code 0 before calling MPI.init, while other ranks did', status: 1 };
    return null;
  }

  #onJoined(rank: number): void {
    const s = this.#ranks[rank]!;
    s.hasJoined = true;
    if (this.#failure !== null) return;
    // A rank that already left without joining will never reach the fences the others are about to wait in.
    const gone = this.#ranks.find((r) => r.hasExited && !r.hasJoined && r.exitCode === 0 && r.signal === null);
    if (gone !== undefined) {
      const reason = 'exited with code 0 before calling MPI.init, while other ranks did';
      this.#fail(gone, `${reason}; aborting the job (${this.#o.np} processes)`, reason, 1);
    }
  }

  #onAbort(rank: number, code: number, message: string): void {
    if (this.#failure !== null) return;
    const s = this.#ranks[rank]!;
    const status = code >= 0 && code <= 255 ? code : 1;
    this.#fail(s, `called MPI.abort(${code}): ${message}`, `called MPI.abort(${code}): ${message}`, status);
  }

  /** Records the first failure, stops every process and prints one line. */
  #fail(s: RankState, text: string, reason: string, status: number): void {
    if (this.#failure !== null) return;
    this.#failure = { rank: s.rank, reason, status };
    this.#stopAll();
    const line = `mpiexec: rank ${s.rank} (host ${s.host}, pid ${s.pid ?? '-'}) ${text}\n`;
    if (s.isClosed) {
      this.#errSink.write(line);
      return;
    }
    this.#announcement = new Promise<void>((resolve) => {
      let isWritten = false;
      const write = (): void => {
        if (isWritten) return;
        isWritten = true;
        clearTimeout(t);
        this.#errSink.write(line);
        resolve();
      };
      const t = setTimeout(write, ANNOUNCE_WAIT_MS);
      s.closeWaiters.push(write);
    });
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
    this.#errSink.write(`mpiexec: the job did not finish within --timeout ${sec} s; roll-call of ${this.#o.np} processes:\n`);
    const answers = await this.#server.rollCall(ROLL_CALL_WAIT_MS);
    const lines = rollCallLines(
      this.#ranks.map((s) => ({ rank: s.rank, host: s.host, pid: s.pid, ended: s.hasExited ? describeEnd(s) : null })),
      answers,
    );
    this.#errSink.write(`${lines.join('\n')}\nmpiexec: --timeout ${sec} s fired; ending the job (${this.#o.np} processes)\n`);
    this.#stopAll();
  }

  #killGroup(s: RankState, sig: NodeJS.Signals): void {
    if (s.remote !== null) {
      // The proxy signals the rank's process group on its host (leftover children included).
      s.remote.signal(s.rank, sig);
      return;
    }
    if (s.pid === null) return;
    try {
      process.kill(-s.pid, sig);
    } catch {
      if (!s.hasExited) {
        try {
          s.child?.kill(sig);
        } catch {
          // already gone
        }
      }
    }
  }

  #markClosed(s: RankState): void {
    if (s.isClosed) return;
    s.isClosed = true;
    s.out.flush();
    s.err.flush();
    if (s.child?.stdout) this.#outSink.removeSource(s.child.stdout);
    if (s.child?.stderr) this.#errSink.removeSource(s.child.stderr);
    const waiters = s.closeWaiters;
    s.closeWaiters = [];
    for (const w of waiters) w();
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
      ranks: this.#ranks.map((s) => ({
        rank: s.rank,
        host: s.host,
        pid: s.pid,
        exitCode: s.exitCode,
        signal: s.signal,
        durationMs: s.endedAt === null ? null : Math.round(s.endedAt - s.startedAt),
        initialized: s.isInitialized,
        finalized: s.isFinalized,
        messages: s.report,
      })),
    };
  }
}

function describeEnd(s: RankState): string {
  return s.signal !== null ? `ended (killed by signal ${s.signal})` : `ended (exit code ${s.exitCode ?? '?'})`;
}

function closeFile(f: WriteStream | null): Promise<void> {
  if (f === null) return Promise.resolve();
  return new Promise((resolve) => f.end(() => resolve()));
}
