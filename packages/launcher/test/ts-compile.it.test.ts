/**
 * A TypeScript program through mpiexec is compiled once per job (ts-compile.ts, issue 38): a
 * syntax error is one line from mpiexec, before any rank starts; a second job with the same files
 * reuses the compiled output (nothing rewritten); a changed file compiles again; jobs started at
 * once on the same new program all run. The project is a
 * temporary folder whose node_modules/@tsmpi/core links to this checkout's core, as a workspace
 * would. Real mpiexec, real ranks.
 *
 * testlist: { file: 'ts-compile.it.test.ts', np: [2, 3] }
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runMpiexec } from './run-mpiexec.ts';

/** A job takes 2-3 s on an idle machine; shared machines have been seen many times slower. */
const RUN = { deadlineMs: 100_000 } as const;

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-compile-it-'));
  mkdirSync(path.join(dir, 'node_modules/@tsmpi'), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'packages/core'), path.join(dir, 'node_modules/@tsmpi/core'));
  writeFileSync(path.join(dir, 'package.json'), '{ "name": "compile-it", "type": "module" }\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const APP = [
  "import * as MPI from '@tsmpi/core';",
  "import { weight } from './lib.ts';",
  'await MPI.init();',
  'const total: number = await MPI.COMM_WORLD.allreduce(weight(MPI.COMM_WORLD.rank), MPI.SUM);',
  'console.log(`rank ${MPI.COMM_WORLD.rank}: ${total}`);',
  'await MPI.finalize();',
  '',
].join('\n');

/** The cache's entries: manifests (.json) and output folders. */
function cacheEntries(): string[] {
  return readdirSync(path.join(dir, 'node_modules/.cache/tsmpi')).sort();
}

describe('a TypeScript program compiled once per job', () => {
  it('a syntax error: one line from mpiexec naming file:line, no rank started, exit 1', async () => {
    writeFileSync(path.join(dir, 'app.ts'), 'const a: number = 1;\nconst b = (a +;\nconsole.log(b);\n');
    const r = await runMpiexec(['-n', '3', path.join(dir, 'app.ts')], RUN);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^mpiexec: cannot compile app\.ts: .*app\.ts:2:\d+: Unexpected/);
  });

  it('runs the ranks on the compiled program; a second job reuses it untouched; a changed import compiles again', async () => {
    writeFileSync(path.join(dir, 'lib.ts'), 'export const weight = (rank: number): number => rank + 1;\n');
    writeFileSync(path.join(dir, 'app.ts'), APP);
    const first = await runMpiexec(['-n', '2', path.join(dir, 'app.ts')], RUN);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.trim().split('\n').sort()).toEqual(['rank 0: 3', 'rank 1: 3']);
    const entries = cacheEntries();
    expect(entries).toHaveLength(2);
    const manifest = path.join(dir, 'node_modules/.cache/tsmpi', entries.find((e) => e.endsWith('.json'))!);
    const written = statSync(manifest).mtimeMs;

    const second = await runMpiexec(['-n', '2', path.join(dir, 'app.ts')], RUN);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stdout.trim().split('\n').sort()).toEqual(['rank 0: 3', 'rank 1: 3']);
    expect(cacheEntries()).toEqual(entries);
    expect(statSync(manifest).mtimeMs).toBe(written);

    writeFileSync(path.join(dir, 'lib.ts'), 'export const weight = (rank: number): number => 10 * (rank + 1);\n');
    const third = await runMpiexec(['-n', '2', path.join(dir, 'app.ts')], RUN);
    expect(third.status, third.stderr).toBe(0);
    expect(third.stdout.trim().split('\n').sort()).toEqual(['rank 0: 30', 'rank 1: 30']);
    // The same manifest, now naming a new output; the replaced output stays (a running job may still import from it).
    const after = cacheEntries();
    expect(after).toHaveLength(3);
    expect(after).toEqual(expect.arrayContaining(entries));
    expect(statSync(manifest).mtimeMs).toBeGreaterThan(written);
  });

  it('three jobs started at once on a program not yet compiled all run (each compiles; none removes what another runs)', async () => {
    writeFileSync(path.join(dir, 'lib.ts'), 'export const weight = (rank: number): number => rank + 2;\n');
    writeFileSync(path.join(dir, 'app.ts'), APP);
    const runs = await Promise.all([0, 1, 2].map(() => runMpiexec(['-n', '2', path.join(dir, 'app.ts')], RUN)));
    for (const r of runs) {
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\n').sort()).toEqual(['rank 0: 5', 'rank 1: 5']);
    }
    expect(cacheEntries().filter((e) => e.endsWith('.json'))).toHaveLength(1);
  });
});
