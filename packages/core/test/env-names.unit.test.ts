// Every TSMPI_* environment variable a user or the launcher sets is named in one of two places:
// the settings table (config/settings.ts, tunables, docs/SETTINGS.md) or the launcher-to-rank job
// environment (config/job-env.ts JOB_ENV). This test reads every TSMPI_ name in the product's
// sources (packages/*/src, not tests) and fails on one that is in neither; TSMPI_ERR_* are the
// transport's error codes, not variables. Test knobs (TSMPI_TEST_*, TSMPI_FUZZ_*) live in tests only.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { JOB_ENV, SETTINGS } from '../src/config/index.ts';
import { REQUEST_SLOTS_ENV } from '../src/device/completion.ts';

const PACKAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return /\.(ts|mts|js|mjs)$/.test(d.name) && !/\.test\.|\.test-util\./.test(d.name) ? [p] : [];
  });
}

const files = fs.readdirSync(PACKAGES).flatMap((pkg) => sources(path.join(PACKAGES, pkg, 'src')));
const known = new Set<string>([...SETTINGS.map((r) => r.env), ...Object.values(JOB_ENV)]);

describe('TSMPI_ environment variables', () => {
  it('reads sources of every package', () => {
    expect(files.some((f) => f.includes(`${path.sep}launcher${path.sep}`))).toBe(true);
    expect(files.some((f) => f.includes(`${path.sep}core${path.sep}`))).toBe(true);
  });

  it('every TSMPI_ name in the product is a setting or part of the job environment', () => {
    const unknown: string[] = [];
    const seen = new Set<string>();
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      for (const m of text.matchAll(/\bTSMPI_[A-Z0-9_]*[A-Z0-9]\b/g)) {
        const name = m[0];
        seen.add(name);
        if (name.startsWith('TSMPI_ERR_') || known.has(name)) continue;
        unknown.push(`${path.relative(PACKAGES, f)}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
    // The scan sees the launcher's names (the transport setting it fills in, the job environment).
    expect(seen).toContain('TSMPI_TRANSPORT');
    expect(seen).toContain('TSMPI_RANK');
  });

  it("the device's name for requestSlots is the table's", () => {
    expect(SETTINGS.find((r) => r.name === 'requestSlots')?.env).toBe(REQUEST_SLOTS_ENV);
  });
});
