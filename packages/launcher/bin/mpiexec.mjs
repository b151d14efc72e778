#!/usr/bin/env node
// mpiexec (also tsmpiexec): runs the launcher from its TypeScript sources.
// 1. tsx compiles .ts on the fly; 2. the source-condition hook (registered
// last, so it runs first) makes '@tsmpi/*' packages resolve to src/.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./source-condition-hook.mjs', import.meta.url);
await import('../src/cli.ts');
