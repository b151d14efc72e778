/**
 * mpiexec --help. The tuning flags (--channels, --matching, ...) are listed
 * from core's settings table, with their defaults and environment variables.
 */
import { allowedText, settingFlags, valueHint } from './settings-flags.ts';

function pad(s: string, width: number): string {
  return s.length >= width ? `${s}  ` : s + ' '.repeat(width - s.length);
}

const WIDTH = 30;

/** The full help text. */
export function helpText(): string {
  const settingLines: string[] = [];
  for (const row of settingFlags()) {
    let def: string;
    try { def = String(row.defaultValue()); } catch { def = '?'; }
    settingLines.push(`  ${pad(`${row.flag} ${valueHint(row)}`, WIDTH)}${row.doc}`);
    settingLines.push(`  ${pad('', WIDTH)}(${allowedText(row)}; default ${def}; env ${row.env}${row.level === 'tuning' ? '; tuning' : ''})`);
  }
  return `Usage: mpiexec -n N [options] PROGRAM [ARGS...]      (also installed as tsmpiexec)

Starts N copies of PROGRAM as one MPI job on this machine. .ts programs run
through tsx, .js/.mjs programs through node; anything else is executed as is.

Processes and placement:
  ${pad('-n, -np N', WIDTH)}number of processes (default 1; more than the cores is fine)
  ${pad('--hosts h1[:slots],h2', WIDTH)}hosts to place ranks on, in blocks of their slots
  ${pad('--hostfile FILE', WIDTH)}hosts from a file, one "host[:slots]" or "host slots=N" per line
  ${pad('--ppn K', WIDTH)}ranks per host (overrides slots)
  ${pad('--launcher fork|ssh|slurm', WIDTH)}how processes are started; only fork (this machine) is implemented
  ${pad('--wdir DIR', WIDTH)}working directory of every process
  ${pad('--env KEY=VALUE', WIDTH)}extra environment for every process (repeatable)
  ${pad('--iface NAME|CIDR', WIDTH)}interface to listen and connect on (loopback only for now)

MPI settings (passed to every rank as its TSMPI_* environment variable):
${settingLines.join('\n')}

Output:
  ${pad('-l, --tag-output', WIDTH)}prefix every output line with [rank]
  ${pad('--timestamp-output', WIDTH)}prefix every output line with [seconds since launch]
  ${pad('--output-dir DIR', WIDTH)}also write each rank's output to DIR/rank.N.out and DIR/rank.N.err

Job control:
  ${pad('--timeout SECONDS', WIDTH)}end the job after SECONDS; first prints what every rank is blocked in
  ${pad('--dry-run', WIDTH)}print the process map (rank, host, endpoints, channels) and exit
  ${pad('--report-json FILE', WIDTH)}write a job report: per rank exit status, signal, duration, message counts
  ${pad('-h, --help', WIDTH)}this text

Exit status: 0 when every process exits 0 (after MPI.finalize if it called
MPI.init); otherwise the first failure's exit code (128+signal when a process
was killed, the code given to MPI.abort, 124 on --timeout, 2 for a bad command
line), after one line on stderr naming the rank, host, pid and reason. When one
process fails, every other one is stopped within 2 seconds. Ctrl-C is forwarded
to every process; a second Ctrl-C kills them at once. Stdin goes to rank 0.

Every process finds its place in its environment: TSMPI_RANK, TSMPI_SIZE,
TSMPI_LOCAL_RANK (its index among the processes on its host) and
TSMPI_LOCAL_SIZE (how many processes its host runs). Where a host runs more
processes than it has cores, .ts/.js programs run with node --single-threaded-gc
(V8's GC helper threads would only queue behind the ranks; --dry-run shows it).

Examples:
  mpiexec -n 4 examples/hello.ts
  mpiexec -n 8 -l --channels 2 --matching global app.ts --size 1024
  mpiexec -n 4 --timeout 30 --report-json job.json --output-dir logs/ app.js
  mpiexec -n 16 --hosts localhost:4 --dry-run app.ts
  mpiexec -n 2 --env DEBUG=1 --log-level debug app.ts
`;
}
