/** A TypeScript program compiled once per job (ts-compile.ts): real esbuild, real files in a temporary project, run by plain node. */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CompileError, cacheRoot, compiledPathPreview, compileProgram, programFormat, privateDirectory } from './ts-compile.ts';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-compile-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `files` (path relative to the project: text) into the project. */
function project(files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
}

/** A project with an ES-module program that imports its own .ts file, a tsconfig `paths` alias and a package of node_modules. */
function sampleProject(): string {
  project({
    'package.json': '{ "type": "module" }',
    'tsconfig.json': '{ "compilerOptions": { "baseUrl": ".", "paths": { "#util/*": ["src/util/*"] } } }',
    'node_modules/dep/package.json': '{ "name": "dep", "type": "module", "exports": { ".": { "import": "./esm.js", "default": "./cjs.cjs" } } }',
    'node_modules/dep/esm.js': "export const where = import.meta.url;\n",
    'node_modules/dep/cjs.cjs': "exports.where = 'cjs';\n",
    'src/util/twice.ts': 'export const twice = (n: number): number => n * 2;\n',
    'src/lib.ts': "export const libUrl: string = import.meta.url;\nexport function boom(): never {\n  throw new Error('boom in lib');\n}\n",
    'app.mts': [
      "import { where } from 'dep';",
      "import { twice } from '#util/twice.ts';",
      "import { boom, libUrl } from './src/lib.ts';",
      'const n: number = twice(21);',
      "import { pathToFileURL } from 'node:url';",
      "const main = import.meta.url === pathToFileURL(process.argv[1] ?? '').href;",
      "console.log(JSON.stringify({ n, where, libUrl, self: import.meta.url, main }));",
      "if (process.argv[2] === 'throw') boom();",
      '',
    ].join('\n'),
  });
  return path.join(dir, 'app.mts');
}

function runNode(file: string, ...args: string[]): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--enable-source-maps', file, ...args], { encoding: 'utf8', timeout: 60_000 }) as ReturnType<typeof spawnSync> & { stdout: string; stderr: string };
}

