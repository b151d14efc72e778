/**
 * mpiexec from argv to exit status: parse, check, dry-run or run the job.
 * cli.ts calls it and exits; tests may call it in-process.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { JOB_ENV, deferredLogger, textLogDestination } from '@tsmpi/core/pmi';
import { fileLimitProblem, readFileLimit } from './fd-limit.ts';
import { applyLaunchEnv } from './launch-env.ts';
import { Job, type HostLaunchLine, type SlurmLaunch } from './job.ts';
import { loadProxyBackends, needsProxyBackends } from './launchers.ts';
import { parseArgs, type LaunchOptions } from './options.ts';
import { isLocalHost, placeRanks, type HostSlots, type Placement } from './process-map.ts';
import { readSlurmAllocation } from './slurm-allocation.ts';
import { chooseLauncher, planSlurmJob } from './slurm-plan.ts';
import { isJsProgram, missingBuild, nodeFlagsFor, staleBuildWarning, parseRankNodeFlags, rankCommand, resolveProgram, SOURCE_CONDITION, TRANSPORT_ENV, tsxLoaderUrl, withTransport } from './rank-command.ts';
import { effectiveSetting, findSetting } from './settings-flags.ts';

/** Exit status for a bad command line. */
export const USAGE_STATUS = 2;
/** Exit status when the program does not exist (as shells report "command not found"). */
const NOT_FOUND_STATUS = 127;

/** pino by require (as core's log/logger.ts), when mpiexec writes its first record: importing it costs every start-up. */
function loadPino(): typeof import('pino').pino {
  return (createRequire(import.meta.url)('pino') as typeof import('pino')).pino;
}

function settingValue(o: LaunchOptions, name: string, env: NodeJS.ProcessEnv): string {
  const row = findSetting(name);
  return row === undefined ? '?' : String(effectiveSetting(row, o.settings, env));
}


/** "0-3" / "0, 2, 4". */
function rankList(ranks: readonly number[]): string {
  const isRun = ranks.every((r, i) => i === 0 || r === ranks[i - 1]! + 1);
  return isRun && ranks.length > 2 ? `${ranks[0]}-${ranks[ranks.length - 1]}` : ranks.join(', ');
}

