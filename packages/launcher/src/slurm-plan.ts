/**
 * mpiexec's decisions about Slurm (issue 12), before anything starts: which
 * launcher to use, and for `--launcher slurm` the hosts, -n and the srun
 * target. Pure: it gets the parsed flags and readSlurmAllocation's answer.
 * Placing ranks on the hosts stays process-map's job (placeRanks); the
 * proxies then run on the distinct hosts of that placement
 * (proxyHostsOf), which become buildSrunCommand's target.
 *
 * Rules (as Hydra and Open MPI behave under Slurm):
 *  - Inside an allocation with no --launcher, the launcher is slurm; an
 *    explicit --launcher fork|ssh wins and ignores the SLURM_* variables.
 *  - Inside an allocation -n defaults to the job's task count; --hosts /
 *    --hostfile may narrow the nodes (each must be one of the job's: srun
 *    cannot start a task elsewhere) and their slots default to Slurm's.
 *  - More ranks than Slurm's slots is allowed (ranks wrap round-robin, as
 *    everywhere in mpiexec) but noted, since the ranks then share CPUs.
 *  - Outside an allocation `--launcher slurm` asks srun for nodes: one per
 *    --hosts entry, else ceil(-n / --ppn), else one node; each proxy gets
 *    CPUs for the ranks it will run.
 */
import { describeSlurmAllocation, type SlurmEnvResult, type SlurmHost } from './slurm-allocation.ts';
import type { SrunTarget } from './slurm-srun.ts';
import { compressHostlist } from './slurm-hostlist.ts';

type Launcher = 'fork' | 'ssh' | 'slurm';

/** A host as --hosts/--hostfile give it (process-map's HostSlots). */
export interface GivenHost {
  readonly host: string;
  readonly slots: number | null;
}

/**
 * Picks the launcher.
 * @param given --launcher as typed, or null when absent
 * @param slurm readSlurmAllocation(process.env)
 * @returns the launcher, or an Error when mpiexec would have used Slurm but
 * the environment is broken (the message says to pass --launcher fork|ssh)
 */
export function chooseLauncher(given: Launcher | null, slurm: SlurmEnvResult): Launcher | Error {
  if (given !== null && given !== 'slurm') return given;
  if (slurm.kind === 'error') return new Error(`${slurm.message} (or pass --launcher fork|ssh to ignore Slurm)`);
  if (given === 'slurm' || slurm.kind === 'allocation') return 'slurm';
  return 'fork';
}

/** The flags that matter to a Slurm job, as parsed, and the Slurm environment. */
export interface SlurmPlanInput {
  readonly slurm: SlurmEnvResult;
  /** -n when given, else null. */
  readonly np: number | null;
  /** --hosts / --hostfile when given, else null. */
  readonly hosts: readonly GivenHost[] | null;
  readonly ppn: number | null;
  /** Slurm job name for an allocation srun makes itself. */
  readonly jobName: string;
}

/** What a `--launcher slurm` job will do. */
export interface SlurmPlan {
  readonly np: number;
  /** Hosts to place ranks on (placeRanks' input); null outside an allocation without --hosts: Slurm picks the nodes. */
  readonly hosts: readonly SlurmHost[] | null;
  /** For buildSrunCommand; an 'allocation' target's hosts are filled in from the placement (proxyHostsOf). */
  readonly target: SrunTarget;
  /** Lines for --dry-run: what Slurm gave and what was made of it. */
  readonly notes: readonly string[];
}

/**
 * Plans a `--launcher slurm` job.
 * @returns the plan, or an Error with a one-line message (mpiexec exits 2)
 */
export function planSlurmJob(input: SlurmPlanInput): SlurmPlan | Error {
  const { slurm } = input;
  if (slurm.kind === 'error') return new Error(slurm.message);
  if (slurm.kind === 'allocation') {
    const a = slurm.allocation;
    const notes = [describeSlurmAllocation(a)];
    let hosts: SlurmHost[] = [...a.hosts];
    if (input.hosts !== null) {
      const bySlurm = new Map(a.hosts.map((h) => [h.host, h.slots]));
      hosts = [];
      for (const g of input.hosts) {
        const slots = bySlurm.get(g.host);
        if (slots === undefined) {
          return new Error(`--hosts ${g.host}: not a node of Slurm job ${a.jobId} (${compressHostlist(a.hosts.map((h) => h.host))}); srun starts tasks only on the job's nodes: drop it, or use --launcher ssh`);
        }
        hosts.push({ host: g.host, slots: g.slots ?? slots });
      }
      notes.push(`--hosts narrows it to ${hosts.map((h) => `${h.host}:${h.slots}`).join(',')}`);
    }
    const np = input.np ?? a.defaultNp;
    const slots = input.ppn === null ? hosts.reduce((s, h) => s + h.slots, 0) : input.ppn * hosts.length;
    if (np > slots) notes.push(`-n ${np} is more than the ${slots} slot(s): ranks wrap round-robin and share CPUs`);
    return { np, hosts, target: { kind: 'allocation', hosts: [] }, notes };
  }
  // No allocation: srun makes one.
  const np = input.np ?? 1;
  if (input.hosts !== null) {
    const hosts = input.hosts.map((g) => ({ host: g.host, slots: g.slots ?? input.ppn ?? 1 }));
    const cpus = Math.max(...ranksPerHost(np, hosts, input.ppn));
    return {
      np, hosts,
      target: { kind: 'new', nodes: hosts.length, cpusPerProxy: cpus, jobName: input.jobName, hosts: hosts.map((h) => h.host) },
      notes: [`no Slurm allocation: srun will allocate ${hosts.length} node(s) (${compressHostlist(hosts.map((h) => h.host))}), ${cpus} CPU(s) each`],
    };
  }
  const perNode = input.ppn ?? np;
  const nodes = Math.ceil(np / perNode);
  return {
    np, hosts: null,
    target: { kind: 'new', nodes, cpusPerProxy: Math.min(perNode, np), jobName: input.jobName },
    notes: [`no Slurm allocation: srun will allocate ${nodes} node(s) with ${Math.min(perNode, np)} CPU(s) each`],
  };
}

/** How many of np ranks each host gets when hosts take their slots (or --ppn) in turn, wrapping (placeRanks' rule). */
function ranksPerHost(np: number, hosts: readonly SlurmHost[], ppn: number | null): number[] {
  const counts = hosts.map(() => 0);
  let placed = 0;
  for (let h = 0; placed < np; h = (h + 1) % hosts.length) {
    const take = Math.min(ppn ?? hosts[h]!.slots, np - placed);
    counts[h]! += take;
    placed += take;
  }
  return counts;
}

/**
 * The proxies' nodes: the distinct hosts of a placement, in the order their
 * first rank appears (the srun --nodelist; srun itself orders tasks by its
 * node list, so the proxy learns its host from its own environment).
 */
export function proxyHostsOf(placements: readonly { readonly host: string }[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of placements) {
    if (!seen.has(p.host)) {
      seen.add(p.host);
      out.push(p.host);
    }
  }
  return out;
}
