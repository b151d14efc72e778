/**
 * Where a process's wire-up comes from, chosen once at MPI.init
 * (runtime/bootstrap.ts): tsmpi's own mpiexec (TSMPI_PMI_URL: its WebSocket
 * service, pmi/), a foreign launcher that speaks PMI (PMI_FD or PMI_PORT:
 * pmi-direct/, docs/adr/0035-pmi-direct-launch.md), or none (a singleton).
 * Each client is loaded only when its launcher is there.
 */
import { takeJobEnv, type JobEnv } from '../config/index.ts';
import type { PmiClient } from '../pmi/index.ts';

/**
 * The job this process belongs to and its wire-up client, both null for a singleton; `transport`:
 * the transport module's URL that a PMI-launched rank found itself (mpiexec names it in the
 * environment), null to keep the setting.
 */
export async function joinJob(env: NodeJS.ProcessEnv = process.env): Promise<{ job: JobEnv | null; pmi: PmiClient | null; transport: string | null }> {
  // The key leaves process.env here: children this rank starts do not inherit it.
  const own = takeJobEnv(env);
  if (own !== null) {
    const { connectPmi } = await import('../pmi/index.ts');
    return { job: own, pmi: await connectPmi(own), transport: null };
  }
  if ((env['PMI_FD'] ?? '') === '' && (env['PMI_PORT'] ?? '') === '') return { job: null, pmi: null, transport: null };
  const { detectPmiLaunch, joinByPmi } = await import('../pmi-direct/index.ts');
  const launch = detectPmiLaunch(env);
  return launch === null ? { job: null, pmi: null, transport: null } : joinByPmi(launch, env);
}
