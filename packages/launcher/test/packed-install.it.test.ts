/**
 * The packages as a user gets them: build (tsc -b), `pnpm pack` core,
 * transport-tcp and launcher, install the three tarballs with plain npm into
 * an empty project outside the repository (third-party dependencies from the
 * registry), then run jobs there through `npx mpiexec`: a TypeScript program
 * with no build step, a JavaScript one, an MPI.Worker on a .ts file, and
 * `tsc --noEmit` (NodeNext) over them, the examples @tsmpi/core ships, and a
 * stack through the library under `node --enable-source-maps` (its frames name
 * .ts files the package holds). publint and @arethetypeswrong/cli check the
 * tarballs. One install serves every case; the temporary directory
 * is removed afterwards. Without an npm registry that answers, the tests are
 * skipped with a line saying so.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './run-mpiexec.ts';

const PACKAGES = ['core', 'transport-tcp', 'launcher'] as const;
const FIXTURE = path.join(REPO_ROOT, 'packages/launcher/test/fixtures/user-project');
const BIN = path.join(REPO_ROOT, 'node_modules/.bin');
const SETUP_MS = 600_000;

/** The temporary directory (tarballs/, project/), made by setUp and removed after the tests. */
let tmp = '';
let project = '';
const tarballs: string[] = [];

