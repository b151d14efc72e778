#!/usr/bin/env node
// Writes packages/core/dist/bundle/ and packages/transport-tcp/dist/bundle/: the JavaScript that
// the two packages' exports name (ADR 0052, issue 38); and packages/launcher/dist/bundle/, which
// mpiexec and the launcher's other commands run (ADR 0062). It is dist/ (from `tsc -b`) bundled into a
// few files: Node 20 pays per module (resolve, read, compile, a module record), so a rank that
// imports the bundle holds ~6 MB less resident memory and spends ~80 ms less CPU than one that
// imports dist/'s ~190 modules. dist/'s modules stay: the bundle is built from them, and their
// .d.ts files are the packages' types.
//
// `pnpm build` (tsc -b, then this), `pnpm test`, scripts/pack-tarballs.mjs and each package's
// prepack run it; the integration tests' global setup runs it when a bundle is older than its
// dist/.tsbuildinfo. Without --if-stale it always writes; with it, only a bundle older than its
// package's dist/.tsbuildinfo (which `tsc -b` rewrites whenever it rebuilds dist/) or than this
// script is written.
//
// Entry points: core's public entries (., ./transport, ./transport/kit, ./pmi), which share chunks
// so that a process that loads several of them holds one copy of each module, and the engine
// worker, which device/engines.ts starts by a URL beside its own module. Dynamic imports (file
// I/O, windows' sides, the trace recorder, PMI) stay separate chunks, loaded at first use as in dist/.
// msgpackr and pino stay external (CommonJS with optional native parts: resolved at run time).
// The transport's bundle leaves @tsmpi/core external: it must be the instance core loads.
//
// Each bundle is written beside dist/ into a fresh directory and renamed into place (the old one
// renamed away first), so a rank never loads a half-written one.
// esbuild is tsx's compiler, a dependency of core already: resolved through tsx, no new package.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fromCore = createRequire(path.join(root, 'packages/core/package.json'));
const esbuild = createRequire(fromCore.resolve('tsx/package.json'))('esbuild');
const ifStale = process.argv.includes('--if-stale');

/** What each package's bundle holds: its entries (output name -> file of dist/) and what stays external. */
const BUNDLES = {
  core: {
    entries: { index: 'index.js', transport: 'transport/index.js', 'transport-kit': 'transport/kit.js', pmi: 'pmi/index.js', 'engine-worker': 'device/engine-worker.js' },
    external: ['msgpackr', 'pino'],
  },
  'transport-tcp': { entries: { index: 'index.js', host: 'host.js' }, external: ['@tsmpi/core', '@tsmpi/core/*'] },
  // The launcher's commands (bin/entry.mjs) load its bundle (ADR 0062): dist/'s ~60 modules and ws's
  // ~10 in a few files. ws is CommonJS, bundled through the `require` the banner defines; what has
  // native parts or loads at first use (esbuild, tsx, pino, msgpackr, ws's optional helpers) stays
  // external, and @tsmpi/* are those packages' own bundles.
  launcher: {
    entries: { index: 'index.js', cli: 'cli.js', proxy: 'proxy.js', 'nameserver-main': 'nameserver-main.js' },
    external: ['@tsmpi/*', 'esbuild', 'tsx', 'tsx/*', 'pino', 'msgpackr', 'bufferutil', 'utf-8-validate'],
    requireBanner: true,
  },
};

/** Gives a bundle's modules the `require` that esbuild's CommonJS shims call. */
const REQUIRE_BANNER = "import { createRequire as __bundleCreateRequire } from 'node:module'; const require = __bundleCreateRequire(import.meta.url);";

/**
 * keepNames (below) writes `__name(f, "f");` after every function and class declaration; where the
 * name is the declaration's own, the call changes nothing, yet each one gives a function an own
 * `name` property: 845 of them cost an import ~0.4 MB of heap (issue 38). They are blanked (the
 * line stays, so the source maps still hold); calls that restore a renamed one's name stay.
 */
const NO_OP_NAME = /^([ \t]*)__name\(([A-Za-z_$][\w$]*), "([A-Za-z_$][\w$]*)"\);$/gm;

function dropNoOpNames(dir) {
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.js'))) {
    const file = path.join(dir, f);
    const text = readFileSync(file, 'utf8');
    const trimmed = text.replace(NO_OP_NAME, (line, indent, ident, name) => (ident === name ? indent : line));
    if (trimmed !== text) writeFileSync(file, trimmed);
  }
}

function mtimeMs(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** Bundles `pkg`'s dist/ into its dist/bundle/, replacing it whole. */
async function bundle(pkg, { entries, external, requireBanner = false }) {
  const dist = path.join(root, 'packages', pkg, 'dist');
  const out = path.join(dist, 'bundle');
  if (ifStale) {
    // Current: every entry written after dist/ was rebuilt and after this script last changed.
    const written = Object.keys(entries).map((name) => mtimeMs(path.join(out, `${name}.js`)));
    const since = Math.max(mtimeMs(path.join(dist, '.tsbuildinfo')) ?? 0, mtimeMs(fileURLToPath(import.meta.url)) ?? 0);
    if (written.every((t) => t !== null && t >= since)) return;
  }
  const fresh = path.join(dist, `bundle.${process.pid}.tmp`);
  const old = path.join(dist, `bundle.${process.pid}.old`);
  try {
    await esbuild.build({
      entryPoints: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, path.join(dist, file)])),
      outdir: fresh,
      absWorkingDir: root, // the same output (its `// packages/...` module lines) from any working directory (prepack runs in the package)
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external,
      banner: requireBanner ? { js: REQUIRE_BANNER } : {},
      sourcemap: true, // follows dist's own maps back to src/
      // Bundling renames classes (a top-level class that names itself becomes `var Request = class
      // _Request`; namesakes in two modules become Group and Group2): keepNames restores each
      // function's and class's `.name`, which users, stack traces and the profile hooks read.
      keepNames: true,
      legalComments: 'none',
      logLevel: 'warning',
    });
    dropNoOpNames(fresh);
    rmSync(old, { recursive: true, force: true });
    try {
      renameSync(out, old);
    } catch {
      // no bundle yet
    }
    renameSync(fresh, out);
    rmSync(old, { recursive: true, force: true });
  } catch (e) {
    rmSync(fresh, { recursive: true, force: true });
    console.error(`bundle-core: ${pkg}: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}

for (const [pkg, spec] of Object.entries(BUNDLES)) await bundle(pkg, spec);
