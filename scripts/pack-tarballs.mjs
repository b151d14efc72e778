#!/usr/bin/env node
// Builds the packages (tsc -b writes dist/, scripts/bundle-core.mjs the bundles their exports name) and packs the ones a user installs
// into tarballs/ with pnpm pack, which rewrites the exports to dist/ and the
// workspace:* dependencies to versions. Prints the npm command that installs
// them into another project.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'tarballs');
const PACKAGES = ['core', 'transport-tcp', 'launcher'];

// Settings pnpm puts in the environment of the scripts it runs that npm (npx, below) does not
// know: npm would warn about each, once per package ("Unknown env config").
const PNPM_ONLY_SETTINGS = /^npm_config_(verify_deps_before_run|npm_globalconfig|_jsr_registry)$/i;
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !PNPM_ONLY_SETTINGS.test(k)));

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) {
    console.error(`pack-tarballs: ${cmd} ${args.join(' ')} failed in ${path.relative(root, cwd) || '.'}`);
    process.exit(1);
  }
}

run(path.join(root, 'node_modules/.bin/tsc'), ['-b'], root);
run(process.execPath, [path.join(root, 'scripts/bundle-core.mjs')], root); // always written here: a tarball never ships a bundle older than dist/ (ADR 0052)
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
for (const p of PACKAGES) run('npx', ['-y', 'pnpm@10', 'pack', '--pack-destination', out], path.join(root, 'packages', p));
const files = readdirSync(out).filter((f) => f.endsWith('.tgz')).sort();
console.log(`packed into ${path.relative(process.cwd(), out) || '.'}: ${files.join(' ')}`);
console.log(`install in your project: npm install ${files.map((f) => path.join(out, f)).join(' ')}`);
