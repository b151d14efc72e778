/** Each compiled module's own import.meta (import-meta.ts): which modules get the appended import (the compiled result is in ts-compile.test.ts). */
import { describe, expect, it } from 'vitest';
import { IMPORT_META_DEFINE, withOwnImportMeta } from './import-meta.ts';

describe('withOwnImportMeta', () => {
  it('appends one import after the last line of an ES module that names import.meta, so no line or column moves', () => {
    const source = 'export const u = import.meta.url;\nexport const d = import.meta.dirname;';
    const out = withOwnImportMeta(source, '/p/a.mts');
    expect(out.startsWith(`${source}\n`)).toBe(true);
    expect(out.slice(source.length).trim().split('\n')).toHaveLength(1);
    expect(out).toContain('from "tsmpi-meta:/p/a.mts"');
    for (const name of Object.values(IMPORT_META_DEFINE)) expect(out).toContain(` as ${name}`);
  });

  it('leaves alone a module that never names import.meta, and a CommonJS one (an import would make it an ES module)', () => {
    expect(withOwnImportMeta('export const a = 1;\n', '/p/a.mts')).toBe('export const a = 1;\n');
    const cjs = "module.exports = 'import.meta.url';\n";
    expect(withOwnImportMeta(cjs, '/p/a.cjs')).toBe(cjs);
    expect(withOwnImportMeta(cjs, '/p/a.cts')).toBe(cjs);
  });

  it('defines exactly the four properties a module can ask of its own import.meta', () => {
    expect(Object.keys(IMPORT_META_DEFINE).sort()).toEqual(['import.meta.dirname', 'import.meta.filename', 'import.meta.resolve', 'import.meta.url']);
  });
});
