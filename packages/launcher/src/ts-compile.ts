/**
 * A TypeScript program compiled once per job (issue 38, docs/adr/0051-ts-compile-once.md).
 * Under tsx every rank loaded every module through a module hook, which Node 20 runs on a
 * thread of its own (every load crosses to it): in the repository ~200 of core's sources per
 * rank. Here mpiexec bundles the program, the tsmpi modules it imports (core's sources in
 * the repository, the built package once installed) and the job's transport with esbuild,
 * into plain ES modules that every rank runs with plain node and no hooks.
 *
 * - Same resolution as before: the program's conditions (the source one in the repository);
 *   tsconfig `paths` (esbuild reads them, as tsx does). A package of node_modules other than
 *   tsmpi's stays outside the bundle and is imported by the file URL it resolves to from its
 *   importer, so it loads exactly as it did, wherever the output lives.
 * - Each bundled file keeps its own `import.meta.url` (`dirname`, `filename`, `resolve`;
 *   import-meta.ts, by esbuild's `define`: strings and comments stay as written): a program's
 *   `new URL('./worker.ts', import.meta.url)` and core's own paths (util/user-stack.ts) name the
 *   original files.
 * - Source maps (ranks run with --enable-source-maps): stacks name the .ts file and line.
 * - The cache: one directory per program under the project's node_modules/.cache/tsmpi/
 *   (else $XDG_CACHE_HOME/tsmpi or ~/.cache/tsmpi), 0700, files 0600, checked to be ours
 *   and private before use. An entry records every input file's SHA-256; a job whose inputs
 *   all hash the same reuses the output without loading esbuild. An output a newer compile
 *   replaced stays a day (a running job may still import its lazy chunks), then goes.
 * - CommonJS programs (.cts, or .ts in a package without "type": "module") are not compiled:
 *   they run under tsx as before (rank-command.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Loader, Message, PluginBuild } from 'esbuild';
import { IMPORT_META_DEFINE, setupImportMeta, withOwnImportMeta } from './import-meta.ts';
import { programFormat } from './module-format.ts';

export { programFormat };

/** Bumped when the output for the same inputs changes (options, plugin). */
const COMPILE_VERSION = 5;

/** What a compiled job runs. */
export interface CompiledProgram {
  /** The program's entry module (run by plain node). */
  readonly file: string;
  /** The transport's entry module, as a file URL (TSMPI_TRANSPORT), or null when the user named one. */
  readonly transportUrl: string | null;
  /** True when this job reused a cached output. */
  readonly cached: boolean;
}

/** A compile error (the program's syntax, an import that does not resolve), in one line. */
export class CompileError extends Error {}

/** The cache folder for `program`: its project's node_modules/.cache/tsmpi, else the user's cache. */
export function cacheRoot(program: string, env: NodeJS.ProcessEnv): string {
  for (let dir = path.dirname(program); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'node_modules'))) return path.join(dir, 'node_modules', '.cache', 'tsmpi');
    if (path.dirname(dir) === dir) break;
  }
  const xdg = env['XDG_CACHE_HOME'];
  return path.join(xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache'), 'tsmpi');
}

/**
 * Makes `dir` (and missing parents) and proves it private: a directory, not a link, owned by
 * this user, no access for group or others (a wider mode of our own is narrowed).
 * @throws CompileError when another user owns it or it is not a directory
 */
export function privateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new CompileError(`the compile cache ${dir} is not a directory (a link or a file); remove it`);
  if (uid !== undefined && st.uid !== uid) throw new CompileError(`the compile cache ${dir} belongs to another user (uid ${st.uid}); remove it or set XDG_CACHE_HOME`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** SHA-256 of a file's bytes, or null when it cannot be read. */
function fileHash(file: string): string | null {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return null;
  }
}

/** A cache entry: the inputs' hashes and the outputs they gave. */
interface Manifest {
  /** The program compiled (a manifest whose program is gone is dropped: pruneOutputs). */
  readonly program: string;
  readonly inputs: Record<string, string>;
  readonly externals: readonly string[];
  readonly entry: string;
  readonly transport: string | null;
}

const TRANSPORT_ENTRY = 'tsmpi-transport';

/**
 * The program compiled for plain node, from the cache when every input is unchanged.
 * @param program - the absolute path of an ES-module TypeScript program
 * @param transport - the transport module mpiexec would hand the ranks (a file URL), or null when the user named one
 * @param conditions - the export conditions the program resolves with (the source one)
 * @throws CompileError with a one-line message naming file:line
 */
