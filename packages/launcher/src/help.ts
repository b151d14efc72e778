/**
 * mpiexec --help (one screen: what most jobs need) and --help-all (every
 * option, every setting's whole description, exit status, environment). The
 * setting flags (--channels, --matching, ...) are listed from core's settings
 * table, with their defaults and environment variables.
 */
import { allowedText, settingFlags, valueHint, type SettingRow } from './settings-flags.ts';

function pad(s: string, width: number): string {
  return s.length >= width ? `${s}  ` : s + ' '.repeat(width - s.length);
}

const WIDTH = 30;

function defaultText(row: SettingRow): string {
  try {
    return String(row.defaultValue());
  } catch {
    return '?';
  }
}

/** One line per setting flag: what it is, its default and its environment variable. */
function briefSettingLines(): string[] {
  return settingFlags().flatMap((row) => {
    const flag = `${row.flag} ${valueHint(row)}`;
    const text = `${row.brief ?? row.doc} (default ${defaultText(row)}; ${row.env})`;
    // A flag too wide for the column gets its text on the next line, so no line runs on for a screen.
    return flag.length < WIDTH ? [`  ${pad(flag, WIDTH)}${text}`] : [`  ${flag}`, `  ${pad('', WIDTH)}${text}`];
  });
}

/** mpiexec --help: one screen. */
export function helpText(): string {
  return `Usage: mpiexec -n N [options] PROGRAM [ARGS...]      (also installed as tsmpiexec)

Starts N copies of PROGRAM as one MPI job, on this machine or across hosts.
.ts programs are compiled once per job, .js/.mjs/.cjs run in plain node, others as is.

Common options:
  ${pad('-n, -np N', WIDTH)}number of processes (default 1; more than the cores is fine)
  ${pad('--hosts h1[:slots],h2', WIDTH)}run on these hosts, started through ssh (--hostfile FILE: from a file)
  ${pad('--launcher fork|ssh|slurm', WIDTH)}how ranks start (default ssh; slurm inside a Slurm allocation)
  ${pad('--env KEY=VALUE, -x KEY', WIDTH)}extra environment for every process
  ${pad('-l, --tag-output', WIDTH)}prefix every output line with [rank]
  ${pad('--timeout SECONDS', WIDTH)}end the job after SECONDS, first printing what each rank waits in
  ${pad('--secure', WIDTH)}encrypt and authenticate every connection between hosts (TLS)
  ${pad('--report-json / --trace FILE', WIDTH)}write a job report (exit, duration, counts) / every MPI call (Perfetto)
  ${pad('--nameserver FILE', WIDTH)}publishName/lookupName between jobs through tsmpi-nameserver's FILE
  ${pad('-h, --help / --help-all', WIDTH)}this text / every option, setting and exit status (-V: version)

MPI settings (flag, or environment variable for the job):
${briefSettingLines().join('\n')}

Examples:
  mpiexec -n 4 examples/hello.ts
  mpiexec -n 4 --timeout 30 -l app.mjs
  mpiexec -n 8 --hosts node1:4,node2:4 app.ts

Exit status: 0 when every process exits 0; otherwise the first failure's code,
after one line naming the rank, its host and pid, and the cause.
Guide: docs/GUIDE.md; several machines, Slurm: docs/CLUSTER.md (in tsmpi's repository).
`;
}

