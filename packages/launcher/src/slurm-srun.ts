/**
 * The `srun` command that starts mpiexec's per-host proxies through Slurm
 * (issue 12): one step, one task (one proxy) per node. Pure: the caller runs
 * the command. Cross-checked against what Hydra (bootstrap/external/
 * slurm_launch.c: `srun --nodelist L -N n -n n --input none`) and PRRTE
 * (plm/slurm: `srun [--external-launcher] --ntasks-per-node=1
 * --kill-on-bad-exit --mpi=none --cpu-bind=none --nodes --nodelist --ntasks`)
 * pass, and against srun(1) of Slurm 22.05:
 *
 *   --nodes=N --ntasks=N --ntasks-per-node=1   one proxy per node
 *   --nodelist=L            inside an allocation: exactly the nodes mpiexec placed ranks on
 *   --kill-on-bad-exit=1    a proxy that fails takes the step down (mpiexec's fail-fast backs it)
 *   --cpu-bind=none         the proxy and its ranks may use every CPU Slurm gave the job on the node
 *   --mpi=none              the proxies are not MPI tasks: no PMI plugin even if MpiDefault sets one
 *   --export=ALL            the proxies get mpiexec's environment (TSMPI_* settings, PATH) even when
 *                           `sbatch --export=NONE` left SLURM_EXPORT_ENV=NONE behind
 *   --input=all             srun's stdin goes to every proxy: mpiexec writes there one launch spec
 *                           line per node, each with the job key, and keeps it open (its end tells the
 *                           proxies mpiexec is gone), so the key is never in argv (ps, scontrol show
 *                           step) nor in the step's environment, and the terminal's stdin is not read
 *   inside an allocation, Slurm >= 23.11: --external-launcher (what PRRTE passes; implies overlap)
 *   inside an allocation, 20.11 - 23.02:  --overlap
 *                           since 20.11 a step does not share CPUs with other running steps; without
 *                           this the proxies' step would wait forever behind the step mpiexec itself
 *                           runs in (`srun --pty bash`, interactive steps) and a second mpiexec in the
 *                           same allocation would wait for the first.
 *   --exact is NOT passed:  by default a step gets all the job's CPUs on its nodes, which the ranks need.
 *   task numbering:         srun numbers the tasks in Slurm's node order, not in --nodelist's
 *                           (`--nodelist=n03,n01` puts task 0 on n01), so a proxy finds its host in
 *                           SLURMD_NODENAME (the name SLURM_JOB_NODELIST uses), not in SLURM_PROCID.
 *   outside an allocation:  srun makes its own (`srun -N n -n n`); --cpus-per-task=P reserves the CPUs
 *                           of the P ranks each proxy will fork, and --job-name names it in squeue.
 */
import { JOB_ENV } from '@tsmpi/core/pmi';
import { compressHostlist } from './slurm-hostlist.ts';

/** A Slurm release, from `srun --version` ("slurm 23.11.4", "slurm-wlm 22.05.8"). */
export interface SlurmVersion {
  readonly major: number;
  readonly minor: number;
  readonly micro: number;
}

/**
 * Reads `srun --version` output.
 * @returns the version, or null when the text has none (then the newest rules are not assumed).
 * @example parseSlurmVersion('slurm-wlm 22.05.8\n') // { major: 22, minor: 5, micro: 8 }
 */
export function parseSlurmVersion(text: string): SlurmVersion | null {
  const m = /^slurm(?:-wlm)?\s+(\d+)\.(\d+)(?:\.(\d+))?/m.exec(text.trim());
  if (m === null) return null;
  return { major: Number(m[1]), minor: Number(m[2]), micro: m[3] === undefined ? 0 : Number(m[3]) };
}

function atLeast(v: SlurmVersion, major: number, minor: number): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}

/** Where the proxies run. */
export type SrunTarget =
  /** Inside an allocation (SLURM_JOB_ID set): one proxy on each of these nodes, in this order. */
  | { readonly kind: 'allocation'; readonly hosts: readonly string[] }
  /** No allocation: srun asks Slurm for `nodes` nodes (these, when given) with `cpusPerProxy` CPUs each for the ranks. */
  | { readonly kind: 'new'; readonly nodes: number; readonly cpusPerProxy: number; readonly jobName: string; readonly hosts?: readonly string[] };

