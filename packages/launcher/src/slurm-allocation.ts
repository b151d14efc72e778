/**
 * What mpiexec reads from a Slurm allocation (issue 12): turns the SLURM_*
 * environment of an `salloc` shell, an `sbatch` script or an srun step into
 * hosts with slots and a default -n. Pure: the environment is passed in.
 *
 * Variables read (checked on Slurm 22.05 in scripts/slurm-cluster.sh; the same
 * names Hydra's bootstrap/slurm and PRRTE's ras/slurm read):
 *   SLURM_JOB_ID (or the older SLURM_JOBID)   inside an allocation at all
 *   SLURM_JOB_NODELIST (or SLURM_NODELIST)     the job's nodes, a hostlist expression
 *   SLURM_JOB_NUM_NODES (or SLURM_NNODES)      cross-check of the node count
 *   SLURM_TASKS_PER_NODE                       slots per node, `2(x3),1`
 *   SLURM_NTASKS (or SLURM_NPROCS)             default -n (absent after `salloc -N 2`)
 *   SLURM_STEP_ID                              set inside an srun step
 *   SLURM_JOB_CPUS_PER_NODE, SLURM_CPUS_PER_TASK   slots inside a step (below)
 *   SLURM_HET_SIZE                             heterogeneous job: refused
 *
 * Inside an srun step (e.g. `srun --pty bash`, or salloc with
 * LaunchParameters=use_interactive_step) Slurm rewrites SLURM_TASKS_PER_NODE,
 * SLURM_NTASKS and SLURM_NNODES for the step, but SLURM_JOB_NODELIST and
 * SLURM_JOB_CPUS_PER_NODE still describe the job (seen on 22.05). There the
 * slots are the job's CPUs per node divided by SLURM_CPUS_PER_TASK, as PRRTE
 * does for a tool started in a step, and -n defaults to their sum: mpiexec
 * uses the whole allocation, and its own srun step needs --overlap (see
 * slurm-srun.ts) so the step it runs in does not block it.
 */
import { expandHostlist } from './slurm-hostlist.ts';
import { parseSlurmCounts } from './slurm-counts.ts';

/** An allocated node and the ranks it takes before wrapping (same shape as process-map's HostSlots). */
export interface SlurmHost {
  readonly host: string;
  readonly slots: number;
}

/** A Slurm allocation as mpiexec uses it. */
export interface SlurmAllocation {
  readonly jobId: string;
  /** Set when mpiexec itself runs inside an srun step. */
  readonly stepId: string | null;
  /** The nodes in Slurm's order, each with at least one slot. */
  readonly hosts: readonly SlurmHost[];
  /** What -n defaults to. */
  readonly defaultNp: number;
  /** The variables the answer came from, for --dry-run. */
  readonly source: {
    readonly nodelist: string;
    readonly slots: string;
    readonly np: string;
  };
}

/** readSlurmAllocation's answer: not in Slurm, an allocation, or a broken environment. */
export type SlurmEnvResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'allocation'; readonly allocation: SlurmAllocation }
  | { readonly kind: 'error'; readonly message: string };

type Env = Readonly<Record<string, string | undefined>>;

/** The first of `names` that is set and not empty, with its name. */
function pick(env: Env, ...names: string[]): [string, string] | null {
  for (const n of names) {
    const v = env[n];
    if (v !== undefined && v !== '') return [n, v];
  }
  return null;
}

function positive(name: string, v: string): number | string {
  if (!/^\d+$/.test(v.trim()) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) return `${name}="${v}" is not a positive integer`;
  return Number(v);
}

function fail(message: string): SlurmEnvResult {
  return { kind: 'error', message: `Slurm allocation: ${message}` };
}

/**
 * Reads the allocation mpiexec runs in.
 * @param env the process environment (process.env in cli.ts)
 * @returns `none` outside Slurm; `allocation` with hosts, slots and default
 * -n; `error` with a one-line message naming the variable when the
 * environment is inconsistent (mpiexec prints it and exits 2).
 * @example readSlurmAllocation({ SLURM_JOB_ID: '7', SLURM_JOB_NODELIST: 'n[1-2]', SLURM_TASKS_PER_NODE: '2(x2)', SLURM_NTASKS: '4' })
 */
