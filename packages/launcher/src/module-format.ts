/**
 * Which module format Node gives a file (ts-compile.ts, import-meta.ts): the extension, else the
 * nearest package.json's "type", as Node (and tsx) decide it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** 'esm' for .mts/.mjs and for other extensions in a "type": "module" package; 'cjs' for .cts/.cjs and the rest. */
export function programFormat(program: string): 'esm' | 'cjs' {
  const ext = path.extname(program).toLowerCase();
  if (ext === '.mts' || ext === '.mjs') return 'esm';
  if (ext === '.cts' || ext === '.cjs') return 'cjs';
  for (let dir = path.dirname(program); ; dir = path.dirname(dir)) {
    const json = path.join(dir, 'package.json');
    if (existsSync(json)) {
      try {
        return (JSON.parse(readFileSync(json, 'utf8')) as { type?: unknown }).type === 'module' ? 'esm' : 'cjs';
      } catch {
        return 'cjs';
      }
    }
    if (path.dirname(dir) === dir) return 'cjs';
  }
}
