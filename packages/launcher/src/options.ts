/**
 * mpiexec's command line (API.md "Launcher"): parses argv into LaunchOptions.
 * Options come first; the first argument that is not an option (or the one
 * after `--`) is the program, and everything after it belongs to the program.
 * Every bad value gives a one-line message saying what is allowed; cli.ts
 * prints it and exits with status 2. Pure apart from reading a --hostfile.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isIfaceSyntax, parsePortRange } from './iface.ts';
import { splitCommand } from './remote-command.ts';
import { findSettingFlag, parseSettingFlag, settingFlags, valueHint } from './settings-flags.ts';
import { parseHostList, parseHostfile, type HostSlots } from './process-map.ts';

/**
 * Launchers API.md names: fork starts processes on this machine only; ssh forks here and uses ssh
 * for other hosts (the default outside Slurm); slurm forks here and starts the other nodes' proxies
 * with one srun step (the default inside an allocation; main.ts decides, slurm-plan.ts).
 */
export const LAUNCHERS = ['fork', 'ssh', 'slurm'] as const;
export type LauncherKind = (typeof LAUNCHERS)[number];

/** Everything mpiexec was asked to do. */
export interface LaunchOptions {
  readonly np: number;
  /** -n was given (inside a Slurm allocation it otherwise defaults to the job's task count). */
  readonly hasExplicitNp: boolean;
  readonly program: string;
  readonly args: readonly string[];
  /** Settings given as flags, by setting name (e.g. channels -> 4). */
  readonly settings: ReadonlyMap<string, number | string>;
  readonly hosts: readonly HostSlots[] | null;
  readonly ppn: number | null;
  readonly launcher: LauncherKind;
  /** --launcher was given (otherwise main.ts picks slurm inside an allocation, else ssh). */
  readonly hasExplicitLauncher: boolean;
  readonly tagOutput: boolean;
  readonly timestampOutput: boolean;
  readonly timeoutSec: number | null;
  /** --deadlock-hint: seconds every rank must wait in one MPI call before mpiexec prints a hint; 0: never. */
  readonly deadlockHintSec: number;
  readonly env: readonly (readonly [string, string])[];
  readonly outputDir: string | null;
  readonly wdir: string | null;
  readonly iface: string | null;
  /**
   * --connect-retry: seconds during which ssh to a host that is not up yet is tried again (connect-retry.ts); 0: never.
   * null (not given): DEFAULT_CONNECT_RETRY_SEC for hosts from the environment's hostfile (launch-env.ts), else 0.
   */
  readonly connectRetrySec: number | null;
  /** --launcher-exec / --rsh: the remote shell command, split into words; null: ssh. */
  readonly launcherExec: readonly string[] | null;
  /** --prefix DIR: node on the remote hosts is DIR/bin/node. */
  readonly prefix: string | null;
  /** --port-range: every listening port of the job (wire-up and ranks). */
  readonly portRange: { readonly lo: number; readonly hi: number } | null;
  /** -x KEY: variables whose value comes from mpiexec's environment (Open MPI). */
  readonly envFrom: readonly string[];
  readonly dryRun: boolean;
  readonly reportJson: string | null;
  /** --trace FILE: every MPI call of every rank, merged into FILE as Chrome trace JSON (trace-merge.ts). */
  readonly traceFile: string | null;
  /** --dashboard[=PORT]: serve the live page (dashboard.ts) on this port, 0 for a free one; null: no dashboard. */
  readonly dashboardPort: number | null;
  /** --dashboard-host: the address the dashboard listens on (default 127.0.0.1: this machine only). */
  readonly dashboardHost: string | null;
  /**
   * --nameserver FILE: tsmpi-nameserver's file; the job's publishName / lookupName / unpublishName go to
   * that server (docs/adr/0046-name-server-between-jobs.md). null: not given (TSMPI_NAMESERVER may name one).
   */
  readonly nameserverFile: string | null;
}

