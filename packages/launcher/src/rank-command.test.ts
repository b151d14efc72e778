/** The rank command line and the transport named in the ranks' environment (pure, on this checkout's files). */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isJsProgram, missingBuild, rankCommand, staleBuildWarning, TRANSPORT_ENV, TS_RANK_PRELOAD_URL, withTransport } from './rank-command.ts';

describe('withTransport', () => {
  it('names the launcher\'s own @tsmpi/transport-tcp by file URL when the user chose none', () => {
    for (const env of [{}, { [TRANSPORT_ENV]: '' }]) {
      const url = withTransport(env)[TRANSPORT_ENV]!;
      expect(url).toMatch(/^file:\/\/.*transport-tcp\/(src\/index\.ts|dist\/index\.js)$/);
      expect(existsSync(fileURLToPath(url))).toBe(true);
    }
  });

  it('keeps a transport the user set, and the rest of the environment', () => {
    const env = { [TRANSPORT_ENV]: 'my-transport', OTHER: 'x' };
    expect(withTransport(env)).toEqual(env);
    expect(withTransport({ OTHER: 'y' }).OTHER).toBe('y');
  });
});

describe('rankCommand', () => {
  it('runs .js, .mjs and .cjs programs in plain node: no tsx, no source condition', () => {
    for (const p of ['app.js', 'app.mjs', 'APP.CJS']) {
      const cmd = rankCommand(p, ['x'], 'file:///tsx', ['--single-threaded-gc']);
      expect(cmd).toEqual({ file: process.execPath, args: ['--single-threaded-gc', p, 'x'], kind: 'node' });
    }
  });

  it('runs .ts, .mts, .cts and .tsx programs through tsx with the source condition', () => {
    for (const p of ['app.ts', 'app.mts', 'app.cts', 'app.tsx']) {
      expect(rankCommand(p, ['x'], 'file:///tsx').args).toEqual(['--conditions=@tsmpi/source', '--import', TS_RANK_PRELOAD_URL, '--import', 'file:///tsx', p, 'x']);
    }
  });
});

describe('rankCommand for a compiled TypeScript program (ts-compile.ts)', () => {
  it('runs the compiled file in plain node with its source maps: no tsx; the source condition stays for .ts worker threads', () => {
    const cmd = rankCommand('app.ts', ['x'], 'file:///tsx', ['--single-threaded-gc'], '/cache/app.mjs');
    expect(cmd).toEqual({ file: process.execPath, args: ['--single-threaded-gc', '--conditions=@tsmpi/source', '--enable-source-maps', '/cache/app.mjs', 'x'], kind: 'node' });
  });
});

describe('bin/ts-rank-preload.mjs (a TypeScript rank, before tsx)', () => {
  /**
   * A project whose @tsmpi/core is `main` (with a '@tsmpi/source' export to `source`, as in the
   * repository), a program importing it, and a module hook registered after the preload that
   * records what crosses it (as tsx's would): returns the lines the run printed.
   */
  function run(conditions: string[], withSource: boolean): string[] {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-preload-'));
    try {
      const core = path.join(dir, 'node_modules/@tsmpi/core');
      mkdirSync(core, { recursive: true });
      const exp = withSource ? { '@tsmpi/source': './source.mjs', default: './index.js' } : { default: './index.js' };
      writeFileSync(path.join(core, 'package.json'), JSON.stringify({ name: '@tsmpi/core', type: 'module', exports: { '.': exp } }));
      writeFileSync(path.join(core, 'index.js'), "console.log('core evaluated');\n");
      writeFileSync(path.join(core, 'source.mjs'), "console.log('core source evaluated');\n");
      writeFileSync(path.join(dir, 'hook.mjs'), "export async function load(url, c, next) { if (url.includes('@tsmpi')) console.log('hooked ' + url.slice(url.lastIndexOf('/') + 1)); return next(url, c); }\n");
      writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n");
      writeFileSync(path.join(dir, 'app.mjs'), "import '@tsmpi/core';\nconsole.log('program');\n");
      const r = spawnSync(process.execPath, [...conditions, '--import', TS_RANK_PRELOAD_URL, '--import', pathToFileURL(path.join(dir, 'register.mjs')).href, path.join(dir, 'app.mjs')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, TSMPI_SIZE: '1' } });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('loads a built @tsmpi/core before the hooks exist: the program finds it loaded and no hook sees it', () => {
    expect(existsSync(fileURLToPath(TS_RANK_PRELOAD_URL))).toBe(true);
    expect(run([], false)).toEqual(['core evaluated', 'program']);
  });

  it('leaves core to the hooks when the source condition resolves it to sources (the repository)', () => {
    expect(run(['--conditions=@tsmpi/source'], true)).toEqual(['hooked source.mjs', 'core source evaluated', 'program']);
  });
});

describe('withTransport for JavaScript programs', () => {
  it('names the built transport (its bundle in dist/, ADR 0052), which plain node can load', () => {
    const url = withTransport({}, 'app.mjs')[TRANSPORT_ENV]!;
    expect(url).toMatch(/^file:\/\/.*transport-tcp\/dist\/bundle\/index\.js$/);
    expect(isJsProgram('app.mjs') && !isJsProgram('app.mts')).toBe(true);
  });

  it('finds the built JavaScript present once built (pnpm build), and asks nothing of TypeScript programs', () => {
    expect(missingBuild('app.ts')).toBeNull();
    expect(missingBuild('app.mjs')).toBeNull();
  });

  it('never warns of a stale build for TypeScript programs, which run from source', async () => {
    expect(await staleBuildWarning('app.ts')).toBeNull();
    expect(await staleBuildWarning('app.mts')).toBeNull();
  });
});
