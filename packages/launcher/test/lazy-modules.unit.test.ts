// What mpiexec loads before it starts a job on this machine alone (issue 38, start-up): the ssh and
// Slurm launchers (launchers.ts loadProxyBackends), the dashboard (job.ts, with --dashboard), the help
// text and srun's version parser (main.ts) load only where they are used. Checked on the real module
// graph, as core's lazy-modules.unit.test.ts does: a child Node records every module its loader
// resolves (core's test/modules-loaded.ts), then imports main.ts from the sources.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { modulesLoadedBy } from '../../core/test/modules-loaded.ts';

const LAUNCHER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = pathToFileURL(path.join(LAUNCHER, 'src')).href;

/** Files of the launcher's src/ that a local job does not load; a name ending in '-' stands for every file it begins. */
const LAZY = [
  'ssh-launcher.ts', 'slurm-launcher.ts', 'proxy-launcher.ts', 'slurm-step.ts', 'slurm-srun.ts', 'slurm-srun-output.ts',
  'dashboard.ts', 'dashboard-', 'help.ts',
];

let loaded: string[] = [];

beforeAll(() => {
  loaded = modulesLoadedBy(LAUNCHER, pathToFileURL(path.join(LAUNCHER, 'src', 'main.ts')).href);
}, 90_000);

describe('importing mpiexec\'s main.ts (issue 38)', () => {
  it('records the module graph (the hook sees the launcher\'s own modules)', () => {
    expect(loaded).toContain(`${SRC}/main.ts`);
    expect(loaded).toContain(`${SRC}/job.ts`);
    expect(loaded).toContain(`${SRC}/launchers.ts`);
    expect(loaded).toContain(`${SRC}/fork-launcher.ts`);
  });

  it('does not load the proxy backends, the dashboard or the help text', () => {
    const own = loaded.filter((u) => u.startsWith(`${SRC}/`)).map((u) => u.slice(SRC.length + 1));
    expect(own.filter((f) => LAZY.some((l) => (l.endsWith('-') ? f.startsWith(l) : f === l)))).toEqual([]);
  });
});