export type ParseResult =
  | { readonly kind: 'run'; readonly options: LaunchOptions }
  | { readonly kind: 'help'; readonly all: boolean }
  | { readonly kind: 'version' }
  | { readonly kind: 'error'; readonly message: string };

/** Largest -n accepted; far beyond what one machine runs, it only catches typos. */
const MAX_PROCESSES = 65536;
/** A minute: longer than any wait of a working job's MPI calls that we have seen on a loaded machine, short enough that a hung user still reads it. */
const DEFAULT_DEADLOCK_HINT_SEC = 60;

type Mutable = { -readonly [K in keyof LaunchOptions]: LaunchOptions[K] } & { settings: Map<string, number | string> };

interface OptionSpec {
  readonly names: readonly string[];
  /** Value placeholder, or null for a boolean flag. */
  readonly value: string | null;
  /** A flag whose value is optional: given only as --flag=VALUE (apply gets '' without one). */
  readonly optionalValue?: true;
  readonly apply: (o: Mutable, v: string) => string | null;
}

function positiveInt(name: string, v: string, max: number): number | string {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isInteger(n) || n < 1 || n > max) return `${name} ${v}: expected an integer from 1 to ${max}`;
  return n;
}


const SPECS: readonly OptionSpec[] = [
  {
    names: ['-n', '-np', '--np'], value: 'N',
    apply: (o, v) => { const n = positiveInt('-n', v, MAX_PROCESSES); if (typeof n === 'string') return n; o.np = n; o.hasExplicitNp = true; return null; },
  },
  {
    names: ['--hosts', '-hosts', '--host', '-host'], value: 'h1[:slots],h2',
    apply: (o, v) => { const h = parseHostList(v); if (h instanceof Error) return h.message; o.hosts = h; return null; },
  },
  {
    names: ['--hostfile', '-f', '--machinefile'], value: 'FILE',
    apply: (o, v) => {
      let text: string;
      try { text = readFileSync(v, 'utf8'); } catch (err) { return `--hostfile ${v}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`; }
      const h = parseHostfile(text, v);
      if (h instanceof Error) return h.message;
      o.hosts = h;
      return null;
    },
  },
  {
    names: ['--ppn', '-ppn'], value: 'K',
    apply: (o, v) => { const n = positiveInt('--ppn', v, MAX_PROCESSES); if (typeof n === 'string') return n; o.ppn = n; return null; },
  },
  {
    names: ['--launcher', '-launcher'], value: LAUNCHERS.join('|'),
    apply: (o, v) => {
      if (v === 'fork' || v === 'ssh' || v === 'slurm') { o.launcher = v; o.hasExplicitLauncher = true; return null; }
      return `--launcher ${v}: expected one of ${LAUNCHERS.join(', ')}`;
    },
  },
  { names: ['-l', '--tag-output', '-prepend-rank'], value: null, apply: (o) => { o.tagOutput = true; return null; } },
  { names: ['--timestamp-output'], value: null, apply: (o) => { o.timestampOutput = true; return null; } },
  {
    names: ['--timeout', '-timeout'], value: 'SECONDS',
    apply: (o, v) => {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n) || n <= 0) return `--timeout ${v}: expected a positive number of seconds`;
      o.timeoutSec = n;
      return null;
    },
  },
  {
    names: ['--deadlock-hint'], value: 'SECONDS',
    apply: (o, v) => {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n) || n < 0) return `--deadlock-hint ${v}: expected a number of seconds (0: never)`;
      o.deadlockHintSec = n;
      return null;
    },
  },
  {
    names: ['--env', '-env'], value: 'KEY=VALUE',
    apply: (o, v) => {
      const eq = v.indexOf('=');
      const key = eq < 0 ? v : v.slice(0, eq);
      if (eq < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `--env ${v}: expected KEY=VALUE with KEY a variable name`;
      o.env = [...o.env, [key, v.slice(eq + 1)]];
      return null;
    },
  },
  {
    // Open MPI's -x: KEY=VALUE sets it, a bare KEY forwards mpiexec's own value.
    names: ['-x'], value: 'KEY[=VALUE]',
    apply: (o, v) => {
      const eq = v.indexOf('=');
      const key = eq < 0 ? v : v.slice(0, eq);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `-x ${v}: expected KEY or KEY=VALUE with KEY a variable name`;
      if (eq < 0) o.envFrom = [...o.envFrom, key];
      else o.env = [...o.env, [key, v.slice(eq + 1)]];
      return null;
    },
  },
  {
    names: ['--launcher-exec', '-launcher-exec', '--rsh', '-rsh', '-bootstrap-exec'], value: 'CMD',
    apply: (o, v) => { const w = splitCommand(v); if (w instanceof Error) return w.message; o.launcherExec = w; return null; },
  },
  {
    names: ['--connect-retry'], value: 'SECONDS',
    apply: (o, v) => {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n) || n < 0) return `--connect-retry ${v}: expected a number of seconds (0: never retry)`;
      o.connectRetrySec = n;
      return null;
    },
  },
  {
    names: ['--prefix', '-prefix'], value: 'DIR',
    apply: (o, v) => { if (!path.isAbsolute(v)) return `--prefix ${v}: expected an absolute directory (node is DIR/bin/node on every host)`; o.prefix = v; return null; },
  },
  {
    names: ['--port-range', '-port-range'], value: 'LO-HI',
    apply: (o, v) => { const r = parsePortRange(v); if (r instanceof Error) return r.message; o.portRange = r; return null; },
  },
  {
    names: ['--output-dir'], value: 'DIR',
    apply: (o, v) => { if (v === '') return '--output-dir: expected a directory'; o.outputDir = v; return null; },
  },
  {
    names: ['--wdir', '-wdir'], value: 'DIR',
    apply: (o, v) => {
      let isDir = false;
      try { isDir = statSync(v).isDirectory(); } catch { isDir = false; }
      if (!isDir) return `--wdir ${v}: not an existing directory`;
      o.wdir = v;
      return null;
    },
  },
  {
    names: ['--iface', '-iface'], value: 'NAME|CIDR|ADDRESS',
    apply: (o, v) => {
      // Resolved on each host when the job starts (iface.ts); only the syntax is checked here.
      if (!isIfaceSyntax(v)) return `--iface ${v}: expected an interface name, an address or an IPv4 CIDR (e.g. eth1, 10.1.0.0/16)`;
      o.iface = v;
      return null;
    },
  },
  // The core setting 'secure' (TSMPI_SECURE, off|on), given as a flag without a value: ranks get it like every setting.
  { names: ['--secure'], value: null, apply: (o) => { o.settings.set('secure', 'on'); return null; } },
  { names: ['--dry-run'], value: null, apply: (o) => { o.dryRun = true; return null; } },
  {
    names: ['--report-json'], value: 'FILE',
    apply: (o, v) => { if (v === '') return '--report-json: expected a file name'; o.reportJson = v; return null; },
  },
  {
    // The ranks record when the core setting traceEvents is above 0: set it unless given (TSMPI_TRACE_EVENTS in the environment wins).
    names: ['--trace'], value: 'FILE',
    apply: (o, v) => { if (v === '') return '--trace: expected a file name'; o.traceFile = v; return null; },
  },
  {
    names: ['--dashboard'], value: null, optionalValue: true,
    apply: (o, v) => {
      if (v === '') { o.dashboardPort = 0; return null; }
      const n = Number(v);
      if (!/^\d+$/.test(v) || n > 65535) return `--dashboard=${v}: expected a port from 1 to 65535 (or --dashboard alone: a free port)`;
      o.dashboardPort = n;
      return null;
    },
  },
  {
    names: ['--dashboard-host'], value: 'ADDRESS',
    apply: (o, v) => { if (v.trim() === '' || /[\s/?#@]/.test(v)) return `--dashboard-host ${v}: expected an address of this machine (e.g. 0.0.0.0 for every interface)`; o.dashboardHost = v; return null; },
  },
  {
    // MPICH's -nameserver names a host; tsmpi's names the server's file, which holds its secret (ADR 0046).
    names: ['--nameserver', '-nameserver'], value: 'FILE',
    apply: (o, v) => { if (v === '') return '--nameserver: expected the file tsmpi-nameserver wrote'; o.nameserverFile = v; return null; },
  },
];

function findSpec(name: string): OptionSpec | undefined {
  return SPECS.find((s) => s.names.includes(name));
}

/**
 * Parses mpiexec's arguments (without node and the script).
 * @returns run options, a help/version request, or a one-line error
 */
export function parseArgs(argv: readonly string[]): ParseResult {
  const o: Mutable = {
    np: 1, hasExplicitNp: false, program: '', args: [], settings: new Map(), hosts: null, ppn: null, launcher: 'ssh', hasExplicitLauncher: false,
    tagOutput: false, timestampOutput: false, timeoutSec: null, deadlockHintSec: DEFAULT_DEADLOCK_HINT_SEC, env: [], outputDir: null, wdir: null,
    iface: null, connectRetrySec: null, launcherExec: null, prefix: null, portRange: null, envFrom: [], dryRun: false, reportJson: null, traceFile: null,
    dashboardPort: null, dashboardHost: null, nameserverFile: null,
  };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') { i++; break; }
    if (!arg.startsWith('-') || arg === '-') break;
    if (arg === '-h' || arg === '--help' || arg === '-help') return { kind: 'help', all: false };
    if (arg === '--help-all') return { kind: 'help', all: true };
    if (arg === '--version' || arg === '-V') return { kind: 'version' };
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const row = findSettingFlag(name);
    const spec = row === undefined ? findSpec(name) : undefined;
    if (row === undefined && spec === undefined) return { kind: 'error', message: `unknown option ${name} (see mpiexec --help)` };
    const needsValue = row !== undefined || spec!.value !== null;
    let value = '';
    if (needsValue) {
      if (inline !== undefined) value = inline;
      else if (i + 1 < argv.length) value = argv[++i]!;
      else return { kind: 'error', message: `${name} needs a value: ${row !== undefined ? `${row.flag} ${valueHint(row)}` : `${name} ${spec!.value}`}` };
    } else if (inline !== undefined && spec?.optionalValue !== true) {
      return { kind: 'error', message: `${name} takes no value` };
    } else if (inline !== undefined) {
      value = inline;
    }
    if (row !== undefined) {
      const v = parseSettingFlag(row, value);
      if (v instanceof Error) return { kind: 'error', message: v.message };
      o.settings.set(row.name, v);
      continue;
    }
    const err = spec!.apply(o, value);
    if (err !== null) return { kind: 'error', message: err };
  }
  if (o.dashboardHost !== null && o.dashboardPort === null) return { kind: 'error', message: '--dashboard-host needs --dashboard' };
  if (i >= argv.length) return { kind: 'error', message: 'no program given: mpiexec -n N [options] PROGRAM [ARGS...] (see mpiexec --help)' };
  o.program = argv[i]!;
  o.args = argv.slice(i + 1);
  // MPMD (MPI 4.0 section 11.8.3, `mpiexec -n 1 ocean : -n 4 atmos`, as Hydra and mpirun take it): the ':' would
  // otherwise reach the program as an argument, and the job would not be the one asked for.
  if (o.args.includes(':')) {
    return { kind: 'error', message: `':' after ${o.program} starts another program (MPMD: mpiexec -n 1 a.ts : -n 4 b.ts), which this mpiexec does not run; start one program that branches on its rank, or start the others with COMM_WORLD.spawnMultiple` };
  }
  return { kind: 'run', options: o };
}

/** The flags mpiexec knows (for help and tests). */
export function knownFlags(): string[] {
  return [...SPECS.flatMap((s) => s.names), ...settingFlags().map((r) => r.flag!)];
}