/** The environment without what the test runner, pnpm or a job set (a user's shell has none of it). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // npm_* (lower case) is what a package manager sets for the script it runs; NPM_CONFIG_* a user set stays.
    if (/^(npm_|TSMPI_|VITEST|PNPM_|NODE_OPTIONS$|NODE_ENV$)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, NPM_CONFIG_LOGLEVEL: 'error', NPM_CONFIG_FUND: 'false', NPM_CONFIG_AUDIT: 'false', NPM_CONFIG_UPDATE_NOTIFIER: 'false' };
}

function run(cmd: string, args: readonly string[], cwd: string, timeoutMs = 120_000): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
}

/** Runs a setup step and fails with its output if it did not exit 0. */
function step(what: string, cmd: string, args: readonly string[], cwd: string, timeoutMs?: number): string {
  const r = run(cmd, args, cwd, timeoutMs);
  if (r.status !== 0) {
    throw new Error(`${what} failed (status ${r.status}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

/** The version range the repository itself uses for a dev tool (so the user project gets the same TypeScript). */
function rootDevRange(name: string): string {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  return pkg.devDependencies[name]!;
}

/** The npm registry answers (the install needs it for the third-party dependencies). */
const registry = spawnSync('npm', ['ping'], { env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
const registryDown = registry.status !== 0;
if (registryDown) {
  console.log(`packed-install.it.test.ts: skipped: the npm registry does not answer (npm ping: ${registry.stderr.trim().split('\n').pop() ?? registry.signal})`);
}

function setUp(): void {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-packed-'));
  project = path.join(tmp, 'project');
  step('tsc -b (pnpm build)', path.join(BIN, 'tsc'), ['-b'], REPO_ROOT, 300_000);
  const packs = path.join(tmp, 'tarballs');
  for (const p of PACKAGES) {
    step(`pnpm pack of ${p}`, 'npx', ['-y', 'pnpm@10', 'pack', '--pack-destination', packs], path.join(REPO_ROOT, 'packages', p));
  }
  tarballs.push(...readdirSync(packs).filter((f) => f.endsWith('.tgz')).sort().map((f) => path.join(packs, f)));
  cpSync(FIXTURE, project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), `${JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2)}\n`);
  step('npm install of the tarballs', 'npm', ['install', ...tarballs, `typescript@${rootDevRange('typescript')}`, `@types/node@${rootDevRange('@types/node')}`],
    project, 300_000);
}

/** `npx mpiexec ...args` in the user project. */
function mpiexec(...args: string[]): SpawnSyncReturns<string> {
  return run('npx', ['--no-install', 'mpiexec', ...args], project);
}

describe.skipIf(registryDown)('the packed packages, installed with npm outside the repository', () => {
  beforeAll(setUp, SETUP_MS);
  afterAll(() => {
    if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
  });

  it('pack one tarball per package', () => {
    expect(tarballs.map((t) => path.basename(t))).toEqual(['tsmpi-core-0.1.0.tgz', 'tsmpi-launcher-0.1.0.tgz', 'tsmpi-transport-tcp-0.1.0.tgz']);
  });

  it('hold the built JavaScript, declarations, source maps, bin, the library\'s sources and core\'s examples only: no tests or test programs', () => {
    for (const t of tarballs) {
      const files = step(`tar tzf ${t}`, 'tar', ['tzf', t], tmp).trim().split('\n');
      const isLauncher = path.basename(t).startsWith('tsmpi-launcher-');
      const odd = files.filter((f) => !/^package\/(package\.json|README\.md|LICENSE|bin\/(entry|mpiexec|tsmpi-proxy|tsmpi-nameserver|ts-rank-preload)\.mjs|dist\/.+\.(js|js\.map|d\.ts|d\.ts\.map)|src\/.+\.ts|examples\/[^/]+\.ts)$/.test(f));
      expect(odd, `${path.basename(t)} holds files a user does not need`).toEqual([]);
      expect(files.filter((f) => /test|fixture/.test(f))).toEqual([]);
      // The launcher's bin runs src/ when it is there (a checkout): its tarball has dist/ only, its maps carry their sources.
      if (isLauncher) expect(files.filter((f) => /\.ts$/.test(f.replace(/\.d\.ts$/, '')))).toEqual([]);
      else expect(files).toContain('package/src/index.ts');
      expect(files).toContain('package/dist/index.d.ts');
      if (isLauncher) {
        // The launcher is not bundled: its bin runs dist/'s modules.
        expect(files).toContain('package/dist/index.js');
        expect(files).toContain('package/dist/index.js.map');
      } else {
        // core's and the transport's exports name their bundles (ADR 0052): pack-tarballs writes them, and
        // nothing loads dist/'s per-module JavaScript (their maps lead to src/ directly): it is not shipped.
        expect(files).toContain('package/dist/bundle/index.js');
        expect(files).toContain('package/dist/bundle/index.js.map');
        expect(files.filter((f) => /^package\/dist\/.+\.js(\.map)?$/.test(f) && !f.startsWith('package/dist/bundle/'))).toEqual([]);
      }
      expect(files, `${path.basename(t)} carries the license its package.json names`).toContain('package/LICENSE');
    }
  });

  it('name their repository directory (package.json `repository`)', () => {
    for (const p of PACKAGES) {
      const pkg = JSON.parse(readFileSync(path.join(project, 'node_modules/@tsmpi', p, 'package.json'), 'utf8')) as { repository?: { directory?: string } };
      expect(pkg.repository?.directory).toBe(`packages/${p}`);
    }
  });

  it('a stack through tsmpi under node --enable-source-maps names .ts files and lines that the installed package holds', () => {
    const r = run(process.execPath, ['--enable-source-maps', 'lib-frame.mjs'], project);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Error: from the user op');
    const frames = [...r.stdout.matchAll(/node_modules\/@tsmpi\/core\/(src\/[\w/.-]+\.ts):(\d+):\d+/g)];
    expect(frames.length, r.stdout).toBeGreaterThan(0);
    expect(r.stdout).not.toMatch(/@tsmpi\/core\/dist\//);
    for (const [, file, line] of frames) {
      const lines = readFileSync(path.join(project, 'node_modules/@tsmpi/core', file!), 'utf8').split('\n');
      expect(lines.length, `${file} has line ${line}`).toBeGreaterThanOrEqual(Number(line));
    }
    expect(frames.map(([, file]) => file)).toContain('src/api/reduce-local.ts');
  });

  it('the examples README and GUIDE name ship in @tsmpi/core and run from node_modules', () => {
    const r = mpiexec('-n', '4', 'node_modules/@tsmpi/core/examples/hello.ts');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => l.replace(/ on .*$/, '')).sort()).toEqual([0, 1, 2, 3].map((k) => `Hello from rank ${k} of 4`));
  });

  it('publint reports nothing', () => {
    for (const t of tarballs) {
      const r = run(path.join(BIN, 'publint'), ['run', t, '--strict'], tmp);
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).toContain('All good!');
    }
  });

  it('@arethetypeswrong/cli reports nothing (ESM-only packages: profile esm-only)', () => {
    for (const t of tarballs) {
      const r = run(path.join(BIN, 'attw'), [t, '--profile', 'esm-only', '--format', 'json'], tmp);
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      const problems = (JSON.parse(r.stdout) as { problems?: Record<string, { resolutionKind?: string }[]> }).problems ?? {};
      const counted = Object.values(problems).flat().filter((p) => p.resolutionKind !== 'node10' && p.resolutionKind !== 'node16-cjs');
      expect(counted).toEqual([]);
    }
  });

  it('npx mpiexec -n 4 app.ts runs a TypeScript program with no build step', () => {
    const r = mpiexec('-n', '4', 'app.ts');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual([0, 1, 2, 3].map((k) => `rank ${k} of 4: sum 6`));
  });

  it('npx mpiexec -n 4 app.mjs runs a JavaScript program', () => {
    const r = mpiexec('-n', '4', 'app.mjs');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual([0, 1, 2, 3].map((k) => `rank ${k} of 4: sum 6`));
  });

  it('a job with ranks on another host runs them through the installed per-host proxy (bin/tsmpi-proxy.mjs, dist/)', () => {
    // fake-rsh.sh runs the remote command here, as ssh would on host fakeh1 (proxy.it.test.ts).
    const rsh = path.join(REPO_ROOT, 'packages/launcher/test/fixtures/fake-rsh.sh');
    const r = mpiexec('-n', '4', '--hosts', 'localhost:2,fakeh1:2', '--launcher-exec', rsh, 'app.ts');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual([0, 1, 2, 3].map((k) => `rank ${k} of 4: sum 6`));
  });

  it('npx tsmpi-nameserver --help runs the installed name server command (bin/tsmpi-nameserver.mjs, dist/)', () => {
    const r = run('npx', ['--no-install', 'tsmpi-nameserver', '--help'], project);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: tsmpi-nameserver \[--host ADDR\] \[--port N\] \[--file PATH\]/);
    expect(r.stdout).toContain('mpiexec --nameserver PATH');
  });

  it('MPI.Worker runs a .ts worker file (channel engines start from dist/ too)', () => {
    const r = mpiexec('-n', '2', 'threads.ts');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(['worker of rank 0: sum 3', 'worker of rank 1: sum 3']);
  });

  it('tsc --noEmit (moduleResolution NodeNext, no skipLibCheck) type-checks the programs against the declarations', () => {
    const r = run(path.join(project, 'node_modules/.bin/tsc'), ['--noEmit', '-p', '.'], project);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });
});
