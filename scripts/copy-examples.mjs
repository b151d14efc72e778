#!/usr/bin/env node
// The examples a user reads about in README.md and docs/GUIDE.md ship in @tsmpi/core's tarball:
// pnpm pack runs this as the package's prepack (copies examples/*.ts of the repository into
// packages/core/examples/, which git ignores) and, with --remove, as its postpack. The
// repository keeps one copy of them, at its root.
import { cpSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const into = path.join(root, 'packages/core/examples');
rmSync(into, { recursive: true, force: true });
if (!process.argv.includes('--remove')) {
  for (const f of readdirSync(path.join(root, 'examples')).filter((n) => n.endsWith('.ts'))) {
    cpSync(path.join(root, 'examples', f), path.join(into, f));
  }
}
