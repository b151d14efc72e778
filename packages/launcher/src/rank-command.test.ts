/** The rank command line and the transport named in the ranks' environment (pure, on this checkout's files). */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isJsProgram, missingBuild, rankCommand, staleBuildWarning, TRANSPORT_ENV, withTransport } from './rank-command.ts';

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
      expect(rankCommand(p, ['x'], 'file:///tsx').args).toEqual(['--conditions=@tsmpi/source', '--import', 'file:///tsx', p, 'x']);
    }
  });
});

describe('withTransport for JavaScript programs', () => {
  it('names the built transport (dist/), which plain node can load', () => {
    const url = withTransport({}, 'app.mjs')[TRANSPORT_ENV]!;
    expect(url).toMatch(/^file:\/\/.*transport-tcp\/dist\/index\.js$/);
    expect(isJsProgram('app.mjs') && !isJsProgram('app.mts')).toBe(true);
  });

  it('finds the built JavaScript present once built (npx tsc -b), and asks nothing of TypeScript programs', () => {
    expect(missingBuild('app.ts')).toBeNull();
    expect(missingBuild('app.mjs')).toBeNull();
  });

  it('never warns of a stale build for TypeScript programs, which run from source', async () => {
    expect(await staleBuildWarning('app.ts')).toBeNull();
    expect(await staleBuildWarning('app.mts')).toBeNull();
  });
});
