/**
 * The test programs as plain JavaScript, so that integration jobs start their
 * ranks and worker threads in plain Node on the built packages (dist/), as an
 * installed tsmpi runs, instead of loading tsx and compiling the sources in
 * every rank and thread. A 16-thread job (threads-start.it.test.ts) took about
 * 43 s of CPU from the .ts programs and 13 s from these, nearly all of the
 * difference being tsx's module hooks in each of 32 worker threads; the
 * integration suite is mostly such start-up.
 *
 * The integration project's global setup writes test/programs-built/NAME.mjs
 * for each test/programs/NAME.ts (TypeScript's transpileModule, one file at a
 * time; './other.ts' string literals become './other.mjs'), when dist/ is
 * current (`pnpm test` builds first); otherwise it writes nothing and the
 * tests run the .ts programs through mpiexec's tsx loader, as before. A
 * program that imports the sources (`../../src/...`: it reaches into the
 * runtime's module state) stays TypeScript, and so does any program that
 * imports it. The .ts path itself stays tested where it is the point
 * (launcher tests, doc examples, examples/).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PROGRAMS_DIR = path.join(HERE, 'programs');
export const BUILT_DIR = path.join(HERE, 'programs-built');

/** A relative module path written as a string literal: './name.ts'. */
const LOCAL_TS = /(['"])\.\/([A-Za-z0-9_.-]+)\.ts\1/g;
/** An import that leaves the programs' directory (the sources). */
const OUTSIDE = /(from\s+|import\s*\(\s*)(['"])\.\.\//;

/** The built file for a program, or null when it runs as TypeScript. */
export function builtProgram(name: string): string | null {
  if (!name.endsWith('.ts')) return null;
  const file = path.join(BUILT_DIR, name.slice(0, -3) + '.mjs');
  return existsSync(file) ? file : null;
}

/**
 * Writes test/programs-built/ (after removing what an earlier run wrote).
 * @param enabled - false (dist/ not current) writes nothing, so every program runs as TypeScript
 * @returns the names of the programs built
 */
export function buildPrograms(enabled: boolean): string[] {
  rmSync(BUILT_DIR, { recursive: true, force: true });
  if (!enabled) return [];
  const names = readdirSync(PROGRAMS_DIR).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3));
  const source = new Map(names.map((n) => [n, readFileSync(path.join(PROGRAMS_DIR, `${n}.ts`), 'utf8')]));
  // A program is built when it does not reach outside and every local .ts it names is built.
  const built = new Set(names.filter((n) => !OUTSIDE.test(source.get(n)!)));
  for (let changed = true; changed; ) {
    changed = false;
    for (const n of built) {
      for (const m of source.get(n)!.matchAll(LOCAL_TS)) {
        if (!built.has(m[2]!)) {
          built.delete(n);
          changed = true;
          break;
        }
      }
    }
  }
  mkdirSync(BUILT_DIR, { recursive: true });
  for (const f of readdirSync(PROGRAMS_DIR)) {
    if (!f.endsWith('.ts')) copyFileSync(path.join(PROGRAMS_DIR, f), path.join(BUILT_DIR, f));
  }
  for (const n of built) {
    const js = ts.transpileModule(source.get(n)!, {
      fileName: `${n}.ts`,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    }).outputText;
    writeFileSync(path.join(BUILT_DIR, `${n}.mjs`), js.replace(LOCAL_TS, (_, q: string, m: string) => `${q}./${m}.mjs${q}`));
  }
  return [...built];
}
