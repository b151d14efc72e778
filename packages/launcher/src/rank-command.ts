/**
 * The command line that starts one rank. A TypeScript program that mpiexec
 * compiled for the job (ts-compile.ts: ES modules, every rank on this host)
 * runs in plain Node with --enable-source-maps. Other TypeScript programs (.ts, .mts,
 * .cts, .tsx) run in this Node binary with --conditions=@tsmpi/source (so
 * that `import '@tsmpi/core'` resolves to the sources in the repo) and with
 * tsx loaded from the launcher's own dependencies (so it works wherever the
 * program lives), after bin/ts-rank-preload.mjs, which loads an installed
 * (built) @tsmpi/core and the transport before tsx's hooks exist, so that
 * only the user's own files go through them (issue 38: a .ts rank's start-up). JavaScript programs (.js, .mjs, .cjs) run in plain Node:
 * '@tsmpi/core' resolves by its exports' default condition to the built
 * JavaScript (dist/bundle/, which an installed package ships and `pnpm build`
 * writes in the repo: ADR 0052), so no loader starts, start-up is Node's own and a
 * syntax error is reported by Node with its file and line. Anything else is
 * executed directly.
 *
 * On a host that runs more ranks than it has cores, Node programs also get
 * --single-threaded-gc. V8's parallel and concurrent GC threads then find no
 * idle core: a rank's main thread waits in a scavenge for helpers that queue
 * behind the other ranks' polling. Measured (8-byte allreduce, 4 ranks on 2
 * cores, 4 interleaved pairs): p99 0.56-0.79 ms against 0.87-1.49, the median
 * unchanged; the 8 MiB allreduce and a 2-rank ping-pong did not change
 * (docs/adr/0006). NODE_OPTIONS cannot carry V8 flags like this one, so the
 * setting rankNodeFlags (TSMPI_RANK_NODE_FLAGS) names any others the ranks get.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { binFile } from './bin-files.ts';
import type { Placement } from './process-map.ts';

export const SOURCE_CONDITION = '@tsmpi/source';

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);
const JS_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

/** How a program is started. */
export interface RankCommand {
  readonly file: string;
  readonly args: readonly string[];
  /** 'node' for .ts/.js programs (through tsx or plain), 'exec' for anything else. */
  readonly kind: 'node' | 'exec';
}

/** The module a TypeScript rank runs before tsx (bin/ts-rank-preload.mjs: from src/ and dist/ alike). */
export const TS_RANK_PRELOAD_URL = pathToFileURL(binFile('ts-rank-preload.mjs')).href;

/** The file URL of tsx's loader (tsx's "." export), resolved from this package. */
export function tsxLoaderUrl(): string {
  return import.meta.resolve('tsx');
}

/** The environment variable of core's `transport` setting. */
export const TRANSPORT_ENV = 'TSMPI_TRANSPORT';

/**
 * `env` for the ranks of `program`, with the transport module named by file
 * URL. Core loads its transport by module name and does not depend on one
 * (the transport depends on core's interface: docs/adr/0008); the launcher
 * depends on @tsmpi/transport-tcp, so it resolves it from its own
 * dependencies, which a strict install (pnpm) does not expose to core. A
 * TypeScript rank gets the module as mpiexec itself resolves it (the sources
 * in the repo); a JavaScript rank gets it by the exports' default condition
 * (the built JavaScript), as plain Node resolves '@tsmpi/core' in that rank.
 * A transport the user chose (TSMPI_TRANSPORT) is left as given.
 * @param program - the ranks' program (none: a TypeScript rank's environment)
 */
export function withTransport(env: NodeJS.ProcessEnv, program?: string): NodeJS.ProcessEnv {
  const given = env[TRANSPORT_ENV];
  if (given !== undefined && given !== '') return env;
  const url = program !== undefined && isJsProgram(program) ? pathToFileURL(builtTransportPath()).href : import.meta.resolve('@tsmpi/transport-tcp');
  return { ...env, [TRANSPORT_ENV]: url };
}

/** The built transport module. */
function builtTransportPath(): string {
  return defaultTarget(createRequire(import.meta.url), '@tsmpi/transport-tcp');
}

/**
 * The file a package's exports map gives plain Node (its '.' default
 * condition), read from its package.json: resolving would apply whatever
 * conditions this process runs with (bin/mpiexec.mjs adds the source one).
 */