export function readSlurmAllocation(env: Env): SlurmEnvResult {
  const job = pick(env, 'SLURM_JOB_ID', 'SLURM_JOBID');
  if (job === null) return { kind: 'none' };
  const jobId = job[1];
  const het = pick(env, 'SLURM_HET_SIZE');
  if (het !== null) {
    return fail(`job ${jobId} is heterogeneous (SLURM_HET_SIZE=${het[1]}): not supported; run mpiexec with --launcher ssh --hosts ..., or in a one-component job`);
  }
  const nl = pick(env, 'SLURM_JOB_NODELIST', 'SLURM_NODELIST');
  if (nl === null) return fail(`${job[0]}=${jobId} is set but SLURM_JOB_NODELIST is not; unset ${job[0]} or choose --launcher fork|ssh`);
  const nodes = expandHostlist(nl[1]);
  if (nodes instanceof Error) return fail(`${nl[0]}="${nl[1]}": ${nodes.message}`);

  const step = pick(env, 'SLURM_STEP_ID', 'SLURM_STEPID');
  const stepId = step === null ? null : step[1];
  // SLURM_NNODES is the step's inside a step; SLURM_JOB_NUM_NODES stays the job's.
  const num = stepId === null ? pick(env, 'SLURM_JOB_NUM_NODES', 'SLURM_NNODES') : pick(env, 'SLURM_JOB_NUM_NODES');
  if (num !== null) {
    const n = positive(num[0], num[1]);
    if (typeof n === 'string') return fail(n);
    if (n !== nodes.length) return fail(`${num[0]}=${n} but ${nl[0]}="${nl[1]}" names ${nodes.length} node(s)`);
  }

  let counts: number[];
  let slotsFrom: string;
  let countsVar: string;
  const tpn = stepId === null ? pick(env, 'SLURM_TASKS_PER_NODE') : null;
  if (tpn !== null) {
    const c = parseSlurmCounts(tpn[1]);
    if (c instanceof Error) return fail(`${tpn[0]}="${tpn[1]}" ${c.message}`);
    counts = c;
    slotsFrom = `${tpn[0]}=${tpn[1]}`;
    countsVar = `${tpn[0]}="${tpn[1]}"`;
  } else {
    const cpn = pick(env, 'SLURM_JOB_CPUS_PER_NODE');
    if (cpn === null) {
      return fail(stepId === null
        ? 'neither SLURM_TASKS_PER_NODE nor SLURM_JOB_CPUS_PER_NODE is set; give --hosts, or run inside salloc/sbatch'
        : `inside step ${jobId}.${stepId} SLURM_JOB_CPUS_PER_NODE is not set; run mpiexec from the salloc shell or the sbatch script`);
    }
    const c = parseSlurmCounts(cpn[1]);
    if (c instanceof Error) return fail(`${cpn[0]}="${cpn[1]}" ${c.message}`);
    let perTask = 1;
    const cpt = pick(env, 'SLURM_CPUS_PER_TASK');
    if (cpt !== null) {
      const v = positive(cpt[0], cpt[1]);
      if (typeof v === 'string') return fail(v);
      perTask = v;
    }
    counts = c.map((cpus) => Math.floor(cpus / perTask));
    countsVar = `${cpn[0]}="${cpn[1]}"`;
    slotsFrom = `${cpn[0]}=${cpn[1]}${perTask > 1 ? ` / SLURM_CPUS_PER_TASK=${perTask}` : ''}`;
  }
  if (counts.length !== nodes.length) {
    return fail(`${countsVar} gives ${counts.length} count(s) but ${nl[0]}="${nl[1]}" names ${nodes.length} node(s)`);
  }
  const hosts: SlurmHost[] = [];
  for (let i = 0; i < nodes.length; i++) if (counts[i]! > 0) hosts.push({ host: nodes[i]!, slots: counts[i]! });
  if (hosts.length === 0) return fail(`${slotsFrom} leaves no slot on any node of ${nl[1]}`);
  const totalSlots = hosts.reduce((s, h) => s + h.slots, 0);

  let defaultNp = totalSlots;
  let npFrom = `the ${totalSlots} slot(s)`;
  const nt = stepId === null ? pick(env, 'SLURM_NTASKS', 'SLURM_NPROCS') : null;
  if (nt !== null) {
    const v = positive(nt[0], nt[1]);
    if (typeof v === 'string') return fail(v);
    defaultNp = v;
    npFrom = `${nt[0]}=${v}`;
  }
  return {
    kind: 'allocation',
    allocation: { jobId, stepId, hosts, defaultNp, source: { nodelist: `${nl[0]}=${nl[1]}`, slots: slotsFrom, np: npFrom } },
  };
}

/**
 * One line for --dry-run: what Slurm gave and where it was read.
 * @example 'Slurm job 8: n01:3,n02:1 (SLURM_JOB_NODELIST=n[01-02], SLURM_TASKS_PER_NODE=3,1); -n defaults to 4 (SLURM_NTASKS=4)'
 */
export function describeSlurmAllocation(a: SlurmAllocation): string {
  const where = a.stepId === null ? `Slurm job ${a.jobId}` : `Slurm job ${a.jobId} (inside step ${a.stepId})`;
  const hosts = a.hosts.map((h) => `${h.host}:${h.slots}`).join(',');
  return `${where}: ${hosts} (${a.source.nodelist}, ${a.source.slots}); -n defaults to ${a.defaultNp} (${a.source.np})`;
}
