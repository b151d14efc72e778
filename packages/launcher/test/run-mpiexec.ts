/**
 * Test helper: runs bin/mpiexec.mjs as a real process from the repo root and
 * collects its output and exit status. A hard deadline kills it (and the test
 * then fails on the status), so a hang can never hang the test run.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const MPIEXEC = path.join(REPO_ROOT, 'packages/launcher/bin/mpiexec.mjs');
export const FIXTURES = 'packages/launcher/test/fixtures';
export const PMI_RANK = `${FIXTURES}/pmi-rank.mjs`;

export interface MpiexecResult {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the helper had to kill mpiexec at its deadline. */
  readonly timedOut: boolean;
}

/**
 * The hang deadline when a test gives none. A hang guard, never a timing check: under CI's load (40-70 on
 * 2 cores) a plain job's wall time is mostly start-up. At load 29-41 here mpiexec alone took 4.1-12.9 s
 * to spawn its ranks, and failures.it's SIGINT job took 22.5 s end to end (its roll-call job 20.4-29.3 s,
 * which the former 30 s killed once); at load 70 that is some 45 s. 90 s is twice that and stays within
 * the integration project's 120 s test timeout, so a real hang still fails here, with mpiexec's output.
 */
const DEFAULT_DEADLINE_MS = 90_000;

export interface RunOptions {
  /** Kills mpiexec (SIGKILL) after this long and reports timedOut; DEFAULT_DEADLINE_MS when not given. */
  readonly deadlineMs?: number;
  readonly input?: string;
  /** Called once mpiexec printed `text` on stdout or stderr (e.g. to send it a signal). */
  readonly onOutput?: { readonly text: string; readonly action: (pid: number) => void };
  /** Extra environment for mpiexec. */
  readonly env?: NodeJS.ProcessEnv;
  /** Called with mpiexec's pid right after it started. */
  readonly onStart?: (pid: number) => void;
  /** Reads mpiexec's stdout slowly (a pause of this many ms after every chunk), so that its writes queue up. */
  readonly slowReaderMs?: number;
}

/** Runs `mpiexec ...args` and resolves when it exits. */
export function runMpiexec(args: readonly string[], opts: RunOptions = {}): Promise<MpiexecResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MPIEXEC, ...args], {
      cwd: REPO_ROOT,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '', ...opts.env },
    });
    if (child.pid !== undefined) opts.onStart?.(child.pid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let fired = false;
    const check = (): void => {
      if (opts.onOutput === undefined || fired) return;
      if (stdout.includes(opts.onOutput.text) || stderr.includes(opts.onOutput.text)) {
        fired = true;
        opts.onOutput.action(child.pid!);
      }
    };
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      check();
      const pauseMs = opts.slowReaderMs;
      if (pauseMs !== undefined) {
        child.stdout!.pause();
        setTimeout(() => child.stdout!.resume(), pauseMs);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (s: string) => { stderr += s; check(); });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.deadlineMs ?? DEFAULT_DEADLINE_MS);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    });
  });
}

/** True if a process with this pid still exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
