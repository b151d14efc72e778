/**
 * Runs a real job through mpiexec (node_modules/.bin/mpiexec) and collects
 * its output. Integration tests use it to start programs from ./programs.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtProgram } from './built-programs.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const MPIEXEC = path.join(ROOT, 'node_modules/.bin/mpiexec');
export const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/** A test program by its name in ./programs: its plain-JavaScript build when there is one (built-programs.ts). */
export function program(name: string): string {
  return builtProgram(name) ?? path.join(ROOT, 'packages/core/test/programs', name);
}

export interface JobResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A job's exit and output, for an assertion's message: `name: exit N`, then its stdout and stderr. */
export function jobReport(name: string, r: JobResult): string {
  return `${name}: exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** Runs `mpiexec -n np [flags] program args`; kills it after `killAfterMs` (the test then fails on its output). */
export function runJob(np: number, prog: string, opts: { flags?: string[]; args?: string[]; env?: Record<string, string>; killAfterMs?: number } = {}): Promise<JobResult> {
  const argv = ['-n', String(np), ...(opts.flags ?? []), prog, ...(opts.args ?? [])];
  return runCommand(MPIEXEC, argv, opts.env, opts.killAfterMs ?? 100_000);
}

export function runCommand(cmd: string, argv: string[], env: Record<string, string> = {}, killAfterMs = 100_000): Promise<JobResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, argv, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[run-job] killed after ${killAfterMs} ms: the job hung\n`;
      child.kill('SIGKILL');
    }, killAfterMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Lines of stdout that start with `prefix`. */
export function linesWith(out: string, prefix: string): string[] {
  return out.split('\n').filter((l) => l.startsWith(prefix));
}
