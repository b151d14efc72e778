/**
 * The tsmpi-nameserver command (docs/adr/0046-name-server-between-jobs.md, point 1):
 *
 *   tsmpi-nameserver [--host ADDR] [--port N] [--file PATH]
 *
 * Draws a 256-bit secret, serves the name table (nameserver.ts) on ADDR:PORT (127.0.0.1 and a free port
 * by default), and writes `tsmpi-nameserver:HOST:PORT:SECRET` to PATH (nameserver-file.ts: O_EXCL, mode
 * 0600, in a directory only the user may write; default $XDG_RUNTIME_DIR/tsmpi-nameserver, else
 * ~/.tsmpi/nameserver). The file is the only place the secret goes: not argv, not the environment, not
 * the log. It runs until SIGINT or SIGTERM, then removes the file (if it is still the one it wrote)
 * and ends with status 0. A bad command line or a file it may not create: a one-line message, status 2.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, unlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { deferredLogger, textLogDestination } from '@tsmpi/core/pmi';
import { NameServer } from './nameserver.ts';
import { createNameserverFile, defaultNameserverFile, formatNameserverLine, nameserverHostPort } from './nameserver-file.ts';

const USAGE_STATUS = 2;

export const NAMESERVER_HELP = `Usage: tsmpi-nameserver [--host ADDR] [--port N] [--file PATH]

Serves MPI.publishName / lookupName / unpublishName between separately started
mpiexec jobs: run each job with  mpiexec --nameserver PATH ...  (or
TSMPI_NAMESERVER=PATH in mpiexec's environment).

  --host ADDR   address to listen on (default 127.0.0.1; give one the jobs'
                mpiexec hosts reach when they run elsewhere)
  --port N      port to listen on (default: a free port)
  --file PATH   where to write the address and the secret (mode 0600; default
                $XDG_RUNTIME_DIR/tsmpi-nameserver, else ~/.tsmpi/nameserver).
                Whoever can read it can use the server: it stays yours.
  -h, --help    this text

Runs until SIGINT or SIGTERM, then removes the file.
`;

interface NameserverOptions {
  readonly host: string;
  readonly port: number;
  readonly file: string;
}

/** The options, 'help', or a one-line error. */
export function parseNameserverArgs(argv: readonly string[], env: NodeJS.ProcessEnv): NameserverOptions | 'help' | Error {
  let host = '127.0.0.1';
  let port = 0;
  let file: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') return 'help';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (name !== '--host' && name !== '--port' && name !== '--file') return new Error(`unknown option ${arg} (see tsmpi-nameserver --help)`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') return new Error(`${name} needs a value (see tsmpi-nameserver --help)`);
    if (name === '--host') {
      if (/[\s/?#@]/.test(value)) return new Error(`--host ${value}: expected an address of this machine`);
      host = value;
    } else if (name === '--port') {
      if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) return new Error(`--port ${value}: expected a port from 0 to 65535 (0: a free one)`);
      port = Number(value);
    } else {
      file = value;
    }
  }
  return { host, port, file: file ?? defaultNameserverFile(env) };
}

/** pino by require, as mpiexec's main.ts loads it: only when the first record is written. */
function loadPino(): typeof import('pino').pino {
  return (createRequire(import.meta.url)('pino') as typeof import('pino')).pino;
}

/**
 * Runs the name server until SIGINT/SIGTERM.
 * @returns the exit status
 */
export async function runNameserver(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const o = parseNameserverArgs(argv, env);
  if (o === 'help') {
    process.stdout.write(NAMESERVER_HELP);
    return 0;
  }
  if (o instanceof Error) {
    process.stderr.write(`tsmpi-nameserver: ${o.message}\n`);
    return USAGE_STATUS;
  }
  const level = env['TSMPI_LOG_LEVEL'] ?? 'info';
  const log = deferredLogger(level, () => loadPino()({ name: 'tsmpi-nameserver', level }, textLogDestination(2)));
  const secret = randomBytes(32).toString('hex');
  const server = new NameServer(secret, log);
  // A wildcard address is no address to dial: the file names this machine.
  const advertised = o.host === '0.0.0.0' || o.host === '::' ? os.hostname() : o.host;
  let port: number;
  try {
    port = await server.start(o.host, o.port, advertised);
  } catch (e) {
    process.stderr.write(`tsmpi-nameserver: cannot listen on ${nameserverHostPort({ host: o.host, port: o.port })}: ${(e as Error).message}\n`);
    return USAGE_STATUS;
  }
  const created = createNameserverFile(o.file, formatNameserverLine({ host: advertised, port, secret }));
  if (created !== null) {
    await server.close();
    process.stderr.write(`tsmpi-nameserver: ${created.message}\n`);
    return USAGE_STATUS;
  }
  const mine = lstatSync(o.file);
  const removeFile = (): void => {
    try {
      const now = lstatSync(o.file);
      if (now.ino === mine.ino && now.dev === mine.dev) unlinkSync(o.file);
    } catch {
      // Already gone.
    }
  };
  process.on('exit', removeFile);
  process.stderr.write(`tsmpi-nameserver: serving on ${nameserverHostPort({ host: advertised, port })}; its file is ${o.file} (mpiexec --nameserver ${o.file})\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  removeFile();
  await server.close();
  process.stderr.write(`tsmpi-nameserver: ${signal}: removed ${o.file}, stopped\n`);
  return 0;
}
