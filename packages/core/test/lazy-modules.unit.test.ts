// What `import '@tsmpi/core'` loads (issue 38, idle rank memory): the parts a program reaches
// only through a call (File's implementation on the first File.open, the trace recorder with
// --trace, the wire-up clients and the transport at init) stay out of a program that only
// imports the library. Checked on the real module graph: a child Node records every module
// its loader resolves (a module.register resolve hook), then imports the package by name as
// a program would, with the source condition the repository's TypeScript programs use.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CORE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = pathToFileURL(path.join(CORE, 'src')).href;

/** Loaded only by a call: files of core's src/, and folders (ending in /). */
const LAZY = [
  'api/file-access.ts', 'api/file-collective.ts', 'api/file-open.ts', 'api/file-shared-pointer.ts',
  'api/trace-recorder.ts', 'pmi/', 'pmi-direct/',
  'api/win-origin.ts', 'api/win-passive.ts', // with the first window's creation
  'transport/testing.ts', 'transport/loopback.ts', 'transport/conformance.ts', // test code: never, by any call
];
/** Packages a program that only imports core must not load: the wire-up client's WebSocket and the transport. */
const LAZY_PACKAGES = ['/ws/', '/transport-tcp/'];

let dir = '';
let loaded: string[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-lazy-'));
  fs.writeFileSync(path.join(dir, 'hook.mjs'), [
    'export async function resolve(specifier, context, next) {',
    '  const r = await next(specifier, context);',
    "  if (r.url.startsWith('file:')) process.stderr.write(`LOADED ${r.url}\\n`);",
    '  return r;',
    '}',
  ].join('\n'));
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n");
  const r = spawnSync(process.execPath, [
    '--conditions=@tsmpi/source', '--import', 'tsx', '--import', pathToFileURL(path.join(dir, 'register.mjs')).href,
    '--input-type=module', '-e', "await import('@tsmpi/core');",
  ], { cwd: CORE, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  loaded = [...new Set(r.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length)))];
}, 90_000);

afterAll(() => {
  if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
});

describe('importing @tsmpi/core (issue 38)', () => {
  it('records the module graph (the hook sees core\'s own modules)', () => {
    expect(loaded).toContain(`${SRC}/index.ts`);
    expect(loaded).toContain(`${SRC}/api/lifecycle.ts`);
    expect(loaded).toContain(`${SRC}/api/file.ts`); // the File class itself is public at import
  });

  it('does not load what only a call reaches', () => {
    const core = loaded.filter((u) => u.startsWith(`${SRC}/`)).map((u) => u.slice(SRC.length + 1));
    expect(core.filter((f) => LAZY.some((l) => (l.endsWith('/') ? f.startsWith(l) : f === l)))).toEqual([]);
    expect(loaded.filter((u) => LAZY_PACKAGES.some((p) => u.includes(p)))).toEqual([]);
  });
});
