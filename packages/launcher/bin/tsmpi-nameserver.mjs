#!/usr/bin/env node
// tsmpi-nameserver (src/nameserver-main.ts): publishName / lookupName between
// separately started mpiexec jobs (docs/adr/0046-name-server-between-jobs.md).
// Like bin/mpiexec.mjs, it runs the TypeScript sources in a checkout of the
// repository (src/ beside bin/) whose dist/ is older than its sources, and the
// built dist/ in an installed package or a checkout built since its last edit.
import { existsSync } from 'node:fs';

let runNameserver;
const fromSource = existsSync(new URL('../src/nameserver-main.ts', import.meta.url))
  && !(await import('./built-is-current.mjs')).builtIsCurrent();
if (fromSource) {
  const { register } = await import('node:module');
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  register('./source-condition-hook.mjs', import.meta.url);
  ({ runNameserver } = await import('../src/nameserver-main.ts'));
} else {
  ({ runNameserver } = await import('../dist/nameserver-main.js'));
}
const status = await runNameserver(process.argv.slice(2));
// Let stderr's last line leave the process before exiting.
await new Promise((resolve) => process.stderr.write('', resolve));
process.exit(status);
