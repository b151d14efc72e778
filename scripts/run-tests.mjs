#!/usr/bin/env node
// Runs the whole vitest suite (unit, then integration) and ends with one plain
// line "tests: N passed, N failed[, N skipped]" that CI reads. Extra arguments
// go to vitest (e.g. --project unit).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const outDir = path.join(root, 'node_modules/.cache');
const report = path.join(outDir, 'vitest-report.json');
mkdirSync(outDir, { recursive: true });
rmSync(report, { force: true });
const vitest = path.join(root, 'node_modules/.bin/vitest');
const args = ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const res = spawnSync(vitest, args, { cwd: root, stdio: 'inherit' });
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
  if (r.numTotalTests === 0) {
    console.log('tests: no test ran');
    process.exit(1);
  }
}
process.exit(res.status ?? 1);
