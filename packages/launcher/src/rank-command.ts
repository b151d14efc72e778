/**
 * The command line that starts one rank. TypeScript and JavaScript programs
 * run in this Node binary with --conditions=@tsmpi/source (so that
 * `import '@tsmpi/core'` resolves to the sources in the repo) and with tsx
 * loaded from the launcher's own dependencies (so it works wherever the
 * program lives). JavaScript gets tsx too: from source, '@tsmpi/core'
 * resolves to .ts files, which plain Node 20 cannot load. Anything else is
 * executed directly.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export const SOURCE_CONDITION = '@tsmpi/source';

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);
const JS_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

/** How a program is started. */
export interface RankCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** 'node' for .ts/.js programs, 'exec' for anything else. */
  readonly kind: 'node' | 'exec';
}

/** The file URL of tsx's loader (tsx's "." export), resolved from this package. */
export function tsxLoaderUrl(): string {
  return import.meta.resolve('tsx');
}

/** True for programs that run in Node. */
export function isNodeProgram(program: string): boolean {
  const ext = path.extname(program).toLowerCase();
  return TS_EXTENSIONS.has(ext) || JS_EXTENSIONS.has(ext);
}

/**
 * Finds the program file: relative to mpiexec's working directory, then to --wdir.
 * @returns the absolute path, or null if a Node program is not found (exec programs may be on PATH)
 */
export function resolveProgram(program: string, wdir: string | null): string | null {
  const candidates = [path.resolve(program)];
  if (wdir !== null) candidates.push(path.resolve(wdir, program));
  for (const c of candidates) if (existsSync(c)) return c;
  if (isNodeProgram(program) || program.includes('/')) return null;
  return program; // a command name looked up on PATH
}

/** The command for one rank. */
export function rankCommand(program: string, args: readonly string[], tsxUrl: string): RankCommand {
  if (isNodeProgram(program)) {
    return { file: process.execPath, args: [`--conditions=${SOURCE_CONDITION}`, '--import', tsxUrl, program, ...args], kind: 'node' };
  }
  return { file: program, args, kind: 'exec' };
}
