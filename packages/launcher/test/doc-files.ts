/**
 * Test helper: the repository's documents (README.md, packages/NAME/README.md
 * and docs/**.md) and the fenced code blocks in them. A TypeScript or
 * JavaScript block is either a complete program, marked by `<!-- run: MPIEXEC-ARGS -->` on the line
 * before its fence (doc-examples.it.test.ts runs it through mpiexec with
 * those arguments; `<!-- run: MPIEXEC-ARGS; direct -->` also runs it without
 * mpiexec, as `npx tsx app.ts` does, a job of one process), or a fragment,
 * marked by the info string `ts fragment`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Repository-relative paths of README.md, the packages' README.md and every .md file under docs/. */
export function docFiles(): string[] {
  const out = ['README.md'];
  for (const p of fs.readdirSync(path.join(REPO, 'packages'))) {
    if (fs.existsSync(path.join(REPO, 'packages', p, 'README.md'))) out.push(path.join('packages', p, 'README.md'));
  }
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out.sort();
}

export interface CodeBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The language word of the info string (ts, js, text, ...), '' if none. */
  readonly lang: string;
  readonly fragment: boolean;
  /** mpiexec arguments of a `<!-- run: ... -->` mark, or null. */
  readonly run: string[] | null;
  /** The mark ends in `; direct`: the program also runs without mpiexec (`npx tsx app.ts`). */
  readonly direct: boolean;
  readonly code: string;
}

const PROGRAM_LANGS = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);

/** True for blocks in a language that a program can be written in. */
export function isProgramLang(lang: string): boolean {
  return PROGRAM_LANGS.has(lang);
}

/** The fenced blocks of one document. */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = fs.readFileSync(path.join(REPO, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (open === null) continue;
    let j = i + 1;
    while (j < lines.length && !lines[j]!.startsWith('```')) j++;
    const mark = i > 0 ? /^<!-- run: (.*?)(; direct)? -->$/.exec(lines[i - 1]!) : null;
    blocks.push({
      file,
      line: i + 1,
      lang: open[1]!,
      fragment: open[2]!.split(/\s+/).includes('fragment'),
      run: mark === null ? null : mark[1]!.trim().split(/\s+/),
      direct: mark?.[2] !== undefined,
      code: lines.slice(i + 1, j).join('\n'),
    });
    i = j;
  }
  return blocks;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a document's headings. */
export function anchors(file: string): Set<string> {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}
