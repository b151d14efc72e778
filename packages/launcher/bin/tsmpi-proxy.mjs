#!/usr/bin/env node
// The per-host proxy of a multi-host job (src/proxy.ts); mpiexec starts it
// on each remote host through ssh and writes its launch spec on stdin. Runs
// from the TypeScript sources as bin/mpiexec.mjs does.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./source-condition-hook.mjs', import.meta.url);
const { runProxy } = await import('../src/proxy.ts');
await runProxy();