/** mpiexec --help-all: every option and setting in full. */
export function helpAllText(): string {
  const settingLines: string[] = [];
  for (const row of settingFlags()) {
    settingLines.push(`  ${pad(`${row.flag} ${valueHint(row)}`, WIDTH)}${row.doc}`);
    settingLines.push(`  ${pad('', WIDTH)}(${allowedText(row)}; default ${defaultText(row)}; env ${row.env}${row.level === 'tuning' ? '; tuning' : ''})`);
  }
  return `Usage: mpiexec -n N [options] PROGRAM [ARGS...]      (also installed as tsmpiexec)

Starts N copies of PROGRAM as one MPI job, on this machine or across hosts.
.ts/.mts/.tsx programs of an ES module package whose ranks all run on this
host are compiled once per job (cached in the project's node_modules/.cache/
tsmpi/) and run in plain node with their source maps; other TypeScript programs
(.cts, CommonJS packages, ranks on other hosts, spawned processes) run through
tsx; .js/.mjs/.cjs programs run in plain node (on tsmpi's built JavaScript: in
a checkout, after pnpm build); anything else is executed as is. Ranks on this
machine are forked by mpiexec; each other host gets one proxy, started through
ssh (or one srun step under Slurm), that forks that host's ranks.

Processes and placement:
  ${pad('-n, -np N', WIDTH)}number of processes (default 1, or the Slurm job's task count; more
  ${pad('', WIDTH)}than the cores is fine)
  ${pad('--hosts h1[:slots],h2', WIDTH)}hosts to place ranks on, in blocks of their slots (no :slots = 1),
  ${pad('', WIDTH)}wrapping round-robin when N exceeds the slots
  ${pad('--hostfile FILE', WIDTH)}hosts from a file: "host", "host:N" or "host slots=N" per line, # comments;
  ${pad('', WIDTH)}default: the file in OMPI_MCA_orte_default_hostfile or HYDRA_HOST_FILE
  ${pad('--ppn K', WIDTH)}ranks per host (overrides slots)
  ${pad('--launcher fork|ssh|slurm', WIDTH)}ssh (default): fork on this machine, ssh to other hosts; fork: this
  ${pad('', WIDTH)}machine only; slurm (default inside a Slurm allocation): hosts and slots
  ${pad('', WIDTH)}from Slurm, one srun step starts the other nodes' proxies; outside an
  ${pad('', WIDTH)}allocation srun allocates the nodes itself
  ${pad('--launcher-exec CMD', WIDTH)}remote shell instead of ssh (alias --rsh), e.g. "ssh -F cluster.conf";
  ${pad('', WIDTH)}with --launcher slurm: the srun to run and its extra options
  ${pad('--connect-retry SECONDS', WIDTH)}keep trying ssh to a host not up yet (name unknown, connection
  ${pad('', WIDTH)}refused) for SECONDS (default 120 for hosts from OMPI_MCA_orte_default_hostfile
  ${pad('', WIDTH)}or HYDRA_HOST_FILE, else 0: never)
  ${pad('--prefix DIR', WIDTH)}node on the other hosts is DIR/bin/node (default: this node's path)
  ${pad('--wdir DIR', WIDTH)}working directory of every process, on every host (default: the current one)
  ${pad('--env KEY=VALUE', WIDTH)}extra environment for every process (repeatable)
  ${pad('-x KEY[=VALUE]', WIDTH)}the same; a bare KEY passes mpiexec's own value to every host
  ${pad('--iface NAME|CIDR|ADDRESS', WIDTH)}where ranks listen in a multi-host job, resolved on each host
  ${pad('', WIDTH)}(default: the address each host uses to reach mpiexec)
  ${pad('--port-range LO-HI', WIDTH)}every listening port of the job (wire-up service and ranks)
  ${pad('--secure', WIDTH)}encrypt and authenticate every connection between hosts (ranks, wire-up,
  ${pad('', WIDTH)}proxies) with TLS keyed by the job; for networks others can watch
  ${pad('', WIDTH)}(default off; env TSMPI_SECURE=on; see docs/SECURITY.md)

MPI settings (passed to every rank as its TSMPI_* environment variable):
${settingLines.join('\n')}

Output:
  ${pad('-l, --tag-output', WIDTH)}prefix every output line with [rank]
  ${pad('--timestamp-output', WIDTH)}prefix every output line with [seconds since launch]
  ${pad('--output-dir DIR', WIDTH)}also write each rank's output to DIR/rank.N.out and DIR/rank.N.err

Job control:
  ${pad('--timeout SECONDS', WIDTH)}end the job after SECONDS; first prints what every rank is blocked in
  ${pad('--deadlock-hint SECONDS', WIDTH)}without --timeout: when no MPI call of any rank has returned for SECONDS
  ${pad('', WIDTH)}(default 60), say so once, naming each rank's call; 0: never
  ${pad('--dry-run', WIDTH)}print the process map (rank, host, endpoints, channels) and exit
  ${pad('--report-json FILE', WIDTH)}write a job report: per rank exit status, signal, duration, message counts
  ${pad('--trace FILE', WIDTH)}write every MPI call of every rank to FILE as Chrome trace JSON (Perfetto)
  ${pad('--dashboard[=PORT]', WIDTH)}serve a live page of the job (each rank's MPI call, counters, rates) on
  ${pad('', WIDTH)}127.0.0.1:PORT (default: a free port); its URL, with an access token, goes
  ${pad('', WIDTH)}to stderr (docs/OBSERVING.md)
  ${pad('--dashboard-host ADDRESS', WIDTH)}listen on ADDRESS instead (e.g. 0.0.0.0: every interface; plain HTTP)
  ${pad('--nameserver FILE', WIDTH)}MPI.publishName / lookupName / unpublishName go to the tsmpi-nameserver
  ${pad('', WIDTH)}that wrote FILE (its address and secret; yours only, mode 0600), so that
  ${pad('', WIDTH)}separately started jobs find each other's ports (default: this job's own
  ${pad('', WIDTH)}table; env TSMPI_NAMESERVER=FILE; docs/API.md "Ports and names")
  ${pad('-h, --help', WIDTH)}the short help; --help-all: this text
  ${pad('-V, --version', WIDTH)}the version

Exit status: 0 when every process exits 0 (after MPI.finalize if it called
MPI.init); otherwise the first failure's exit code (128+signal when a process
was killed, the code given to MPI.abort, 124 on --timeout, 2 for a bad command
line, 255 when a host cannot be reached or vanishes, 127 when node is missing
there), after one line on stderr naming the rank (or host), pid and reason.
When one process fails, every other one is stopped within 2 seconds; a host
that vanishes (proxy killed, link down) ends the job within 10 seconds.
Ctrl-C is forwarded to every process on every host; a second Ctrl-C kills
them at once. Stdin goes to rank 0 (when rank 0 runs on this machine).

Every process finds its place in its environment: TSMPI_RANK, TSMPI_SIZE,
TSMPI_LOCAL_RANK (its index among the processes on its host) and
TSMPI_LOCAL_SIZE (how many processes its host runs). Where a host runs more
processes than it has cores, .ts/.js programs run with node --single-threaded-gc
(V8's GC helper threads would only queue behind the ranks; --dry-run shows it);
TSMPI_RANK_NODE_FLAGS adds other node flags.

Examples:
  mpiexec -n 4 examples/hello.ts
  mpiexec -n 8 -l --channels 2 --matching global app.ts --size 1024
  mpiexec -n 4 --timeout 30 --report-json job.json --output-dir logs/ app.js
  mpiexec -n 16 --hosts localhost:4 --dry-run app.ts
  mpiexec -n 2 --env DEBUG=1 --log-level debug app.ts
  mpiexec -n 8 --hosts node1:4,node2:4 --iface 10.1.0.0/16 app.ts
  mpiexec -n 6 --hostfile hosts.txt --port-range 50000-50100 -x PATH app.ts
`;
}
