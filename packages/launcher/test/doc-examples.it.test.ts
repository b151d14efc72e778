/**
 * Every code example in README.md and docs/**.md is honest: a TypeScript or
 * JavaScript block is either marked as a complete program (`<!-- run: ARGS -->`
 * before its fence), and then runs through mpiexec with those arguments and
 * exits 0, or marked `ts fragment`, and then is not a complete program
 * (it lacks the import of @tsmpi/core, MPI.init or MPI.finalize). A program
 * whose mark ends in `; direct` also runs without mpiexec, as `npx tsx app.ts`
 * does (a job of one process), and exits 0.
 * The programs are written under node_modules/.cache so that they import
 * '@tsmpi/core' as any program in the repository does.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, docFiles, isProgramLang, REPO, type CodeBlock } from './doc-files.ts';
import { runMpiexec } from './run-mpiexec.ts';

const blocks = docFiles().flatMap(codeBlocks).filter((b) => isProgramLang(b.lang));
const programs = blocks.filter((b) => b.run !== null);
const directPrograms = programs.filter((b) => b.direct);
const where = (b: CodeBlock): string => `${b.file}:${b.line}`;
fs.mkdirSync(path.join(REPO, 'node_modules/.cache'), { recursive: true }); // absent in a fresh checkout
const dir = fs.mkdtempSync(path.join(REPO, 'node_modules/.cache/doc-examples-'));
// Under node_modules the package scope of the repository root does not reach: declare ES modules here.
fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The file a block's program is written to. */
function programFile(b: CodeBlock): string {
  const ext = b.lang.startsWith('j') || b.lang === 'mjs' ? '.mjs' : '.ts';
  const file = path.join(dir, `${b.file.replace(/[/\\.]/g, '_')}_${b.line}${ext}`);
  fs.writeFileSync(file, `${b.code}\n`);
  return file;
}

/**
 * Runs `tsx file` as a user runs `npx tsx app.ts`: no mpiexec, none of its environment. After deadlineMs its
 * process group is killed (tsx runs the program in a child process of its own).
 */
function runDirect(file: string, deadlineMs: number): Promise<{ status: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TSMPI_')));
  return new Promise((resolve) => {
    const child = spawn(path.join(REPO, 'node_modules/.bin/tsx'), [file], {
      cwd: dir, env: { ...env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, deadlineMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr, timedOut });
    });
  });
}

function isCompleteProgram(code: string): boolean {
  return /from '@tsmpi\/core'/.test(code) && /MPI\.init\(/.test(code) && /MPI\.finalize\(/.test(code);
}

describe('code examples in the documents', () => {
  it('has complete programs to run (the README, docs/API.md, docs/GUIDE.md, docs/MPI4PY.md)', () => {
    expect(programs.map((b) => b.file)).toContain('README.md');
    expect(programs.map((b) => b.file)).toContain(path.join('docs', 'API.md'));
    expect(programs.map((b) => b.file)).toContain(path.join('docs', 'GUIDE.md'));
    expect(programs.map((b) => b.file)).toContain(path.join('docs', 'MPI4PY.md'));
    // The README says `npx tsx app.ts` runs its app.ts as one process: it must.
    expect(directPrograms.map((b) => b.file)).toContain('README.md');
  });

  it('marks every TypeScript/JavaScript block as a program to run or as a fragment', () => {
    const unmarked = blocks.filter((b) => b.run === null && !b.fragment).map(where);
    expect(unmarked, 'add <!-- run: -n N --> before the fence, or write ```ts fragment').toEqual([]);
  });

  it('marks as fragments only blocks that are not complete programs', () => {
    const dishonest = blocks.filter((b) => b.fragment && isCompleteProgram(b.code)).map(where);
    expect(dishonest, 'these fragments are whole programs: mark them <!-- run: ... --> instead').toEqual([]);
  });

  it.each(programs.map((b) => [where(b), b] as const))('%s runs through mpiexec and exits 0', async (_, b) => {
    const file = programFile(b);
    const r = await runMpiexec([...b.run!, file], { deadlineMs: 90_000 });
    expect(r.timedOut, `${where(b)} did not finish within 90 s`).toBe(false);
    expect(r.status, `${where(b)} exited ${r.status}:\n${r.stderr}`).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(0);
  });

  it.each(directPrograms.map((b) => [where(b), b] as const))('%s runs without mpiexec (npx tsx) as one process and exits 0', async (_, b) => {
    const r = await runDirect(programFile(b), 90_000);
    expect(r.timedOut, `${where(b)} did not finish within 90 s`).toBe(false);
    expect(r.status, `${where(b)} exited ${r.status}:\n${r.stderr}`).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(0);
  });
});