export async function compileProgram(program: string, transport: string | null, conditions: readonly string[], env: NodeJS.ProcessEnv): Promise<CompiledProgram> {
  const root = cacheRoot(program, env);
  privateDirectory(root);
  const settings = JSON.stringify({ COMPILE_VERSION, node: process.version, program, transport, conditions, tsconfig: nearestTsconfigHash(program) });
  const key = createHash('sha256').update(settings).digest('hex').slice(0, 32);
  const manifestFile = path.join(root, `${key}.json`);
  const hit = readHit(manifestFile, root);
  if (hit !== null) return { ...hit, cached: true };
  // Loaded only to compile: a job whose inputs are all unchanged never loads it.
  const { default: esbuild } = await import('esbuild');
  const inputs: Record<string, string> = {};
  const externals = new Set<string>();
  const entryName = path.basename(program).replace(/\.[^.]+$/, '');
  const entryPoints: Record<string, string> = { [entryName]: program };
  if (transport !== null) entryPoints[TRANSPORT_ENTRY] = fileURLToPath(transport);
  // Written where it will stay: the source maps name the inputs relative to this folder.
  const outDir = path.join(root, `${key}-${randomBytes(6).toString('hex')}`);
  mkdirSync(outDir, { mode: 0o700 });
  let result;
  try {
    result = await esbuild.build({
      entryPoints, bundle: true, splitting: true, format: 'esm', platform: 'node', target: `node${process.versions.node}`,
      conditions: [...conditions], outdir: outDir, outExtension: { '.js': '.mjs' }, chunkNames: 'chunk-[hash]', entryNames: '[name]',
      sourcemap: 'linked', sourcesContent: false, keepNames: true, write: false, logLevel: 'silent', absWorkingDir: path.dirname(program),
      define: IMPORT_META_DEFINE,
      // A program that calls require() (createRequire or not) finds it, as under tsx's ES module output;
      // process.argv[1] names the program, not this output, so the usual "am I the main module?"
      // test (import.meta.url against argv[1]) holds as it did under tsx. Every output file sets it
      // (a chunk may run before the entry), always to the same path.
      banner: { js: `import { createRequire as __tsmpiCreateRequire } from 'node:module'; const require = __tsmpiCreateRequire(import.meta.url); process.argv[1] = ${JSON.stringify(program)};` },
      plugins: [{ name: 'tsmpi-inputs', setup: (build: PluginBuild) => setupPlugin(build, inputs, externals) }],
    });
  } catch (e) {
    rmSync(outDir, { recursive: true, force: true });
    throw new CompileError(compileMessage((e as { errors?: readonly Message[] }).errors ?? [], e, path.dirname(program)));
  }
  const outputs = new Map<string, string>();
  for (const f of result.outputFiles) {
    const name = path.basename(f.path);
    const target = path.join(outDir, name);
    writeFileSync(target, f.contents, { mode: 0o600, flag: 'wx' });
    outputs.set(name, target);
  }
  const entry = outputs.get(`${entryName}.mjs`)!;
  const transportOut = transport !== null ? pathToFileURL(outputs.get(`${TRANSPORT_ENTRY}.mjs`)!).href : null;
  const manifest: Manifest = { program, inputs, externals: [...externals], entry, transport: transportOut };
  const tmp = `${manifestFile}.${randomBytes(6).toString('hex')}`;
  writeFileSync(tmp, JSON.stringify(manifest), { mode: 0o600, flag: 'wx' });
  renameSync(tmp, manifestFile);
  pruneOutputs(root);
  return { file: entry, transportUrl: transportOut, cached: false };
}

/** How long an output no manifest names is kept: a job started from it may still import its lazy chunks (core's File, trace, RMA parts). */
const UNREFERENCED_KEEP_MS = 24 * 3600_000;

/**
 * Drops the manifests of programs that no longer exist (a test's temporary program), then removes
 * the output folders that no manifest names and that are older than a day (the outputs a changed
 * or removed program left).
 */
function pruneOutputs(root: string): void {
  const named = new Set<string>();
  for (const e of readdirSync(root).filter((f) => /^[0-9a-f]{32}\.json$/.test(f))) {
    const m = readManifest(path.join(root, e));
    if (m !== null && typeof m.program === 'string' && !existsSync(m.program)) rmSync(path.join(root, e), { force: true });
    else if (m !== null) named.add(path.dirname(m.entry));
  }
  const entries = readdirSync(root);
  const now = Date.now();
  for (const e of entries) {
    const dir = path.join(root, e);
    if (!/^[0-9a-f]{32}-[0-9a-f]{12}$/.test(e) || named.has(dir)) continue;
    try {
      if (now - lstatSync(dir).mtimeMs > UNREFERENCED_KEEP_MS) rmSync(dir, { recursive: true, force: true });
    } catch {
      // another job removed it first
    }
  }
}

