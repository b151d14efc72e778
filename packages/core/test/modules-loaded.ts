// The modules a fresh Node loads for one import (the lazy-modules tests of core and the launcher):
// a child Node records every file and Node built-in its loader resolves (a module.register resolve
// hook; a built-in loaded through require is not seen), then runs
// `await import(SPECIFIER)` with the source condition the repository's TypeScript programs use.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const HOOK = [
  'export async function resolve(specifier, context, next) {',
  '  const r = await next(specifier, context);',
  "  if (r.url.startsWith('file:') || r.url.startsWith('node:')) process.stderr.write(`LOADED ${r.url}\\n`);",
  '  return r;',
  '}',
].join('\n');

/**
 * The file: and node: URLs a child Node resolves while it imports `specifier` from `cwd`.
 * @throws Error with the child's stderr when the import fails
 */
export function modulesLoadedBy(cwd: string, specifier: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmpi-modules-'));
  try {
    fs.writeFileSync(path.join(dir, 'hook.mjs'), HOOK);
    fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n");
    const r = spawnSync(process.execPath, [
      '--conditions=@tsmpi/source', '--import', 'tsx', '--import', pathToFileURL(path.join(dir, 'register.mjs')).href,
      '--input-type=module', '-e', `await import(${JSON.stringify(specifier)});`,
    ], { cwd, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`importing ${specifier} failed (status ${r.status}):\n${r.stderr}`);
    return [...new Set(r.stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice('LOADED '.length)))];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
