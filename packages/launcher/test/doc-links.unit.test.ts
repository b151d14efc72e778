// The documents stand on their own: every relative link in README.md and docs/**.md resolves inside the
// repository (anchors included), no committed file cites a path that exists only on a development machine,
// every file path a document names in a code span exists (or left main with ADR 0028, listed in
// docs/adr/0028-files-left-main.txt: older documents may name the code they describe), and every paper that a comment cites as papers/NAME.txt is listed in docs/REFERENCES.md.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, docFiles, REPO, slug } from './doc-files.ts';

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'bench-results', 'build', 'coverage']);
const TEXT = /\.(ts|mts|cts|mjs|cjs|js|json|md|sh|c|ya?ml|txt|svg)$|^run$/;
// Spelled in pieces so that this file does not match itself.
const MACHINE_PATHS = ['/' + 'work/', '../' + 'shared/'];

function committedTextFiles(dir = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(REPO, dir), { withFileTypes: true })) {
    if (SKIP_DIRS.has(e.name)) continue;
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...committedTextFiles(rel));
    else if (e.isFile() && TEXT.test(e.name)) out.push(rel);
  }
  return out;
}

/** [target, line] of every markdown link and image in a document, code blocks and code spans left out. */
function links(file: string): [string, number][] {
  const out: [string, number][] = [];
  let inBlock = false;
  fs.readFileSync(path.join(REPO, file), 'utf8').split('\n').forEach((line, i) => {
    if (line.startsWith('```')) inBlock = !inBlock;
    if (inBlock) return;
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push([m[1]!, i + 1]);
  });
  return out;
}

/** Paths that left main with ADR 0028 (moved ones by their old path), which older documents may still name. */
const LEFT_MAIN = new Set(
  fs.readFileSync(path.join(REPO, 'docs/adr/0028-files-left-main.txt'), 'utf8').split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => l.split(' -> ')[0]!.trim()),
);

describe('documents link only inside the repository', () => {
  const files = docFiles();

  it('finds the documents', () => {
    expect(files).toContain('README.md');
    expect(files).toContain(path.join('packages', 'core', 'README.md'));
    expect(files).toContain(path.join('docs', 'API.md'));
  });

  it.each(files)('every relative link in %s resolves', (file) => {
    const broken: string[] = [];
    for (const [target, line] of links(file)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [rel, anchor] = target.split('#') as [string, string | undefined];
      const resolved = rel === '' ? path.join(REPO, file) : path.resolve(REPO, path.dirname(file), decodeURIComponent(rel));
      if (!resolved.startsWith(REPO + path.sep) || !fs.existsSync(resolved)) {
        broken.push(`${file}:${line}: ${target} (no such file in the repository)`);
      } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(path.relative(REPO, resolved)).has(anchor)) {
        broken.push(`${file}:${line}: ${target} (no heading with anchor #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('every repository file that %s names in a code span exists', (file) => {
    const text = fs.readFileSync(path.join(REPO, file), 'utf8');
    const missing = [...text.matchAll(/`([\w.-]+(?:\/[\w.-]+)+\.(?:ts|mts|mjs|md|json|sh|c|svg))`/g)]
      .map((m) => m[1]!)
      .filter((p) => !fs.existsSync(path.join(REPO, p)) && !fs.existsSync(path.join(REPO, path.dirname(file), p)) && !LEFT_MAIN.has(p));
    expect(missing, 'name files by their path from the repository root').toEqual([]);
  });

  it('no committed file cites a development-machine path', () => {
    const hits: string[] = [];
    for (const f of committedTextFiles()) {
      fs.readFileSync(path.join(REPO, f), 'utf8').split('\n').forEach((line, i) => {
        if (MACHINE_PATHS.some((p) => line.includes(p))) hits.push(`${f}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(hits).toEqual([]);
  });

  it('every paper cited as papers/NAME.txt is listed in docs/REFERENCES.md', () => {
    const refs = fs.readFileSync(path.join(REPO, 'docs/REFERENCES.md'), 'utf8');
    const missing = new Set<string>();
    for (const f of committedTextFiles()) {
      for (const m of fs.readFileSync(path.join(REPO, f), 'utf8').matchAll(/papers\/([\w-]+)\.txt/g)) {
        if (!refs.includes(`\`papers/${m[1]}.txt\``)) missing.add(`${m[1]} (cited in ${f})`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('slug() follows GitHub: "Request, Status, Message" -> request-status-message', () => {
    expect(slug('Request, Status, Message')).toBe('request-status-message');
    expect(slug('Datatype, pack and unpack')).toBe('datatype-pack-and-unpack');
  });
});