/** The manifest in `file`, or null. */
function readManifest(file: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/** A cached output whose every input hashes as recorded and whose files are all there; null otherwise. */
function readHit(manifestFile: string, root: string): Omit<CompiledProgram, 'cached'> | null {
  const m = readManifest(manifestFile);
  if (m === null || !m.entry.startsWith(root + path.sep) || !existsSync(m.entry)) return null;
  if (m.transport !== null && !existsSync(fileURLToPath(m.transport))) return null;
  for (const [file, hash] of Object.entries(m.inputs)) if (fileHash(file) !== hash) return null;
  for (const file of m.externals) if (!existsSync(file)) return null;
  return { file: m.entry, transportUrl: m.transport };
}

/** The hash of the tsconfig.json nearest the program (its `paths` change resolution), or null. */
function nearestTsconfigHash(program: string): string | null {
  for (let dir = path.dirname(program); ; dir = path.dirname(dir)) {
    const f = path.join(dir, 'tsconfig.json');
    if (existsSync(f)) return fileHash(f);
    if (path.dirname(dir) === dir) return null;
  }
}

const INNER = Symbol('tsmpi-inner-resolve');
const LOADERS: Record<string, Loader> = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.js': 'js', '.mjs': 'js', '.cjs': 'js', '.jsx': 'jsx', '.json': 'json' };

/** True for a file bundled: the program's own (outside node_modules) and tsmpi's packages. */
function isBundled(file: string): boolean {
  const parts = file.split(path.sep);
  const nm = parts.lastIndexOf('node_modules');
  return nm < 0 || parts[nm + 1] === '@tsmpi';
}

/** Bare imports: bundled, or external by the file URL they resolve to; every loaded file hashed and given its own import.meta (import-meta.ts). */
function setupPlugin(build: PluginBuild, inputs: Record<string, string>, externals: Set<string>): void {
  /** Each loaded module's text, for its import.meta's virtual module (import-meta.ts). */
  const sources = new Map<string, string>();
  // First: its callbacks claim the virtual modules' paths before the general ones below see them.
  setupImportMeta(build, (file) => sources.get(file) ?? '', async (spec, importer) => {
    const r = await build.resolve(spec, { kind: 'import-statement', resolveDir: path.dirname(importer), importer, pluginData: INNER });
    return r.errors.length === 0 && !r.external ? r.path : null;
  });
  build.onResolve({ filter: /^[^./]/ }, async (a) => {
    if (a.pluginData === INNER) return undefined;
    if (isBuiltin(a.path)) return { path: a.path, external: true };
    const r = await build.resolve(a.path, { kind: a.kind, resolveDir: a.resolveDir, importer: a.importer, pluginData: INNER });
    if (r.errors.length > 0) return { errors: r.errors };
    if (r.external || isBundled(r.path)) return r.external ? { path: r.path, external: true } : { path: r.path };
    externals.add(r.path);
    return { path: pathToFileURL(r.path).href, external: true };
  });
  build.onLoad({ filter: /.*/ }, async (a) => {
    const loader = LOADERS[path.extname(a.path).toLowerCase()];
    const bytes = readFileSync(a.path);
    inputs[a.path] = createHash('sha256').update(bytes).digest('hex');
    if (loader === undefined) return undefined;
    const source = bytes.toString('utf8');
    const contents = withOwnImportMeta(source, a.path);
    if (contents !== source) sources.set(a.path, source);
    return { contents, loader, resolveDir: path.dirname(a.path) };
  });
}

/** esbuild's first error as `file:line:column: text` (relative to the working directory when inside it). */
function compileMessage(errors: readonly Message[], e: unknown, workDir: string): string {
  const first = errors[0];
  if (first === undefined) return e instanceof Error ? e.message.split('\n')[0]! : String(e);
  if (first.location === null) return first.text;
  const file = path.resolve(workDir, first.location.file);
  const rel = path.relative(process.cwd(), file);
  const shown = rel.startsWith('..') || path.isAbsolute(rel) ? file : rel;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more error${errors.length > 2 ? 's' : ''})` : '';
  return `${shown}:${first.location.line}:${first.location.column + 1}: ${first.text}${more}`;
}

/**
 * What mpiexec runs for `program`: null (run it as before) unless it is an ES-module
 * TypeScript program whose ranks all start on this host (ranks on other hosts, and the
 * processes a job spawns, run under tsx: their hosts may not see this host's cache).
 * @param transport - the transport mpiexec hands a TypeScript rank (rank-command.ts withTransport)
 * @param userTransport - true when the user named the transport (TSMPI_TRANSPORT): it is not compiled
 * @returns the compiled program, or an Error whose message is one line (file:line for a syntax error)
 */
export async function compiledForJob(program: string, allHere: boolean, transport: string, userTransport: boolean, conditions: readonly string[], env: NodeJS.ProcessEnv): Promise<CompiledProgram | Error | null> {
  if (!/\.(ts|mts|tsx)$/i.test(program) || !allHere || programFormat(program) !== 'esm') return null;
  // A transport given as a TypeScript file is compiled with the program; a JavaScript one the user named is left to load itself.
  const compiledTransport = userTransport && !/\.(ts|mts)$/i.test(transport) ? null : transport;
  try {
    return await compileProgram(program, compiledTransport, conditions, env);
  } catch (e) {
    if (e instanceof CompileError) return new Error(`cannot compile ${path.basename(program)}: ${e.message}`);
    throw e;
  }
}

/**
 * For --dry-run (which compiles nothing): where the compiled program of a job would be, with the
 * same rules as compiledForJob, as a path whose folder is shown as `<KEY>`; null when it would run under tsx.
 */
export function compiledPathPreview(program: string, allHere: boolean, env: NodeJS.ProcessEnv): string | null {
  if (!/\.(ts|mts|tsx)$/i.test(program) || !allHere || programFormat(program) !== 'esm') return null;
  return path.join(cacheRoot(program, env), '<KEY>', `${path.basename(program).replace(/\.[^.]+$/, '')}.mjs`);
}
