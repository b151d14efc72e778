/**
 * The one srun step that starts a Slurm job's per-node proxies (issue 12):
 * mpiexec's side of it, as remote-host.ts is its side of one ssh session.
 *
 *   start: spawn srun (argv from slurm-srun.ts buildSrunCommand) in its own
 *          process group, environment from srunEnvironment (no job key);
 *          write one LaunchSpec line per node on its stdin (srun --input=all
 *          hands every proxy the same lines; each takes its own) and keep
 *          stdin open: its end tells every proxy that mpiexec is gone, as
 *          with ssh. The key is in no argv and no environment, so neither
 *          `ps` nor `scontrol show step` shows it.
 *   run:   srun's stderr, line by line, feeds SrunOutcome (slurm-srun-output.ts);
 *          its noise (Slurm's own account of a step mpiexec already reports)
 *          is dropped; srun's other lines ("queued and waiting for
 *          resources", errors) go to mpiexec's stderr as they come; a proxy's
 *          own diagnostics are kept, the last one for the message of a host
 *          that never linked (as ssh's stderr is).
 *   exit:  once srun exited and its stderr ended: onExit(code, signal,
 *          verdict). The job then says "Slurm cancelled ..." when the
 *          verdict says so, and srun's status (137/143) is mpiexec's.
 *   close: SIGTERM to srun, which forwards it to the step (Slurm then ends
 *          the proxies, and they their ranks); SIGKILL to its process group
 *          KILL_AFTER_MS later if it is still there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '@tsmpi/core/pmi';
import { SrunOutcome, type SrunVerdict } from './slurm-srun-output.ts';

/** srun gets this long after SIGTERM to end its step before its process group is killed. */
const KILL_AFTER_MS = 5000;

/** How the step ended. */
export interface SrunExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly verdict: SrunVerdict;
  /** The last line srun printed that was not its own noise, for a failure message. */
  readonly lastLine: string | null;
  /**
   * mpiexec itself told srun to end (close()): srun's "Job step aborted" then follows mpiexec's
   * signal, not Slurm's decision, so a 'slurm-cancelled' verdict is not Slurm's doing.
   */
  readonly wasClosedByMpiexec: boolean;
}

export class SrunStep {
  readonly #log: Logger;
  readonly #writeLine: (line: string) => void;
  readonly #outcome = new SrunOutcome();
  #child: ChildProcess | null = null;
  #lastLine: string | null = null;
  #exit: SrunExit | null = null;
  #killTimer: NodeJS.Timeout | null = null;
  #isClosing = false;
  readonly #exited: Promise<SrunExit>;
  #resolveExited: (e: SrunExit) => void = () => undefined;

  /** @param writeLine - where srun's lines that are not noise go (mpiexec's stderr), newline included */
  constructor(log: Logger, writeLine: (line: string) => void) {
    this.#log = log;
    this.#writeLine = writeLine;
    this.#exited = new Promise((resolve) => {
      this.#resolveExited = resolve;
    });
  }

  /** Resolves once srun exited and its output ended. */
  get exited(): Promise<SrunExit> {
    return this.#exited;
  }

  get isRunning(): boolean {
    return this.#child !== null && this.#exit === null;
  }

  /** srun runs and has said that Slurm is ending its step (SrunOutcome.isSlurmEnding). */
  get isSlurmEnding(): boolean {
    return this.isRunning && this.#outcome.isSlurmEnding;
  }

  /**
   * Starts srun and writes `specLines` (one per node, each with the job key) on its stdin.
   * @param onExit called once, after srun exited (also when it could not be started: code null)
   */
  start(argv: readonly string[], env: NodeJS.ProcessEnv, specLines: readonly string[], onExit: (e: SrunExit) => void): void {
    let child: ChildProcess;
    try {
      child = spawn(argv[0]!, argv.slice(1), { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      this.#finish({ code: null, signal: null, verdict: { kind: 'none' }, lastLine: `cannot run ${argv[0]}: ${(err as Error).message}`, wasClosedByMpiexec: false }, onExit);
      return;
    }
    this.#child = child;
    child.stdin!.on('error', () => undefined);
    child.stdin!.write(specLines.map((l) => `${l}\n`).join(''));
    let pending = '';
    const onText = (b: Buffer): void => {
      pending += b.toString('utf8');
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        this.#line(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
    };
    // The proxies write nothing on stdout; anything there is a diagnostic too.
    child.stdout!.on('data', onText);
    child.stderr!.on('data', onText);
    let spawnError: string | null = null;
    child.on('error', (err) => {
      spawnError = `cannot run ${argv[0]}: ${err.message}`;
    });
    child.on('close', (code, signal) => {
      if (pending !== '') this.#line(pending);
      pending = '';
      this.#log.debug({ code, signal }, 'srun exited');
      this.#finish({ code, signal, verdict: this.#outcome.verdict(), lastLine: spawnError ?? this.#lastLine, wasClosedByMpiexec: this.#isClosing }, onExit);
    });
  }

  /** Asks srun to end its step (SIGTERM, then SIGKILL to its process group). */
  close(): void {
    const pid = this.#child?.pid;
    if (pid === undefined || this.#exit !== null) return;
    this.#isClosing = true;
    try {
      this.#child!.stdin?.destroy();
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    this.#killTimer ??= setTimeout(() => this.killNow(), KILL_AFTER_MS);
  }

  /** SIGKILL to srun's process group, synchronously (mpiexec's own exit). */
  killNow(): void {
    const pid = this.#child?.pid;
    if (pid === undefined || this.#exit !== null) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }

  #line(text: string): void {
    const c = this.#outcome.push(text);
    if (c.kind === 'noise' || c.kind === 'terminating' || c.kind === 'aborted' || c.kind === 'cancelled' || c.kind === 'failed' || c.kind === 'task-ended') {
      this.#log.debug({ line: text, kind: c.kind }, 'srun');
      return;
    }
    if (text.trim() === '') return;
    this.#lastLine = text.trim();
    // srun's own words (queued, waiting for resources, errors) are shown; a proxy's diagnostics are
    // kept for the message of a host lost (as ssh's stderr is), since mpiexec reports what they say.
    if (/^(?:srun|salloc|slurmstepd)\b/.test(text)) this.#writeLine(`${text}\n`);
    else this.#log.debug({ line: text }, 'proxy diagnostic');
  }

  #finish(e: SrunExit, onExit: (e: SrunExit) => void): void {
    if (this.#exit !== null) return;
    this.#exit = e;
    if (this.#killTimer !== null) clearTimeout(this.#killTimer);
    onExit(e);
    this.#resolveExited(e);
  }
}
