#!/usr/bin/env node
// mpiexec (also tsmpiexec). In a checkout of the repository (src/ beside
// bin/) it runs the launcher from its TypeScript sources: 1. tsx compiles .ts
// on the fly; 2. the source-condition hook (registered last, so it runs first)
// makes '@tsmpi/*' packages resolve to src/. An installed package has no src/
// and runs the JavaScript that `pnpm build` wrote to dist/.
import { existsSync } from 'node:fs';

if (existsSync(new URL('../src/cli.ts', import.meta.url))) {
  const { register } = await import('node:module');
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  register('./source-condition-hook.mjs', import.meta.url);
  await import('../src/cli.ts');
} else {
  await import('../dist/cli.js');
}
