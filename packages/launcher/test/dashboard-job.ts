/**
 * Test helper for mpiexec --dashboard: starts a real job of fixtures/dashboard-rank.ts (or -threads.ts), waits for
 * the URL line on its stderr, and releases the ranks (they hold still in known MPI calls until then).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES, MPIEXEC, REPO_ROOT } from './run-mpiexec.ts';

export interface DashboardJob {
  /** The URL mpiexec printed, token included. */
  readonly url: URL;
  /** Lets the ranks finish; resolves to mpiexec's exit status and its whole stderr. */
  release(): Promise<{ status: number | null; stderr: string }>;
  /** Sends mpiexec SIGTERM (it ends the ranks); resolves to its exit status and its whole stderr. */
  terminate(): Promise<{ status: number | null; stderr: string }>;
  /** Kills mpiexec (a test that failed early). */
  kill(): void;
}

/** Starts `mpiexec -n np --dashboard ... fixtures/PROGRAM` and resolves once it printed its URL. */
export function startDashboardJob(np: number, program = 'dashboard-rank.ts', extra: readonly string[] = [], deadlineMs = 120_000): Promise<DashboardJob> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-dashboard-'));
  const releaseFile = path.join(dir, 'release');
  const child: ChildProcess = spawn(process.execPath, [MPIEXEC, '-n', String(np), '--dashboard', ...extra, `${FIXTURES}/${program}`, releaseFile], {
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' },
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
    resolve(code);
  }));
  const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
  child.stdout!.resume();
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      const m = /mpiexec: dashboard at (http:\/\/\S+)\n/.exec(stderr);
      if (m !== null) {
        resolve({
          url: new URL(m[1]!),
          release: async () => {
            writeFileSync(releaseFile, '');
            const status = await exited;
            return { status, stderr };
          },
          terminate: async () => {
            child.kill('SIGTERM');
            const status = await exited;
            return { status, stderr };
          },
          kill: () => child.kill('SIGKILL'),
        });
      }
    });
    void exited.then((code) => reject(new Error(`mpiexec exited (${code}) before printing the dashboard's URL: ${stderr}`)));
  });
}
