/**
 * One pino root per process, created at init with base { rank, pid, host };
 * components get children (log.child({ mod: 'device' })). Logs go to stderr,
 * which the launcher forwards per rank: one line per record for people by
 * default (util/log-line.ts), NDJSON with `--log-format json`. Nothing logs
 * per message.
 *
 * pino itself is loaded with the first record written (util/deferred-logger.ts):
 * a rank that logs nothing at its level (a hello at the default 'warn') never
 * loads it (issue 38: start-up CPU and idle memory per rank).
 *
 * A lost peer is logged at info level by the device and the transport (the
 * failure is the peer's, and mpiexec reports it once), so at the default
 * level the ranks that stop because of it stay quiet.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { deferredLogger, textLogDestination, type LogFormat, type Logger } from '../util/index.ts';

export type { Logger };

/** pino by require, as pmi/client.ts loads ws: importing it from an ES module runs the CJS lexer over its files at every start-up. */
function loadPino(): typeof import('pino').pino {
  return (createRequire(import.meta.url)('pino') as typeof import('pino')).pino;
}

/**
 * @param level - the lowest level written (logLevel setting)
 * @param format - 'text' (default) or 'json' (logFormat setting)
 */
export function createLogger(level: string, rank: number, format: LogFormat = 'text'): Logger {
  return deferredLogger(level, () => {
    const pino = loadPino();
    const destination = format === 'json' ? pino.destination({ fd: 2, sync: true }) : textLogDestination(2);
    return pino({ level, base: { rank, pid: process.pid, host: os.hostname() } }, destination);
  });
}

/** A logger that drops everything (unit tests, and before init). */
export function silentLogger(): Logger {
  return deferredLogger('silent', () => loadPino()({ level: 'silent' }));
}
