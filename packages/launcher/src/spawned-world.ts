/**
 * Starting a spawned world here (dynamic processes, docs/adr/0040-dynamic-processes.md):
 * dynamic-service.ts placed and resolved it; this gives its processes their placements
 * (process numbers after the job's, local ranks per host), the environment that tells
 * them which world they are, and one fork launcher per command. job.ts adds them to its
 * rank table and supervises them like the ranks it started with.
 * Moved out of job.ts (issue 34): the supervisor keeps only the checks and the table.
 */
import { JOB_ENV } from '@tsmpi/core/pmi';
import type { SpawnedWorld } from './dynamic-service.ts';
import { ForkLauncher } from './fork-launcher.ts';
import type { LaunchOptions } from './options.ts';
import type { OutputSink } from './output-forwarder.ts';
import type { Placement } from './process-map.ts';
import { rankCommand } from './rank-command.ts';
import type { RankLauncherEvents, WireupAddress } from './rank-launcher.ts';

/** What starting a world needs from its job. */
export interface SpawnedWorldJob {
  readonly options: LaunchOptions;
  /** mpiexec's environment, which every spawned process inherits. */
  readonly env: NodeJS.ProcessEnv;
  readonly universe: number;
  readonly jobKey: string;
  /** tsx's loader URL and extra Node flags (rank-command.ts). */
  readonly tsxUrl: string;
  readonly nodeFlags: readonly string[];
  readonly outSink: OutputSink;
  readonly errSink: OutputSink;
  readonly events: RankLauncherEvents;
  /** Adds one process to the job's rank table, before its launcher starts. */
  addRank(p: Placement, launcher: ForkLauncher): void;
}

/**
 * Starts every command of the world on the wire-up service here.
 * @returns the launchers started, one per command (the job closes them at its end)
 */
export function startSpawnedWorld(w: SpawnedWorld, wireup: WireupAddress, job: SpawnedWorldJob): ForkLauncher[] {
  const perHost = new Map<string, number>();
  for (const c of w.commands) for (const h of c.hosts) perHost.set(h, (perHost.get(h) ?? 0) + 1);
  const seen = new Map<string, number>();
  let next = w.first;
  return w.commands.map((c, appnum) => {
    const placements: Placement[] = c.hosts.map((host) => {
      const localRank = seen.get(host) ?? 0;
      seen.set(host, localRank + 1);
      return { rank: next++, host, localRank, localSize: perHost.get(host)! };
    });
    const env: NodeJS.ProcessEnv = {
      ...job.env,
      [JOB_ENV.worldFirst]: String(w.first), [JOB_ENV.universe]: String(job.universe), [JOB_ENV.parentSpawn]: String(w.spawnId), [JOB_ENV.appnum]: String(appnum),
    };
    const launcher = new ForkLauncher(placements, {
      options: { ...job.options, np: w.size, wdir: c.wdir }, env, jobKey: job.jobKey, firstRank: w.first,
      command: rankCommand(c.program, c.args, job.tsxUrl, job.nodeFlags), outSink: job.outSink, errSink: job.errSink,
    }, job.events);
    for (const p of placements) job.addRank(p, launcher);
    launcher.start(wireup);
    return launcher;
  });
}
