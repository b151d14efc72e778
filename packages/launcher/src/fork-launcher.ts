/**
 * The rank launcher for this machine (rank-launcher.ts): mpiexec forks each
 * of its ranks itself, as Hydra's fork launcher and PRRTE's odls do.
 *
 * Each rank is the leader of its own process group (detached), so a signal
 * to the group also reaches its children, and a Ctrl-C at the terminal
 * reaches only mpiexec, which forwards it. A Node rank dies with mpiexec,
 * even one killed -9 before the rank joined (parent-death.ts); other
 * programs start directly, so that one that cannot be executed is reported
 * as a start error. Stdin goes to rank 0 (API.md): piped when it is a
 * terminal, inherited otherwise. A rank whose pipes stay open after it
 * exited (held by its children) is killed, with them, after STDIO_GRACE_MS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { JOB_ENV } from '@tsmpi/core/pmi';
import type { LaunchOptions } from './options.ts';
import type { OutputSink } from './output-forwarder.ts';
import { findSetpriv, withParentDeath } from './parent-death.ts';
import { hasGroupMembers } from './process-group.ts';
import type { Placement } from './process-map.ts';
import type { RankCommand } from './rank-command.ts';
import type { HostLaunchLine, RankLauncher, RankLauncherEvents, WireupAddress } from './rank-launcher.ts';
import { findSetting } from './settings-flags.ts';

/** How long a rank's pipes may stay open after it exited (held by its children) before they are killed. */
const STDIO_GRACE_MS = 500;

/** What the fork launcher needs from its job. */
export interface ForkLauncherDeps {
  readonly options: LaunchOptions;
  readonly env: NodeJS.ProcessEnv;
  readonly jobKey: string;
  /** A spawned world's first process number (dynamic processes): a rank's TSMPI_RANK is its placement's rank minus this. Absent: 0. */
  readonly firstRank?: number;
  readonly command: RankCommand;
  /** mpiexec's output; the ranks' pipes are its sources (backpressure). */
  readonly outSink: OutputSink;
  readonly errSink: OutputSink;
}

interface ForkedRank {
  readonly placement: Placement;
  child: ChildProcess | null;
  pid: number | null;
  hasExited: boolean;
  isClosed: boolean;
  graceTimer: NodeJS.Timeout | null;
}

export class ForkLauncher implements RankLauncher {
  readonly placements: readonly Placement[];
  readonly #deps: ForkLauncherDeps;
  readonly #events: RankLauncherEvents;
  readonly #ranks = new Map<number, ForkedRank>();
  /** setpriv when this host has one that sets a parent-death signal, null when it has none; undefined until probed. */
  #setpriv: string | null | undefined = undefined;
  #isStarted = false;

  constructor(placements: readonly Placement[], deps: ForkLauncherDeps, events: RankLauncherEvents) {
    this.placements = placements;
    this.#deps = deps;
    this.#events = events;
    for (const p of placements) this.#ranks.set(p.rank, { placement: p, child: null, pid: null, hasExited: false, isClosed: false, graceTimer: null });
  }