/** The --dry-run table, then how each host is started (and, under Slurm, what Slurm gave first). */
export function processMapText(o: LaunchOptions, placements: readonly Placement[], command: string, env: NodeJS.ProcessEnv, hosts: readonly HostLaunchLine[] = [], notes: readonly string[] = []): string {
  const endpoints = settingValue(o, 'endpoints', env);
  const channels = settingValue(o, 'channels', env);
  const rows = [['rank', 'host', 'local-rank', 'endpoints', 'channels']];
  for (const p of placements) rows.push([String(p.rank), p.host, String(p.localRank), endpoints, channels]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const table = rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  const plan = hosts.map((h) => `host ${h.host} (ranks ${rankList(h.ranks)}): ${h.command}\n`).join('');
  const noteText = notes.map((n) => `${n}\n`).join('');
  return `mpiexec: dry run: ${o.np} process${o.np === 1 ? '' : 'es'}\n${noteText}${table.join('\n')}\ncommand: ${command}\n${plan}`;
}

/**
 * Runs mpiexec.
 * @param argv - arguments after the script name
 * @returns the exit status
 */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseArgs(argv);
  if (parsed.kind === 'help') {
    // The help text (and, below, srun's version parser) load only where they are used: no part of a job's start-up (issue 38).
    const { helpAllText, helpText } = await import('./help.ts');
    process.stdout.write(parsed.all ? helpAllText() : helpText());
    return 0;
  }
  if (parsed.kind === 'version') {
    process.stdout.write('mpiexec (tsmpi) 0.1.0\n');
    return 0;
  }
  if (parsed.kind === 'error') {
    process.stderr.write(`mpiexec: ${parsed.message}\n`);
    return USAGE_STATUS;
  }
  let o = parsed.options;
  const missing = o.envFrom.find((k) => env[k] === undefined);
  if (missing !== undefined) {
    process.stderr.write(`mpiexec: -x ${missing}: ${missing} is not set in mpiexec's environment (use -x ${missing}=VALUE)\n`);
    return USAGE_STATUS;
  }
  o = { ...o, env: [...o.env, ...o.envFrom.map((k) => [k, env[k]!] as const)], envFrom: [] };
  const fromEnv = applyLaunchEnv(o, env);
  if (fromEnv instanceof Error) {
    process.stderr.write(`mpiexec: ${fromEnv.message}\n`);
    return USAGE_STATUS;
  }
  o = fromEnv.options;
  const slurm = await slurmSetup(o, env);
  if (slurm instanceof Error) {
    process.stderr.write(`mpiexec: ${slurm.message}\n`);
    return USAGE_STATUS;
  }
  o = slurm.options;
  const hostname = slurm.hostname;
  const placements = placeRanks(o.np, slurm.hosts, o.ppn, hostname);
  const tsxUrl = tsxLoaderUrl();
  const extraNodeFlags = parseRankNodeFlags(settingValue(o, 'rankNodeFlags', env));
  if (extraNodeFlags instanceof Error) {
    process.stderr.write(`mpiexec: ${extraNodeFlags.message}\n`);
    return USAGE_STATUS;
  }
  const nodeFlags = nodeFlagsFor(placements, os.availableParallelism(), extraNodeFlags);
  const remote = placements.find((p) => !isLocalHost(p.host));
  if (remote !== undefined && o.launcher === 'fork') {
    process.stderr.write(`mpiexec: host ${remote.host} is not this machine; --launcher fork starts processes here only (use --launcher ssh)\n`);
    return USAGE_STATUS;
  }
  // The ssh and Slurm launchers load only when a rank or a spare slot (spawn) is on another host.
  const slotHosts = [...placements.map((p) => p.host), ...(slurm.deps.slurm?.slots ?? o.hosts ?? []).map((h) => h.host)];
  if (needsProxyBackends(slotHosts, hostname, os.networkInterfaces())) await loadProxyBackends();
  const silent = deferredLogger('silent', () => loadPino()({ level: 'silent' }));
  if (o.dryRun) {
    const program = resolveProgram(o.program, o.wdir) ?? o.program;
    // A TypeScript program a real run would compile (ts-compile.ts) shows the compiled file's place.
    const preview = isJsProgram(program) ? null : (await import('./ts-compile.ts')).compiledPathPreview(path.resolve(program), placements.every((p) => isLocalHost(p.host)), env);
    const cmd = rankCommand(program, o.args, tsxUrl, nodeFlags, preview ?? undefined);
    const job = new Job({ ...o, program }, placements, { log: silent, stdout: process.stdout, stderr: process.stderr, env, tsxUrl, nodeFlags, hostname, ...slurm.deps, ...(preview !== null ? { compiledProgram: preview } : {}) });
    process.stdout.write(processMapText(o, placements, [cmd.file, ...cmd.args].join(' '), env, job.launchPlan(), [...fromEnv.notes, ...slurm.notes]));
    return 0;
  }
  const here = placements.filter((p) => isLocalHost(p.host));
  const fdProblem = fileLimitProblem(here.length, new Set(placements.filter((p) => !here.includes(p)).map((p) => p.host)).size, readFileLimit());
  if (fdProblem !== null) {
    process.stderr.write(`mpiexec: ${fdProblem}\n`);
    return USAGE_STATUS;
  }
  const program = resolveProgram(o.program, o.wdir);
  if (program === null) {
    process.stderr.write(`mpiexec: program not found: ${o.program}\n`);
    return NOT_FOUND_STATUS;
  }
  o = { ...o, program };
  const unbuilt = missingBuild(program);
  if (unbuilt !== null) {
    process.stderr.write(`mpiexec: ${unbuilt}\n`);
    return NOT_FOUND_STATUS;
  }
  const stale = await staleBuildWarning(program);
  if (stale !== null) process.stderr.write(`mpiexec: warning: ${stale}\n`);
  // --nameserver (or TSMPI_NAMESERVER): the file is checked and the server proven before any rank starts (docs/adr/0046).
  const nameserverFile = o.nameserverFile ?? (env[JOB_ENV.nameserver] !== undefined && env[JOB_ENV.nameserver] !== '' ? env[JOB_ENV.nameserver]! : null);
  let names: import('./nameserver-link.ts').NameserverClient | undefined;
  if (nameserverFile !== null) {
    const { openNameserver } = await import('./nameserver-link.ts');
    const opened = await openNameserver(nameserverFile, o.nameserverFile !== null ? '--nameserver ' : `${JOB_ENV.nameserver}=`);
    if (opened instanceof Error) {
      process.stderr.write(`mpiexec: ${opened.message}\n`);
      return USAGE_STATUS;
    }
    names = opened;
  }
  const level = settingValue(o, 'logLevel', env);
  const json = settingValue(o, 'logFormat', env) === 'json';
  // pino loads with mpiexec's first record at `level` (util/deferred-logger.ts): a job that logs nothing never loads it.
  const log = deferredLogger(level, () => {
    const pino = loadPino();
    return pino({ name: 'mpiexec', level }, json ? pino.destination({ fd: 2, sync: true }) : textLogDestination(2));
  });
  let jobEnv = withTransport(env, program);
  // A TypeScript program is compiled once for the job, its ranks then run plain node (ts-compile.ts, issue 38).
  let compiledProgram: string | undefined;
  if (!isJsProgram(program)) {
    const { compiledForJob } = await import('./ts-compile.ts');
    const userTransport = (env[TRANSPORT_ENV] ?? '') !== '';
    const compiled = await compiledForJob(program, placements.every((p) => isLocalHost(p.host)), jobEnv[TRANSPORT_ENV]!, userTransport, [SOURCE_CONDITION], env);
    if (compiled instanceof Error) {
      names?.close();
      process.stderr.write(`mpiexec: ${compiled.message}\n`);
      return 1;
    }
    if (compiled !== null) {
      compiledProgram = compiled.file;
      if (compiled.transportUrl !== null) jobEnv = { ...jobEnv, [TRANSPORT_ENV]: compiled.transportUrl };
    }
  }
  const job = new Job(o, placements, { log, stdout: process.stdout, stderr: process.stderr, env: jobEnv, tsxUrl, nodeFlags, hostname, ...slurm.deps, ...(names !== undefined ? { names } : {}), ...(compiledProgram !== undefined ? { compiledProgram } : {}) });
  const onSigint = (): void => job.signal('SIGINT');
  const onSigterm = (): void => job.signal('SIGTERM');
  const onExit = (): void => {
    job.killNow();
    job.closeRemote();
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  process.on('exit', onExit);
  try {
    return await job.run();
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
    // The server drops this job's names when the link closes (its ports closed with it).
    names?.close();
  }
}

/** What the Slurm rules (slurm-plan.ts) make of the command line: the launcher, -n, the hosts. */
interface SlurmSetup {
  readonly options: LaunchOptions;
  /** Hosts to place ranks on (null: all on this machine). */
  readonly hosts: readonly HostSlots[] | null;
  /** This machine's name for the placement: the Slurm node name when mpiexec runs on an allocated node. */
  readonly hostname: string;
  readonly deps: { readonly slurm?: SlurmLaunch };
  /** --dry-run lines: what Slurm gave. */
  readonly notes: readonly string[];
}

/**
 * Picks the launcher (slurm inside an allocation when neither --launcher nor
 * --hosts/--hostfile says otherwise; ssh elsewhere) and, for slurm, plans -n,
 * the hosts and the srun (slurm-plan.ts).
 * @returns the setup, or an Error with a one-line message (exit 2)
 */
async function slurmSetup(o: LaunchOptions, env: NodeJS.ProcessEnv): Promise<SlurmSetup | Error> {
  const plain: SlurmSetup = { options: o, hosts: o.hosts, hostname: os.hostname(), deps: {}, notes: [] };
  if (o.hasExplicitLauncher && o.launcher !== 'slurm') return plain;
  if (!o.hasExplicitLauncher && o.hosts !== null) return plain;
  const alloc = readSlurmAllocation(env);
  const chosen = chooseLauncher(o.hasExplicitLauncher ? 'slurm' : null, alloc);
  if (chosen instanceof Error) return chosen;
  if (chosen !== 'slurm') return plain; // outside Slurm the default stays ssh
  const plan = planSlurmJob({
    slurm: alloc, np: o.hasExplicitNp ? o.np : null, hosts: o.hosts, ppn: o.ppn,
    jobName: `tsmpi-${path.basename(o.program).replace(/[^A-Za-z0-9_.-]/g, '_') || 'job'}`,
  });
  if (plan instanceof Error) return plan;
  const srun = o.launcherExec ?? ['srun'];
  const probe = spawnSync(srun[0]!, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  if (probe.error !== undefined) {
    const code = (probe.error as NodeJS.ErrnoException).code;
    return new Error(`--launcher slurm: cannot run ${srun[0]} (${code ?? probe.error.message}); install Slurm's client commands, put srun on PATH, or name it with --launcher-exec`);
  }
  // Placeholders when srun picks the nodes itself; proxies then match by SLURM_NODEID.
  const hosts: HostSlots[] = plan.hosts !== null ? [...plan.hosts]
    : plan.target.kind === 'new' ? Array.from({ length: plan.target.nodes }, (_, i) => ({ host: `slurm-node-${i}`, slots: plan.target.kind === 'new' ? plan.target.cpusPerProxy : 1 }))
    : [];
  const alloced = alloc.kind === 'allocation' ? alloc.allocation : null;
  const { parseSlurmVersion } = await import('./slurm-srun.ts');
  const slurm: SlurmLaunch = {
    srun, version: parseSlurmVersion(probe.stdout ?? ''), target: plan.target,
    hasPlaceholderHosts: plan.hosts === null, jobId: alloced?.jobId ?? null,
    slots: alloced !== null ? plan.hosts : null, allocationNodes: alloced?.hosts.map((h) => h.host) ?? [],
  };
  return {
    options: { ...o, np: plan.np, launcher: 'slurm' },
    hosts,
    // On an allocated node (the batch script's node) its ranks are forked here, as PRRTE's mpirun serves its own node.
    hostname: alloced !== null ? (env['SLURMD_NODENAME'] ?? os.hostname()) : os.hostname(),
    deps: { slurm },
    notes: [...plan.notes, `launcher: slurm (${alloced !== null && !o.hasExplicitLauncher ? 'inside an allocation, chosen by default; --launcher ssh|fork overrides' : '--launcher slurm'})`],
  };
}
