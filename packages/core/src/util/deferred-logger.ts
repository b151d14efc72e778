/**
 * A logger that makes its pino logger on the first record at an enabled
 * level (issue 38: start-up CPU and idle memory). It knows its level, drops
 * what is below it without pino, and builds the pino chain (the root, then
 * each child with its bindings) when a record passes. A rank (log/logger.ts)
 * or an mpiexec (the launcher's main.ts) that writes nothing at its level
 * never loads pino's eleven modules. The pino logger comes from the caller's
 * `make`, which loads pino itself, so this file needs no pino.
 */

/** One log call: a message, or an object of fields then a message (pino's forms). */
export type LogFn = (objOrMsg: unknown, msg?: string, ...args: unknown[]) => void;

/** The logger tsmpi's components use: pino's subset, which a pino Logger also satisfies. */
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

/** pino's level values ('silent' passes nothing). */
const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** A logger whose real (pino) logger `make` returns is made on the first record at an enabled level. */
class DeferredLogger implements Logger {
  readonly #make: () => Logger;
  #real: Logger | null = null;
  readonly #threshold: number;
  readonly level: string;

  constructor(level: string, make: () => Logger) {
    this.level = level;
    this.#threshold = LEVEL_VALUES[level] ?? LEVEL_VALUES['info']!;
    this.#make = make;
  }

  isLevelEnabled(level: string): boolean {
    return (LEVEL_VALUES[level] ?? Infinity) >= this.#threshold;
  }

  child(bindings: Record<string, unknown>): Logger {
    return new DeferredLogger(this.level, () => this.#made().child(bindings));
  }

  #made(): Logger {
    this.#real ??= this.#make();
    return this.#real;
  }

  #write(level: Level, args: unknown[]): void {
    if (LEVEL_VALUES[level]! < this.#threshold) return;
    (this.#made()[level] as (...a: unknown[]) => void)(...args);
  }

  fatal: LogFn = (...args) => this.#write('fatal', args);
  error: LogFn = (...args) => this.#write('error', args);
  warn: LogFn = (...args) => this.#write('warn', args);
  info: LogFn = (...args) => this.#write('info', args);
  debug: LogFn = (...args) => this.#write('debug', args);
  trace: LogFn = (...args) => this.#write('trace', args);
}

/**
 * @param level - the lowest level written: pino's names, or 'silent'
 * @param make - makes the real logger at `level` (loads pino), called at most once
 */
export function deferredLogger(level: string, make: () => Logger): Logger {
  return new DeferredLogger(level, make);
}
