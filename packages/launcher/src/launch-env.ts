/**
 * The hosts and ssh arguments that other MPIs' launchers take from their
 * environment, read by mpiexec too, so that an environment set up for them
 * runs tsmpi unchanged. The Kubeflow MPI Operator sets them in its launcher
 * pod (the hostfile it mounts at /etc/mpi/hostfile, and
 * `-o ConnectionAttempts=10` for ssh), one pair per mpiImplementation:
 *
 *   Open MPI   OMPI_MCA_orte_default_hostfile   OMPI_MCA_plm_rsh_args
 *   MPICH      HYDRA_HOST_FILE                  HYDRA_LAUNCH_EXTRA_ARGS
 *   Intel MPI  I_MPI_HYDRA_HOST_FILE            I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS
 *
 * The hostfile counts only when the command line names no hosts (--hosts,
 * --hostfile win, as they do over those MPIs' defaults) and mpiexec starts
 * hosts with ssh: inside a Slurm allocation, Slurm's nodes win unless
 * --launcher ssh is given. The ssh arguments go before mpiexec's own ssh
 * options, so where both set one option (ConnectTimeout), the user's wins.
 * Hosts from such a hostfile may still be starting (the Operator starts the
 * launcher pod with its workers): ssh to them is retried for
 * DEFAULT_CONNECT_RETRY_SEC unless --connect-retry says otherwise; hosts
 * named on the command line are not retried unless --connect-retry asks.
 * Pure apart from reading the hostfile.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_CONNECT_RETRY_SEC } from './connect-retry.ts';
import type { LaunchOptions } from './options.ts';
import { parseHostfile } from './process-map.ts';
import { splitCommand } from './remote-command.ts';

/** Variables naming a hostfile, in the order they are looked at. */
export const HOSTFILE_VARS = ['OMPI_MCA_orte_default_hostfile', 'HYDRA_HOST_FILE', 'I_MPI_HYDRA_HOST_FILE'] as const;
/** Variables with extra arguments for the remote shell (ssh), in the order they are looked at. */
export const SSH_ARGS_VARS = ['OMPI_MCA_plm_rsh_args', 'HYDRA_LAUNCH_EXTRA_ARGS', 'I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS'] as const;

/** The options with what the environment adds, and --dry-run lines saying where it came from. */
export interface LaunchEnvResult {
  readonly options: LaunchOptions;
  readonly notes: readonly string[];
}

function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): [string, string] | null {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v.trim() !== '') return [n, v.trim()];
  }
  return null;
}

/** True when mpiexec will start other hosts with ssh (not fork, not Slurm). */
function usesSsh(o: LaunchOptions, env: NodeJS.ProcessEnv): boolean {
  if (o.hasExplicitLauncher) return o.launcher === 'ssh';
  const inSlurm = (env['SLURM_JOB_ID'] ?? env['SLURM_JOBID'] ?? '') !== '';
  return !inSlurm;
}

/**
 * Applies the hostfile and ssh-argument variables of `env` to `o`.
 * @returns the new options, or an Error with a one-line message naming the variable (exit 2)
 */
export function applyLaunchEnv(o: LaunchOptions, env: NodeJS.ProcessEnv): LaunchEnvResult | Error {
  if (!usesSsh(o, env)) return { options: o, notes: [] };
  const notes: string[] = [];
  let hosts = o.hosts;
  const file = hosts === null ? firstSet(env, HOSTFILE_VARS) : null;
  if (file !== null) {
    const [name, value] = file;
    let text: string;
    try {
      text = readFileSync(value, 'utf8');
    } catch (err) {
      return new Error(`${name}=${value}: cannot read the hostfile (${(err as NodeJS.ErrnoException).code ?? 'error'}); unset ${name} or give --hosts/--hostfile`);
    }
    const parsed = parseHostfile(text, `${value} (from ${name})`);
    if (parsed instanceof Error) return parsed;
    hosts = parsed;
    notes.push(`hosts: from ${name}=${value}`);
  }
  // Hosts an orchestrator wrote for us may still be starting (pods); hosts a person typed are there or mistyped.
  const connectRetrySec = o.connectRetrySec ?? (file !== null ? DEFAULT_CONNECT_RETRY_SEC : null);
  let launcherExec = o.launcherExec;
  const extra = firstSet(env, SSH_ARGS_VARS);
  if (extra !== null) {
    const [name, value] = extra;
    const words = splitCommand(value);
    if (words instanceof Error) return new Error(`${name}=${value}: unbalanced quote`);
    launcherExec = [...(launcherExec ?? ['ssh']), ...words];
    notes.push(`ssh arguments: from ${name}=${value}`);
  }
  return { options: { ...o, hosts, launcherExec, connectRetrySec }, notes };
}