/** Everything buildSrunCommand needs; the job key is not part of it. */
export interface SrunRequest {
  /** The srun to run (`srun`, or --launcher-exec). */
  readonly srun: string;
  readonly target: SrunTarget;
  /** From parseSlurmVersion; null when unknown (then --overlap, which every Slurm since 20.11 takes). */
  readonly version: SlurmVersion | null;
  /** What each proxy runs: absolute node path, the proxy script, its arguments. */
  readonly proxyArgv: readonly string[];
  /** Extra srun options from the user, placed before the proxy command. */
  readonly extraArgs?: readonly string[];
  /** Strings that must not appear in the command line (the job key): checked, never trusted. */
  readonly secrets?: readonly string[];
}

/** The srun to run, and what to write on its stdin. */
export interface SrunCommand {
  readonly argv: readonly string[];
  /** What mpiexec writes on srun's stdin before closing it: the key line each proxy reads first. */
  readonly stdinLine: 'job-key';
}

/**
 * Builds the srun command line for the proxies.
 * @returns the argv (argv[0] is srun), or an Error when the request is
 * impossible (no hosts, a secret would show on the command line, bad counts).
 */
export function buildSrunCommand(req: SrunRequest): SrunCommand | Error {
  const argv: string[] = [req.srun];
  const t = req.target;
  if (t.kind === 'allocation') {
    if (t.hosts.length === 0) return new Error('srun: no node to start a proxy on');
    if (new Set(t.hosts).size !== t.hosts.length) return new Error('srun: a node is listed twice; one proxy per node');
    const n = t.hosts.length;
    argv.push(`--nodes=${n}`, `--ntasks=${n}`, '--ntasks-per-node=1', `--nodelist=${compressHostlist(t.hosts)}`);
    if (req.version !== null && atLeast(req.version, 23, 11)) argv.push('--external-launcher');
    else if (req.version === null || atLeast(req.version, 20, 11)) argv.push('--overlap');
  } else {
    if (!Number.isInteger(t.nodes) || t.nodes < 1) return new Error(`srun: nodes ${t.nodes} must be a positive integer`);
    if (!Number.isInteger(t.cpusPerProxy) || t.cpusPerProxy < 1) return new Error(`srun: cpusPerProxy ${t.cpusPerProxy} must be a positive integer`);
    argv.push(`--nodes=${t.nodes}`, `--ntasks=${t.nodes}`, '--ntasks-per-node=1', `--cpus-per-task=${t.cpusPerProxy}`, `--job-name=${t.jobName}`);
    if (t.hosts !== undefined) {
      if (t.hosts.length !== t.nodes || new Set(t.hosts).size !== t.nodes) return new Error(`srun: ${t.nodes} node(s) but the host list ${t.hosts.join(',')} does not name ${t.nodes} distinct nodes`);
      argv.push(`--nodelist=${compressHostlist(t.hosts)}`);
    }
  }
  argv.push('--kill-on-bad-exit=1', '--cpu-bind=none', '--mpi=none', '--export=ALL', '--input=all');
  if (req.extraArgs !== undefined) argv.push(...req.extraArgs);
  if (req.proxyArgv.length === 0) return new Error('srun: no proxy command');
  argv.push(...req.proxyArgv);
  for (const s of req.secrets ?? []) {
    if (s !== '' && argv.some((a) => a.includes(s))) return new Error('srun: the job key would show on the command line; refusing');
  }
  return { argv, stdinLine: 'job-key' };
}

/**
 * The environment srun runs with: mpiexec's own, without the job key (the
 * proxies read it from stdin) and without SLURM_* variables that would
 * override the options above (srun reads SLURM_CPU_BIND, SLURM_EXACT,
 * SLURM_OVERLAP, SLURM_STDINMODE ... as defaults for its options; explicit
 * options win, but SLURM_EXACT and SLURM_NTASKS_PER_NODE style inputs would
 * still shape the step).
 * @param env mpiexec's environment
 */
export function srunEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k === JOB_ENV.jobKey) continue;
    if (SRUN_INPUT_VARS.has(k)) continue;
    out[k] = v;
  }
  return out;
}

/** srun(1) "INPUT ENVIRONMENT VARIABLES" that would change the proxies' step behind the options' back. */
const SRUN_INPUT_VARS: ReadonlySet<string> = new Set([
  'SLURM_EXACT', 'SLURM_CPUS_PER_TASK', 'SLURM_NTASKS_PER_NODE', 'SLURM_DISTRIBUTION', 'SLURM_CPU_BIND',
  'SLURM_MEM_BIND', 'SLURM_STDINMODE', 'SLURM_STDOUTMODE', 'SLURM_STDERRMODE', 'SLURM_EXPORT_ENV',
  'SLURM_OVERLAP', 'SLURM_MPI_TYPE', 'SLURM_WHOLE',
]);
