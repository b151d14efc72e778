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
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { JOB_ENV } from '@tsmpi/core/pmi';
import type { FinalizeReport } from '@tsmpi/core/pmi';
import type { LaunchOptions } from './options.ts';
import { LineForwarder, OutputSink } from './output-forwarder.ts';
import type { Placement } from './process-map.ts';
import { rankCommand, type RankCommand } from './rank-command.ts';
import { writeJobReport, type JobReport } from './report.ts';
import { rollCallLines } from './roll-call.ts';
import { findSetting } from './settings-flags.ts';
import { WireupServer } from './wireup-server.ts';

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
}

interface RankState {
  readonly rank: number;
  readonly host: string;
  readonly localRank: number;
  readonly localSize: number;
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
  readonly #command: RankCommand;
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
    });
  }

  /** Runs the job to its end. @returns mpiexec's exit status */
  async run(): Promise<number> {
    this.#t0 = performance.now();
    const done = new Promise<void>((resolve) => {
      this.#resolveDone = resolve;
    });
    if (this.#o.outputDir !== null) await mkdir(this.#o.outputDir, { recursive: true });
    const url = await this.#server.start('127.0.0.1');
    this.#deps.log.debug({ url, size: this.#o.np }, 'wire-up service listening');
    for (const s of this.#ranks) this.#spawn(s, url);
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
      this.#errSink.write(`mpiexec: received ${sig}; forwarding it to ${this.#o.np} processes\n`);
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

  #newRank(p: Placement): RankState {
    const tag = this.#o.tagOutput ? `[${p.rank}] ` : '';
    const prefix =
      this.#o.timestampOutput ? () => `[${((performance.now() - this.#t0) / 1000).toFixed(3)}] ${tag}` : tag === '' ? null : () => tag;
    return {
      rank: p.rank, host: p.host, localRank: p.localRank, localSize: p.localSize, child: null, pid: null, startedAt: 0, endedAt: null,
      exitCode: null, signal: null, hasExited: false, isClosed: false, hasJoined: false, isInitialized: false,
      isFinalized: false, report: null, lostPeer: null,
      out: new LineForwarder((b) => this.#outSink.write(b), prefix),
      err: new LineForwarder((b) => this.#errSink.write(b), prefix),
      outFile: null, errFile: null, closeWaiters: [],
    };
  }

  #rankEnv(s: RankState, url: string): NodeJS.ProcessEnv {
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
    env[JOB_ENV.listenHost] = '127.0.0.1';
    return env;
  }

  #spawn(s: RankState, url: string): void {
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
      child = spawn(this.#command.file, [...this.#command.args], {
        cwd: this.#o.wdir ?? process.cwd(),
        env: this.#rankEnv(s, url),
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
    if (!s.isClosed) {
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
