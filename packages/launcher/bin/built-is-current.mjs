// In a checkout of the repository: whether the built JavaScript (dist/) of
// the launcher, core and transport-tcp is at least as new as every source file
// it is built from, so that the launcher's commands (bin/entry.mjs) may run it
// instead of compiling the sources through tsx (0.4-0.6 s of CPU at every
// start: docs/notebook/startup-2026-11.md). `npx tsc -b` rewrites each
// package's dist/.tsbuildinfo whenever its sources changed; a source edited
// since (or a package never built) sends mpiexec back to the sources. Tests
// are not built, so their files do not count. Costs a few ms of stat calls.
// The packages' exports name the bundles of core and the transport
// (scripts/bundle-core.mjs, `pnpm build`: ADR 0052), and the launcher's
// commands run its own (ADR 0062), so they count too: a bundle older than its
// package's dist/.tsbuildinfo is not current.
import { readdirSync, statSync } from 'node:fs';

const PACKAGES = ['launcher', 'core', 'transport-tcp'];
const NOT_BUILT = /\.test(-util)?\.ts$/;
/** The packages run from a bundle (dist/bundle/index.js) written after tsc -b: core's and the transport's exports name theirs, the launcher's commands run its own. */
export const BUNDLED = ['core', 'transport-tcp', 'launcher'];

/** The newest modification time (ms) of the built sources under `dir`. */
function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (!NOT_BUILT.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const packages = new URL('../../', import.meta.url).pathname;

/** True when every package's dist/ was built (tsc -b) after its last source change. */
export function distIsCurrent() {
  try {
    return PACKAGES.every((p) => statSync(`${packages}${p}/dist/.tsbuildinfo`).mtimeMs >= newestSource(`${packages}${p}/src`));
  } catch {
    return false; // a package not built
  }
}

/** True when every bundle under `dir` (the packages' folder) was written after its package's dist/ was last rebuilt. */
export function bundlesAreCurrent(dir = packages) {
  try {
    return BUNDLED.every((p) => statSync(`${dir}${p}/dist/bundle/index.js`).mtimeMs >= statSync(`${dir}${p}/dist/.tsbuildinfo`).mtimeMs);
  } catch {
    return false; // a bundle not written
  }
}

/** True when the built JavaScript the packages' exports name is current: dist/, then the bundles. */
export function builtIsCurrent() {
  return distIsCurrent() && bundlesAreCurrent();
}
