/**
 * One pino root per process, created at init with base { rank, pid, host };
 * components get children (log.child({ mod: 'device' })). Logs go to stderr,
 * which the launcher forwards per rank: one line per record for people by
 * default (util/log-line.ts), NDJSON with `--log-format json`. Nothing logs
 * per message.
 *
 * pino itself is loaded with the first record written: a logger and its
 * children know their level, drop what is below it without pino, and build
 * the pino chain (root, then each child with its bindings) when a record at
 * an enabled level arrives. A job that logs nothing at its level (a hello at
 * the default 'warn') never loads pino's eleven modules (issue 38: start-up
 * CPU and idle memory per rank).
 *
 * A lost peer is logged at info level by the device and the transport (the
 * failure is the peer's, and mpiexec reports it once), so at the default
 * level the ranks that stop because of it stay quiet.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Logger as PinoLogger } from 'pino';
import { textLogDestination, type LogFormat } from '../util/index.ts';

/** One log call: a message, or an object of fields then a message (pino's forms). */
export type LogFn = (objOrMsg: unknown, msg?: string, ...args: unknown[]) => void;

/** The logger core's components use: pino's subset, which a pino Logger also satisfies. */
export interface Logger {
  readonly level: string;
  isLevelEnabled(level: string): boolean;
  child(bindings: Record<string, unknown>): Logger;
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
}

const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** pino by require, as pmi/client.ts loads ws: importing it from an ES module runs the CJS lexer over its files at every start-up. */
function loadPino(): typeof import('pino').pino {
  return (createRequire(import.meta.url)('pino') as typeof import('pino')).pino;
}

/** A logger whose pino logger is made on the first record at an enabled level. */
class DeferredLogger implements Logger {
  readonly #make: () => PinoLogger;
  #pino: PinoLogger | null = null;
  readonly #threshold: number;
  readonly level: string;

  constructor(level: string, make: () => PinoLogger) {
    this.level = level;
    this.#threshold = LEVEL_VALUES[level] ?? LEVEL_VALUES['info']!;
    this.#make = make;
  }

  isLevelEnabled(level: string): boolean {
    return (LEVEL_VALUES[level] ?? Infinity) >= this.#threshold;
  }

  child(bindings: Record<string, unknown>): Logger {
    return new DeferredLogger(this.level, () => this.#real().child(bindings));
  }

  #real(): PinoLogger {
    this.#pino ??= this.#make();
    return this.#pino;
  }

  #write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if (LEVEL_VALUES[level]! < this.#threshold) return;
    (this.#real()[level] as (...a: unknown[]) => void)(...args);
  }

  fatal: LogFn = (...args) => this.#write('fatal', args);
  error: LogFn = (...args) => this.#write('error', args);
  warn: LogFn = (...args) => this.#write('warn', args);
  info: LogFn = (...args) => this.#write('info', args);
  debug: LogFn = (...args) => this.#write('debug', args);
  trace: LogFn = (...args) => this.#write('trace', args);
}

/**
 * @param level - the lowest level written (logLevel setting)
 * @param format - 'text' (default) or 'json' (logFormat setting)
 */
export function createLogger(level: string, rank: number, format: LogFormat = 'text'): Logger {
  return new DeferredLogger(level, () => {
    const pino = loadPino();
    const destination = format === 'json' ? pino.destination({ fd: 2, sync: true }) : textLogDestination(2);
    return pino({ level, base: { rank, pid: process.pid, host: os.hostname() } }, destination);
  });
}

/** A logger that drops everything (unit tests, and before init). */
export function silentLogger(): Logger {
  return new DeferredLogger('silent', () => loadPino()({ level: 'silent' }));
}
