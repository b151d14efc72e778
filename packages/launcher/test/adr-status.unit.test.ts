// docs/adr stays readable as a set: every ADR opens with its title and, on its third line, one status
// in one format (accepted / superseded by NNNN / rejected, an optional note after " — "), and
// docs/adr/README.md lists every ADR with the same status.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './doc-files.ts';

const ADR_DIR = path.join(REPO, 'docs/adr');
const adrs = fs.readdirSync(ADR_DIR).filter((f) => /^\d{4}-.+\.md$/.test(f)).sort();
const index = fs.readFileSync(path.join(ADR_DIR, 'README.md'), 'utf8');
const STATUS = /^Status: (accepted|superseded by (\d{4})|rejected)( — \S.*)?$/;

/** The status cell of NNNN's row in the index (its number linked or not), or null without a row. */
function indexStatus(num: string): string | null {
  const row = index.split('\n').find((l) => l.startsWith(`| [${num}](`) || l.startsWith(`| ${num} |`));
  return row === undefined ? null : row.split('|').at(-2)!.trim();
}

describe('the ADRs open with one status format', () => {
  it('finds the ADRs', () => {
    expect(adrs.length).toBeGreaterThan(20);
  });

  it.each(adrs)('%s opens with "# ADR NNNN: title" and a Status line', (file) => {
    const num = file.slice(0, 4);
    const lines = fs.readFileSync(path.join(ADR_DIR, file), 'utf8').split('\n');
    expect(lines[0]).toMatch(new RegExp(`^# ADR ${num}: \\S`));
    expect(lines[1]).toBe('');
    const status = STATUS.exec(lines[2]!);
    expect(status, `line 3 of ${file} must be "Status: accepted", "Status: superseded by NNNN" or "Status: rejected"`).not.toBeNull();
    if (status![2] !== undefined) expect(Number(status![2])).toBeGreaterThan(Number(num));
  });

  it.each(adrs)('docs/adr/README.md lists %s with the same status', (file) => {
    const num = file.slice(0, 4);
    const status = STATUS.exec(fs.readFileSync(path.join(ADR_DIR, file), 'utf8').split('\n')[2]!)?.[1];
    const cell = indexStatus(num);
    expect(cell, `docs/adr/README.md has no row for ${num}`).not.toBeNull();
    expect(cell!.startsWith(status ?? '?'), `index says "${cell}", ${file} says "${status}"`).toBe(true);
  });
});
