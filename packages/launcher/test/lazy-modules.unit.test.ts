// What mpiexec loads before it starts a job on this machine alone (issue 38, start-up): the ssh and
// Slurm launchers (launchers.ts loadProxyBackends), the dashboard (job.ts, with --dashboard), the help
// text and srun's version parser (main.ts) load only where they are used. Checked on the real module
// graph, as core's lazy-modules.unit.test.ts does: a child Node records every module its loader
// resolves (a module.register resolve hook), then imports main.ts from the sources.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const LAUNCHER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = pathToFileURL(path.join(LAUNCHER, 'src')).href;

/** Files of the launcher's src/ that a local job does not load; a name ending in '-' stands for every file it begins. */
const LAZY = [
  'ssh-launcher.ts', 'slurm-launcher.ts', 'proxy-launcher.ts', 'slurm-step.ts', 'slurm-srun.ts', 'slurm-srun-output.ts',
  'dashboard.ts', 'dashboard-', 'help.ts',
];

let dir = '';
let loaded: string[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-launcher-lazy-'));
  fs.writeFileSync(path.join(dir, 'hook.mjs'), [
    'export async function resolve(specifier, context, next) {',
    '  const r = await next(specifier, context);',
    "  if (r.url.startsWith('file:')) process.stderr.write(`LOADED ${r.url}\\n`);",
    '  return r;',
    '}',
  ].join('\n'));
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n");
  const main = pathToFileURL(path.join(LAUNCHER, 'src', 'main.ts')).href;
  const r = spawnSync(process.execPath, [
    '--conditions=@tsmpi/source', '--import', 'tsx', '--import', pathToFileURL(path.join(dir, 'register.mjs')).href,
    '--input-type=module', '-e', `await import(${JSON.stringify(main)});`,
  ], { cwd: LAUNCHER, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  loaded = [...new Set(r.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length)))];
}, 90_000);

afterAll(() => {
  if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
});

describe('importing mpiexec\'s main.ts (issue 38)', () => {
  it('records the module graph (the hook sees the launcher\'s own modules)', () => {
    expect(loaded).toContain(`${SRC}/main.ts`);
    expect(loaded).toContain(`${SRC}/job.ts`);
    expect(loaded).toContain(`${SRC}/launchers.ts`);
    expect(loaded).toContain(`${SRC}/fork-launcher.ts`);
  });

  it('does not load the proxy backends, the dashboard or the help text', () => {
    const own = loaded.filter((u) => u.startsWith(`${SRC}/`)).map((u) => u.slice(SRC.length + 1));
    expect(own.filter((f) => LAZY.some((l) => (l.endsWith('-') ? f.startsWith(l) : f === l)))).toEqual([]);
  });
});