  start(wireup: WireupAddress): void {
    this.#isStarted = true;
    for (const r of this.#ranks.values()) this.#spawn(r, wireup.url, wireup.listenHost);
  }

  signal(rank: number, sig: NodeJS.Signals): void {
    const r = this.#ranks.get(rank);
    if (r === undefined || r.pid === null) return;
    try {
      process.kill(-r.pid, sig);
    } catch {
      if (!r.hasExited) {
        try {
          r.child?.kill(sig);
        } catch {
          // already gone
        }
      }
    }
  }

  abandonUnstarted(): readonly number[] {
    if (this.#isStarted) return [];
    this.#isStarted = true; // a later start() would be too late
    return this.placements.map((p) => p.rank);
  }

  plan(): HostLaunchLine[] {
    const cmd = this.#deps.command;
    const lines: HostLaunchLine[] = [];
    for (const host of new Set(this.placements.map((p) => p.host))) {
      const ranks = this.placements.filter((p) => p.host === host).map((p) => p.rank);
      lines.push({ host, ranks, command: `fork here: ${[cmd.file, ...cmd.args].join(' ')}` });
    }
    return lines;
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    for (const r of this.#ranks.values()) if (r.graceTimer !== null) clearTimeout(r.graceTimer);
  }

  #rankEnv(p: Placement, url: string, listenHost: string): NodeJS.ProcessEnv {
    const o = this.#deps.options;
    const env: NodeJS.ProcessEnv = { ...this.#deps.env };
    for (const [k, v] of o.env) env[k] = v;
    for (const [name, v] of o.settings) {
      const row = findSetting(name);
      if (row !== undefined) env[row.env] = String(v);
    }
    env[JOB_ENV.rank] = String(p.rank - (this.#deps.firstRank ?? 0));
    env[JOB_ENV.size] = String(o.np);
    env[JOB_ENV.localRank] = String(p.localRank);
    env[JOB_ENV.localSize] = String(p.localSize);
    env[JOB_ENV.pmiUrl] = url;
    env[JOB_ENV.jobKey] = this.#deps.jobKey;
    env[JOB_ENV.host] = p.host;
    env[JOB_ENV.listenHost] = listenHost;
    if (o.portRange !== null) env[JOB_ENV.portRange] = `${o.portRange.lo}-${o.portRange.hi}`;
    return env;
  }

  #spawn(r: ForkedRank, url: string, listenHost: string): void {
    const rank = r.placement.rank;
    const stdinIsTty = rank === 0 && process.stdin.isTTY === true;
    const stdin = rank !== 0 ? 'ignore' : stdinIsTty ? 'pipe' : 'inherit';
    let child: ChildProcess;
    try {
      if (this.#setpriv === undefined) this.#setpriv = findSetpriv();
      const command = this.#deps.command;
      const cmd = command.kind === 'node' ? withParentDeath(command, this.#setpriv) : command;
      child = spawn(cmd.file, [...cmd.args], {
        cwd: this.#deps.options.wdir ?? process.cwd(),
        env: this.#rankEnv(r.placement, url, listenHost),
        detached: true,
        stdio: [stdin, 'pipe', 'pipe'],
      });
    } catch (err) {
      this.#startFailed(r, (err as Error).message);
      return;
    }
    r.child = child;
    r.pid = child.pid ?? null;
    if (r.pid !== null) this.#events.onStarted(rank, r.pid);
    const { stdout, stderr } = child;
    if (stdinIsTty && child.stdin !== null) {
      child.stdin.on('error', () => undefined);
      process.stdin.pipe(child.stdin);
    }
    if (stdout !== null) {
      this.#deps.outSink.addSource(stdout);
      stdout.on('data', (b: Buffer) => this.#events.onOutput(rank, 1, b));
      stdout.on('end', () => this.#events.onOutputEnd(rank, 1));
    }
    if (stderr !== null) {
      this.#deps.errSink.addSource(stderr);
      stderr.on('data', (b: Buffer) => this.#events.onOutput(rank, 2, b));
      stderr.on('end', () => this.#events.onOutputEnd(rank, 2));
    }
    child.on('error', (err) => {
      if (r.pid === null && !r.hasExited) this.#startFailed(r, err.message);
    });
    child.on('exit', (code, signal) => this.#onExit(r, code, signal));
    child.on('close', () => this.#markClosed(r));
  }

  #startFailed(r: ForkedRank, message: string): void {
    r.hasExited = true;
    this.#events.onStartError(r.placement.rank, message);
    this.#markClosed(r);
  }

  #onExit(r: ForkedRank, code: number | null, signal: NodeJS.Signals | null): void {
    r.hasExited = true;
    if (r.pid !== null && !hasGroupMembers(r.pid)) r.pid = null; // the number is free: never signal it again
    this.#events.onExit(r.placement.rank, code, signal);
    if (r.isClosed) return;
    r.graceTimer = setTimeout(() => {
      if (r.isClosed) return;
      this.signal(r.placement.rank, 'SIGKILL');
      r.child?.stdout?.destroy();
      r.child?.stderr?.destroy();
      this.#markClosed(r);
    }, STDIO_GRACE_MS);
  }

  #markClosed(r: ForkedRank): void {
    if (r.isClosed) return;
    r.isClosed = true;
    if (r.graceTimer !== null) clearTimeout(r.graceTimer);
    if (r.child?.stdout) this.#deps.outSink.removeSource(r.child.stdout);
    if (r.child?.stderr) this.#deps.errSink.removeSource(r.child.stderr);
    this.#events.onClosed(r.placement.rank);
  }
}
