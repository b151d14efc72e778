#!/usr/bin/env node
// The per-host proxy of a multi-host job (src/proxy.ts); mpiexec starts it
// on each remote host through ssh and writes its launch spec on stdin. Like
// bin/mpiexec.mjs, it runs the TypeScript sources in a checkout of the
// repository (src/ beside bin/) whose dist/ is older than its sources, and the
// built dist/ in an installed package or a checkout built since its last edit.
import { existsSync } from 'node:fs';

let runProxy;
const fromSource = existsSync(new URL('../src/proxy.ts', import.meta.url))
  && !(await import('./built-is-current.mjs')).builtIsCurrent();
if (fromSource) {
  const { register } = await import('node:module');
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  register('./source-condition-hook.mjs', import.meta.url);
  ({ runProxy } = await import('../src/proxy.ts'));
} else {
  ({ runProxy } = await import('../dist/proxy.js'));
}
await runProxy();