function defaultTarget(require: NodeJS.Require, pkg: string): string {
  const json = require.resolve(`${pkg}/package.json`);
  const exp = (JSON.parse(readFileSync(json, 'utf8')) as { exports?: { '.'?: { default?: string } } }).exports?.['.']?.default;
  if (exp === undefined) throw new Error(`${json} has no default export`);
  return path.resolve(path.dirname(json), exp);
}

/**
 * Null when `program` can run, or why not: a JavaScript program runs on
 * tsmpi's built JavaScript (the bundles the packages' exports name, ADR 0052),
 * which a checkout of the repo has only after `pnpm build` (an installed
 * package always has it).
 */
export function missingBuild(program: string): string | null {
  if (!isJsProgram(program)) return null;
  const transport = builtTransportPath();
  const missing = [transport, defaultTarget(createRequire(transport), '@tsmpi/core')].find((f) => !existsSync(f));
  return missing === undefined ? null : `${path.basename(program)} is JavaScript, which runs on tsmpi's built JavaScript, and ${missing} is missing: build it with \`pnpm build\` (tsc -b, then scripts/bundle-core.mjs)`;
}

/**
 * A warning when `program` is JavaScript and this launcher runs in a checkout
 * of the repo whose dist/ is older than its sources, or whose bundles are
 * older than dist/ (`npx tsc -b` alone: bin/built-is-current.mjs, which only a
 * checkout has): the program would run on the old build while mpiexec runs
 * the new sources. Null otherwise.
 */
export async function staleBuildWarning(program: string): Promise<string | null> {
  const check = binFile('built-is-current.mjs');
  if (!isJsProgram(program) || !existsSync(check)) return null;
  const { builtIsCurrent } = (await import(pathToFileURL(check).href)) as { builtIsCurrent: () => boolean };
  if (builtIsCurrent()) return null;
  return `${path.basename(program)} is JavaScript and runs on tsmpi's built JavaScript (dist/bundle/), which is older than the sources in this checkout: run \`pnpm build\` (tsc -b, then scripts/bundle-core.mjs) to run what the sources say`;
}

/** True for JavaScript programs, which run in plain Node (no TypeScript loader). */
export function isJsProgram(program: string): boolean {
  return JS_EXTENSIONS.has(path.extname(program).toLowerCase());
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

/**
 * The rankNodeFlags setting as a list of flags.
 * @param text - space-separated flags, or 'none' (or nothing) for none
 * @returns the flags, or an Error naming the setting and the word that is not a flag
 */
export function parseRankNodeFlags(text: string): string[] | Error {
  const words = text.trim() === 'none' ? [] : text.split(/\s+/).filter((w) => w !== '');
  // A word that is not a flag would end Node's options and be run as the program.
  const bad = words.find((w) => !/^--?[A-Za-z]/.test(w));
  if (bad !== undefined) return new Error(`rankNodeFlags (TSMPI_RANK_NODE_FLAGS): '${bad}' is not a flag; expected flags such as --interrupt-budget=4096 separated by spaces, or 'none'`);
  return words;
}

/** Node flags for the ranks of a job placed as `placements` on hosts with `cores` cores: `extra` (rankNodeFlags), then ours. */
export function nodeFlagsFor(placements: readonly Placement[], cores: number, extra: readonly string[] = []): string[] {
  return [...extra, ...(placements.some((p) => p.localSize > cores) ? ['--single-threaded-gc'] : [])];
}

/**
 * The command for one rank; `nodeFlags` go to Node programs only, tsx and the source condition to TypeScript only.
 * @param compiled - the program compiled by mpiexec (ts-compile.ts), run by plain node with its source maps; the
 *   source condition stays for the worker threads it starts on its .ts files (core's util/ts-worker.ts: tsx)
 */
export function rankCommand(program: string, args: readonly string[], tsxUrl: string, nodeFlags: readonly string[] = [], compiled?: string): RankCommand {
  if (isJsProgram(program)) return { file: process.execPath, args: [...nodeFlags, program, ...args], kind: 'node' };
  if (compiled !== undefined && isNodeProgram(program)) {
    return { file: process.execPath, args: [...nodeFlags, `--conditions=${SOURCE_CONDITION}`, '--enable-source-maps', compiled, ...args], kind: 'node' };
  }
  if (isNodeProgram(program)) {
    return { file: process.execPath, args: [...nodeFlags, `--conditions=${SOURCE_CONDITION}`, '--import', TS_RANK_PRELOAD_URL, '--import', tsxUrl, program, ...args], kind: 'node' };
  }
  return { file: program, args, kind: 'exec' };
}
