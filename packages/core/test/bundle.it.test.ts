// testlist: bundle np 2 and 3.
// ADR 0052 (issue 38): the JavaScript that core's and the transport's exports name is their bundle
// (dist/bundle/, scripts/bundle-core.mjs). A JavaScript rank that mpiexec starts runs on it, and what
// core loads at first use (a window's origin side, File's implementation) loads from it too; the
// bundle holds what importing the sources holds (nothing lazy made eager), and every exported
// function, class and method keeps the name it has in dist/. The integration project's global setup
// writes the bundles when `npx tsc -b` left them older than dist/; when dist/ itself is older than
// the sources, the programs run as TypeScript on the sources and the bundle checks do not apply.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtProgram } from './built-programs.ts';
import { modulesLoadedBy } from './modules-loaded.ts';
import { jobReport, program, runJob, ROOT } from './run-job.ts';

const CORE = path.join(ROOT, 'packages/core');
const BUNDLE = path.join(CORE, 'dist/bundle');
const BUILT = builtProgram('bundle-rank.ts') !== null;

/** The files of the bundle that loading `entry` loads: its static imports, transitively. */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    const text = fs.readFileSync(path.join(BUNDLE, f), 'utf8');
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s*"\.\/([^"]+)"|^import\s*"\.\/([^"]+)"/gm)) todo.push(m[1] ?? m[2]!);
  }
  return [...seen];
}

/** The dist/ modules whose code `files` hold (esbuild marks each with a `// packages/core/dist/...` line). */
function modulesIn(files: string[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    for (const m of fs.readFileSync(path.join(BUNDLE, f), 'utf8').matchAll(/^\/\/ packages\/core\/dist\/(\S+)\.js$/gm)) out.add(m[1]!);
  }
  return [...out].sort();
}

describe('core\'s bundle in the ranks (ADR 0052)', () => {
  it.each([2, 3])('runs a job of %i on one build of core, its lazily loaded parts included', async (np) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-bundle-rank-'));
    try {
      const r = await runJob(np, program('bundle-rank.ts'), { env: { BUNDLE_RANK_DIR: dir }, killAfterMs: 90_000 });
      const report = jobReport('bundle-rank', r);
      expect(r.code, report).toBe(0);
      expect(r.stdout.split('\n').filter((l) => l === 'bundle-rank OK'), report).toHaveLength(np);
      const files = new Set(r.stdout.split('\n').filter((l) => /^bundle-rank \d+ /.test(l)).map((l) => l.split(' ')[2]));
      const expected = BUILT ? path.join(BUNDLE, 'index.js') : path.join(CORE, 'src/index.ts');
      expect([...files], report).toEqual([expected]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('what importing the bundle loads (ADR 0052)', () => {
  it.runIf(BUILT)('is what importing the sources loads: bundling made nothing that loads at first use load at import', () => {
    const src = `file://${path.join(CORE, 'src')}/`;
    const fromSources = modulesLoadedBy(CORE, '@tsmpi/core').filter((u) => u.startsWith(src)).map((u) => u.slice(src.length, -'.ts'.length)).sort();
    const fromBundle = modulesIn(staticClosure('index.js'));
    expect(fromBundle).toContain('api/lifecycle');
    expect(fromBundle).not.toContain('api/file-open');
    // The same modules, less the folders' index files, which only re-export and leave no code in a bundle.
    expect(fromBundle).toEqual(fromSources.filter((m) => m !== 'index' && !m.endsWith('/index')));
  }, 90_000);
});

/** The `.name` of every exported function and class of core, and of their methods, as plain Node imports `specifier`. */
function exportedNames(specifier: string): string[] {
  const script = [
    `const MPI = await import(${JSON.stringify(specifier)});`,
    'const out = [];',
    "for (const [k, v] of Object.entries(MPI)) if (typeof v === 'function') {",
    '  out.push(`${k}=${v.name}`);',
    "  for (const o of [v, v.prototype ?? {}]) for (const m of Object.getOwnPropertyNames(o)) { const d = Object.getOwnPropertyDescriptor(o, m); if (typeof d?.value === 'function') out.push(`${k}.${m}=${d.value.name}`); }",
    '}',
    "console.log(import.meta.resolve('@tsmpi/core'));",
    "console.log(out.sort().join('\\n'));",
  ].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: CORE, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim().split('\n');
}

describe('names in the bundle (ADR 0052)', () => {
  it.runIf(BUILT)('gives every export and method the name it has in dist/ (bundling renames classes; keepNames restores them)', () => {
    const [bundleUrl, ...bundled] = exportedNames('@tsmpi/core');
    const [, ...built] = exportedNames(path.join(CORE, 'dist/index.js'));
    expect(bundleUrl).toMatch(/\/dist\/bundle\/index\.js$/);
    expect(bundled).toContain('Request=Request');
    expect(bundled).toContain('Group=Group');
    expect(bundled.length).toBeGreaterThan(500);
    expect(bundled).toEqual(built);
  }, 90_000);
});
