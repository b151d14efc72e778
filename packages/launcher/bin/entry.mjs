// How the launcher's commands (bin/mpiexec.mjs, bin/tsmpi-proxy.mjs,
// bin/tsmpi-nameserver.mjs) load their module. In a checkout of the
// repository (src/ beside bin/) whose dist/ is older than its sources it runs
// the TypeScript sources: 1. tsx compiles .ts on the fly; 2. the
// source-condition hook (registered last, so it runs first) makes '@tsmpi/*'
// packages resolve to src/. An installed package has no src/, and a checkout
// built since its last source edit (`npx tsc -b`, then scripts/bundle-core.mjs:
// built-is-current.mjs) has the same code compiled: both run dist/'s bundle
// (dist/bundle/, ADR 0062), which starts without tsx.
import { existsSync } from 'node:fs';

/** Imports the launcher's module `name` (src/NAME.ts or dist/bundle/NAME.js, as above) and returns it. */
export async function importEntry(name) {
  const fromSource = existsSync(new URL(`../src/${name}.ts`, import.meta.url))
    && !(await import('./built-is-current.mjs')).builtIsCurrent();
  if (!fromSource) return import(`../dist/bundle/${name}.js`);
  const { register } = await import('node:module');
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  register('./source-condition-hook.mjs', import.meta.url);
  return import(`../src/${name}.ts`);
}
