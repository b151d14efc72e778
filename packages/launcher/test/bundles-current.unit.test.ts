// When the bundles that core's and the transport's exports name, and the launcher's commands run, count as current (ADRs 0052, 0062):
// bin/built-is-current.mjs's bundlesAreCurrent on packages folders made here, with file times set.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs of bin/, no declarations
import { BUNDLED, bundlesAreCurrent } from '../bin/built-is-current.mjs';

const check = bundlesAreCurrent as (dir: string) => boolean;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A packages folder whose bundled packages were built (tsc -b) at `builtS` and bundled at `bundledS` (null: no bundle). */
function packages(builtS: number, bundledS: (pkg: string) => number | null): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'tsmpi-bundles-'));
  dirs.push(root);
  for (const p of BUNDLED as string[]) {
    const dist = path.join(root, p, 'dist');
    mkdirSync(path.join(dist, 'bundle'), { recursive: true });
    writeFileSync(path.join(dist, '.tsbuildinfo'), '{}');
    utimesSync(path.join(dist, '.tsbuildinfo'), builtS, builtS);
    const at = bundledS(p);
    if (at === null) continue;
    writeFileSync(path.join(dist, 'bundle', 'index.js'), '');
    utimesSync(path.join(dist, 'bundle', 'index.js'), at, at);
  }
  return `${root}/`;
}

describe('bundlesAreCurrent (ADR 0052)', () => {
  it('names core, the transport and the launcher as the bundled packages', () => {
    expect(BUNDLED).toEqual(['core', 'transport-tcp', 'launcher']);
  });

  it('is true when every bundle was written after its dist/ was built', () => {
    expect(check(packages(1_000, () => 1_001))).toBe(true);
    expect(check(packages(1_000, () => 1_000))).toBe(true);
  });

  it('is false when tsc -b rebuilt a package after its bundle (npx tsc -b alone), or a bundle is missing', () => {
    expect(check(packages(1_001, (p) => (p === 'core' ? 1_000 : 1_002)))).toBe(false);
    expect(check(packages(1_001, (p) => (p === 'transport-tcp' ? 1_000 : 1_002)))).toBe(false);
    expect(check(packages(1_001, (p) => (p === 'launcher' ? 1_000 : 1_002)))).toBe(false);
    expect(check(packages(1_000, (p) => (p === 'core' ? null : 1_001)))).toBe(false);
  });
});