describe('compileProgram', () => {
  it('bundles the program\'s own files and aliases; a package of node_modules loads from its own place; each module keeps its import.meta.url', async () => {
    const program = sampleProject();
    const out = await compileProgram(program, null, [], {});
    expect(out.cached).toBe(false);
    expect(out.file.startsWith(path.join(dir, 'node_modules/.cache/tsmpi') + path.sep)).toBe(true);
    const r = runNode(out.file);
    expect(r.status, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(seen).toEqual({
      n: 42,
      where: `file://${path.join(dir, 'node_modules/dep/esm.js')}`,
      libUrl: `file://${path.join(dir, 'src/lib.ts')}`,
      self: `file://${program}`,
      main: true,
    });
  });

  it('import.meta.url, dirname, filename and resolve name each module\'s own source file; the words in a string or a comment stay as written', async () => {
    const lines = (who: string): string[] => [
      `/*! ${who} keeps import.meta.url in this comment */`,
      'export const ' + who + ' = {',
      "  text: 'import.meta.url and import.meta.dirname', template: `import.meta.filename`,",
      '  url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename,',
      "  beside: new URL('./x', import.meta.url).href, dep: import.meta.resolve('dep'), up: import.meta.resolve('../y.js'),",
      '};',
      '',
    ];
    project({
      'package.json': '{ "type": "module" }',
      'node_modules/dep/package.json': '{ "name": "dep", "type": "module", "exports": "./index.js" }',
      'node_modules/dep/index.js': 'export {};\n',
      'lib/other.ts': lines('other').join('\n'),
      'app.ts': [...lines('app'), "import { other } from './lib/other.ts';", 'console.log(JSON.stringify({ app, other }));', ''].join('\n'),
    });
    const out = await compileProgram(path.join(dir, 'app.ts'), null, [], {});
    const r = runNode(out.file);
    expect(r.status, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout) as Record<string, unknown>;
    const own = (file: string): Record<string, string> => ({
      text: 'import.meta.url and import.meta.dirname', template: 'import.meta.filename',
      url: `file://${path.join(dir, file)}`, dirname: path.dirname(path.join(dir, file)), filename: path.join(dir, file),
      beside: `file://${path.join(path.dirname(path.join(dir, file)), 'x')}`,
      dep: `file://${path.join(dir, 'node_modules/dep/index.js')}`,
      up: `file://${path.join(path.dirname(path.dirname(path.join(dir, file))), 'y.js')}`,
    });
    expect(seen).toEqual({ app: own('app.ts'), other: own('lib/other.ts') });
    // esbuild keeps a legal comment (/*! ... */): both come through as written.
    const text = readFileSync(out.file, 'utf8');
    expect(text).toContain('/*! app keeps import.meta.url in this comment */');
    expect(text).toContain('/*! other keeps import.meta.url in this comment */');
  });

  it('a thrown error\'s stack names the .ts file and line (source maps)', async () => {
    const out = await compileProgram(sampleProject(), null, [], {});
    const r = runNode(out.file, 'throw');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Error: boom in lib');
    expect(r.stderr).toMatch(new RegExp(`at boom \\(${path.join(dir, 'src/lib.ts').replace(/[.]/g, '\\.')}:3:\\d+\\)`));
  });

  it('reuses its output while every input is unchanged; a changed input compiles again; a replaced output stays a day, then goes', async () => {
    const program = sampleProject();
    const first = await compileProgram(program, null, [], {});
    const second = await compileProgram(program, null, [], {});
    expect(second).toEqual({ ...first, cached: true });
    writeFileSync(path.join(dir, 'src/util/twice.ts'), 'export const twice = (n: number): number => n * 3;\n');
    const third = await compileProgram(program, null, [], {});
    expect(third.cached).toBe(false);
    expect(third.file).not.toBe(first.file);
    expect((JSON.parse(runNode(third.file).stdout) as { n: number }).n).toBe(63);
    const firstDir = path.dirname(first.file);
    expect(readdirSync(cacheRoot(program, {}))).toContain(path.basename(firstDir));
    const twoDaysAgo = new Date(Date.now() - 48 * 3600_000);
    utimesSync(firstDir, twoDaysAgo, twoDaysAgo);
    writeFileSync(path.join(dir, 'src/util/twice.ts'), 'export const twice = (n: number): number => n * 4;\n');
    const fourth = await compileProgram(program, null, [], {});
    const left = readdirSync(cacheRoot(program, {}));
    expect(left).not.toContain(path.basename(firstDir));
    expect(left).toContain(path.basename(path.dirname(third.file)));
    expect(left).toContain(path.basename(path.dirname(fourth.file)));
    // Another program's manifest, its program since removed: dropped at the next compile.
    writeFileSync(path.join(dir, 'gone.mts'), 'export {};\n');
    await compileProgram(path.join(dir, 'gone.mts'), null, [], {});
    expect(readdirSync(cacheRoot(program, {})).filter((f) => f.endsWith('.json'))).toHaveLength(2);
    rmSync(path.join(dir, 'gone.mts'));
    writeFileSync(path.join(dir, 'src/util/twice.ts'), 'export const twice = (n: number): number => n * 5;\n');
    await compileProgram(program, null, [], {});
    expect(readdirSync(cacheRoot(program, {})).filter((f) => f.endsWith('.json'))).toHaveLength(1);
  });

  it('writes the cache private: folders 0700, files 0600', async () => {
    const out = await compileProgram(sampleProject(), null, [], {});
    const root = path.dirname(path.dirname(out.file));
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(path.dirname(out.file)).mode & 0o777).toBe(0o700);
    const files = readdirSync(path.dirname(out.file)).map((f) => path.join(path.dirname(out.file), f));
    files.push(...readdirSync(root).filter((f) => f.endsWith('.json')).map((f) => path.join(root, f)));
    expect(files.length).toBeGreaterThan(2);
    for (const f of files) expect(statSync(f).mode & 0o777, f).toBe(0o600);
  });

  it('a syntax error is one line naming file:line:column', async () => {
    project({ 'package.json': '{ "type": "module" }', 'bad.ts': 'const a: number = 1;\nconst b = (a +;\n' });
    const err = await compileProgram(path.join(dir, 'bad.ts'), null, [], {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CompileError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(/bad\.ts:2:\d+: Unexpected "?;"?/);
  });
});

describe('privateDirectory', () => {
  it('narrows a folder of ours that others could read; refuses a link and another user\'s folder', () => {
    const wide = path.join(dir, 'wide');
    mkdirSync(wide, { mode: 0o777 });
    chmodSync(wide, 0o777);
    privateDirectory(wide);
    expect(statSync(wide).mode & 0o777).toBe(0o700);
    const link = path.join(dir, 'link');
    symlinkSync(wide, link);
    expect(() => privateDirectory(link)).toThrow(/is not a directory \(a link or a file\)/);
    if (process.getuid?.() === 0) {
      // Only root can give a folder away: as root, one of another user's is refused.
      const theirs = path.join(dir, 'theirs');
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      expect(() => privateDirectory(theirs)).toThrow(/belongs to another user \(uid 65534\)/);
    }
  });
});

describe('programFormat and cacheRoot', () => {
  it('.mts is ESM, .cts CommonJS, .ts as its package.json says', () => {
    project({ 'm/package.json': '{ "type": "module" }', 'c/package.json': '{ "name": "c" }' });
    expect(programFormat(path.join(dir, 'c/a.mts'))).toBe('esm');
    expect(programFormat(path.join(dir, 'm/a.cts'))).toBe('cjs');
    expect(programFormat(path.join(dir, 'm/a.ts'))).toBe('esm');
    expect(programFormat(path.join(dir, 'c/a.ts'))).toBe('cjs');
  });

  it('the project\'s node_modules/.cache/tsmpi, else the user\'s cache folder', () => {
    project({ 'p/node_modules/.keep': '', 'p/src/app.ts': '' });
    expect(cacheRoot(path.join(dir, 'p/src/app.ts'), {})).toBe(path.join(dir, 'p/node_modules/.cache/tsmpi'));
    const lone = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-lone-'));
    try {
      expect(cacheRoot(path.join(lone, 'app.ts'), { XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/tsmpi');
    } finally {
      rmSync(lone, { recursive: true, force: true });
    }
  });

  it('--dry-run\'s preview: the compiled file\'s place for an ES-module program whose ranks are all here; none under tsx', () => {
    project({ 'node_modules/.keep': '', 'package.json': '{ "type": "module" }', 'c/package.json': '{}' });
    expect(compiledPathPreview(path.join(dir, 'app.ts'), true, {})).toBe(path.join(dir, 'node_modules/.cache/tsmpi/<KEY>/app.mjs'));
    expect(compiledPathPreview(path.join(dir, 'app.ts'), false, {})).toBeNull();
    expect(compiledPathPreview(path.join(dir, 'c/app.ts'), true, {})).toBeNull();
    expect(compiledPathPreview(path.join(dir, 'app.mjs'), true, {})).toBeNull();
  });
});
