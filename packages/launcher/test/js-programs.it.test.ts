/**
 * JavaScript programs (.mjs, .cjs) run in plain Node under mpiexec: no
 * TypeScript loader in the rank (its execArgv names no --import), '@tsmpi/core'
 * resolved to the built JavaScript (the bundle its exports name), MPI.Worker threads on JavaScript and
 * TypeScript files, and a syntax error reported by Node with the file and line. The programs are written under node_modules/.cache so
 * that they import '@tsmpi/core' as any program in the repository does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runMpiexec } from './run-mpiexec.ts';

fs.mkdirSync(path.join(REPO_ROOT, 'node_modules/.cache'), { recursive: true }); // absent in a fresh checkout
const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'node_modules/.cache/js-programs-'));
fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function program(name: string, code: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, code);
  return file;
}

/** Each rank reports how it runs: its Node flags, where '@tsmpi/core' came from, and an allreduce. */
const REPORT = `
const world = MPI.COMM_WORLD;
const sum = await world.allreduce(world.rank + 1, MPI.SUM);
console.log(JSON.stringify({ rank: world.rank, execArgv: process.execArgv, core: CORE, sum }));
await MPI.finalize();
`;

describe('JavaScript programs run in plain node', () => {
  it('a .mjs rank has no TypeScript loader and runs on the built @tsmpi/core', async () => {
    const file = program('probe.mjs', `import * as MPI from '@tsmpi/core';\nconst CORE = import.meta.resolve('@tsmpi/core');\nawait MPI.init();\n${REPORT}`);
    const r = await runMpiexec(['-n', '3', file], { deadlineMs: 90_000 });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { rank: number; execArgv: string[]; core: string; sum: number });
    expect(rows.map((x) => x.rank).sort()).toEqual([0, 1, 2]);
    for (const row of rows) {
      expect(row.sum).toBe(6);
      expect(row.execArgv.join(' ')).not.toMatch(/--import|--loader|tsx|@tsmpi\/source/);
      expect(row.core).toMatch(/\/packages\/core\/dist\/bundle\/index\.js$/); // the bundle core's exports name (ADR 0052)
    }
  });

  it('a .cjs rank runs in plain node too (importing the ES module)', async () => {
    const file = program('probe.cjs', `(async () => {\nconst MPI = await import('@tsmpi/core');\nconst CORE = require.resolve('@tsmpi/core');\nawait MPI.init();\n${REPORT}\n})();\n`);
    const r = await runMpiexec(['-n', '2', file], { deadlineMs: 90_000 });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { execArgv: string[]; core: string; sum: number });
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.sum).toBe(3);
      expect(row.execArgv.join(' ')).not.toMatch(/--import|tsx/);
      expect(row.core).toMatch(/\/packages\/core\/dist\/bundle\/index\.js$/); // the bundle core's exports name (ADR 0052)
    }
  });

  it('a .mjs rank starts MPI.Worker threads on .mjs and .ts files (channel engines from the built JavaScript)', async () => {
    const worker = `import * as MPI from '@tsmpi/core';\nawait MPI.init();\nconst { comm } = MPI.workerData;\nconst total = await comm.allreduce(comm.rank + 1, MPI.SUM);\nconsole.log(\`worker of rank \${comm.rank}: sum \${total}\`);\n`;
    program('worker.mjs', worker);
    program('worker.ts', worker.replace('MPI.workerData;', 'MPI.workerData as { comm: MPI.Comm };'));
    for (const file of ['worker.mjs', 'worker.ts']) {
      const main = program(`threads-${file}.mjs`, `import * as MPI from '@tsmpi/core';\nawait MPI.init({ threadLevel: 'multiple' });\nconst w = new MPI.Worker(new URL('./${file}', import.meta.url), { workerData: { comm: MPI.COMM_WORLD } });\nawait new Promise((resolve, reject) => { w.once('exit', resolve); w.once('error', reject); });\nawait MPI.finalize();\n`);
      const r = await runMpiexec(['-n', '2', main], { deadlineMs: 90_000 });
      expect(r.status, `${file}: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim().split('\n').sort()).toEqual(['worker of rank 0: sum 3', 'worker of rank 1: sum 3']);
    }
  });

  it('a syntax error in a .mjs is reported by Node with the file and its line', async () => {
    const file = program('broken.mjs', `import * as MPI from '@tsmpi/core';\nawait MPI.init();\nconst = 1;\n`);
    const r = await runMpiexec(['-n', '2', file], { deadlineMs: 90_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`${file}:3`);
    expect(r.stderr).toContain('SyntaxError');
  });
});
