/**
 * Global setup of the integration project: when the packages' dist/ is
 * current, brings the bundles their exports name up to date
 * (scripts/bundle-core.mjs --if-stale: `npx tsc -b` alone leaves them older
 * than dist/, ADR 0052), so that no job runs a stale bundle, then writes the
 * test programs as plain JavaScript (built-programs.ts says why).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildPrograms } from './built-programs.ts';

export default async function setup(): Promise<void> {
  const check = new URL('../../launcher/bin/built-is-current.mjs', import.meta.url);
  const { distIsCurrent, builtIsCurrent } = (await import(check.href)) as { distIsCurrent: () => boolean; builtIsCurrent: () => boolean };
  if (distIsCurrent()) {
    const r = spawnSync(process.execPath, [fileURLToPath(new URL('../../../scripts/bundle-core.mjs', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('scripts/bundle-core.mjs failed: the integration jobs would run on a stale bundle');
  }
  buildPrograms(builtIsCurrent());
}
