// STYLE.md rules 16 and 23: docs/ERRORS.md lists every error class and docs/SETTINGS.md every setting.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as MPI from '@tsmpi/core';
import { SETTINGS } from '@tsmpi/core/pmi';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs');
const errorsDoc = fs.readFileSync(path.join(DOCS, 'ERRORS.md'), 'utf8');
const settingsDoc = fs.readFileSync(path.join(DOCS, 'SETTINGS.md'), 'utf8');
const errorNames = Object.keys(MPI).filter((k) => k.startsWith('ERR_') || k === 'SUCCESS');

describe('docs stay in step with the tables', () => {
  it.each(errorNames)('ERRORS.md documents %s with its value and errorString', (name) => {
    const value = (MPI as unknown as Record<string, number>)[name]!;
    expect(errorsDoc).toContain(`| \`${name}\` | ${value} |`);
    // Each row gives a cause and a fix (issue 39): five cells, the last two not empty.
    const row = errorsDoc.split('\n').find((l) => l.startsWith(`| \`${name}\` | ${value} |`))!;
    const cells = row.split(' | ');
    expect(cells, row).toHaveLength(5);
    expect(cells[3]!.trim()).not.toBe('');
    expect(cells[4]!.replace(/\|$/, '').trim()).not.toBe('');
    expect(MPI.errorString(value)).toMatch(new RegExp(`^MPI_${name}: `));
  });

  it.each(SETTINGS.map((s) => [s.name, s.env] as const))('SETTINGS.md documents %s (%s)', (name, env) => {
    expect(settingsDoc).toContain(`| \`${name}\` | \`${env}\` |`);
  });
});
