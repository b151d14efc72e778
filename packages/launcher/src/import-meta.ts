/**
 * Each compiled module's own `import.meta` (ts-compile.ts, docs/adr/0051-ts-compile-once.md).
 * A bundle has one `import.meta` per output file, so `import.meta.url` in a bundled module would
 * name the output in the cache, not the module's source. esbuild's `define` (which changes only
 * real expressions, never a string literal or a comment) turns `import.meta.url`, `.dirname`,
 * `.filename` and `.resolve` into identifiers; the module binds them by an import appended to its
 * text, from a virtual module (namespace `tsmpi-meta`) that holds that module's own values.
 * Appended at the end, the import moves no line or column of the source (the source maps stay
 * exact) and, being an import, is bound before the module's first statement runs.
 */
import type { PluginBuild } from 'esbuild';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { programFormat } from './module-format.ts';

/** The identifiers `define` puts in place of each `import.meta` property, and the virtual module's export each binds to. */
const META_NAMES = {
  url: '__tsmpiMetaUrl',
  dirname: '__tsmpiMetaDirname',
  filename: '__tsmpiMetaFilename',
  resolve: '__tsmpiMetaResolve',
} as const;

/** esbuild's `define` for a build that gives every module its own import.meta. */
export const IMPORT_META_DEFINE: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(META_NAMES).map(([property, name]) => [`import.meta.${property}`, name]),
);

const NAMESPACE = 'tsmpi-meta';

/** Resolves a bare specifier as the module `importer` would at compile time: a file path, or null (unresolved, or left external). */
export type CompileTimeResolve = (specifier: string, importer: string) => Promise<string | null>;

/** An `import.meta` written in code (a string or a comment with the words only costs an unused import, which esbuild drops). */
const MENTIONS_IMPORT_META = /\bimport\s*\.\s*meta\b/;
/** `import.meta.resolve('literal')`: the specifiers resolved at compile time, as the source module would resolve them. */
const RESOLVE_LITERAL = /\bimport\s*\.\s*meta\s*\.\s*resolve\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/**
 * `source` of `file` with the import that binds its own import.meta appended; unchanged when it
 * never names import.meta or is CommonJS (a CommonJS module has no import.meta, and an import
 * would make esbuild take it for an ES module).
 */
export function withOwnImportMeta(source: string, file: string): string {
  if (!MENTIONS_IMPORT_META.test(source)) return source;
  const ext = path.extname(file).toLowerCase();
  const esmSyntax = ext === '.ts' || ext === '.tsx' || ext === '.mts' || programFormat(file) === 'esm';
  if (!esmSyntax || ext === '.cts' || ext === '.cjs') return source;
  const bindings = Object.entries(META_NAMES).map(([property, name]) => `${property} as ${name}`).join(', ');
  return `${source}\nimport { ${bindings} } from ${JSON.stringify(`${NAMESPACE}:${file}`)};\n`;
}

/** esbuild plugin parts: resolves and loads the virtual modules withOwnImportMeta's imports name. */
export function setupImportMeta(build: PluginBuild, sourceOf: (file: string) => string, resolveBare: CompileTimeResolve): void {
  build.onResolve({ filter: new RegExp(`^${NAMESPACE}:`) }, (a) => ({ path: a.path.slice(NAMESPACE.length + 1), namespace: NAMESPACE, sideEffects: false }));
  build.onLoad({ filter: /.*/, namespace: NAMESPACE }, async (a) => ({ contents: await metaModule(a.path, sourceOf(a.path), resolveBare), loader: 'js' as const }));
}

/**
 * The virtual module of `file`: its url, dirname and filename, and a resolve that answers as
 * the source module would: a relative specifier against its own URL, a bare one its text names
 * as a literal from the resolution made at compile time; any other (a specifier computed at run
 * time) as the output file resolves it (the output's own import.meta, which `define` leaves alone).
 */
async function metaModule(file: string, source: string, resolveBare: CompileTimeResolve): Promise<string> {
  const resolved: Record<string, string> = {};
  for (const m of source.matchAll(RESOLVE_LITERAL)) {
    const spec = m[2]!;
    if (spec.startsWith('./') || spec.startsWith('../') || spec.startsWith('/') || spec.startsWith('node:') || isBuiltin(spec) || spec in resolved) continue;
    const target = await resolveBare(spec, file);
    if (target !== null) resolved[spec] = pathToFileURL(target).href;
  }
  return [
    `export const url = ${JSON.stringify(pathToFileURL(file).href)};`,
    `export const dirname = ${JSON.stringify(path.dirname(file))};`,
    `export const filename = ${JSON.stringify(file)};`,
    `const resolvedBare = ${JSON.stringify(resolved)};`,
    'const outputMeta = import.meta;',
    'export function resolve(specifier) {',
    "  if (Object.hasOwn(resolvedBare, specifier)) return resolvedBare[specifier];",
    "  if (/^\\.{0,2}\\//.test(specifier)) return new URL(specifier, url).href;",
    '  return outputMeta.resolve(specifier);',
    '}',
    '',
  ].join('\n');
}
