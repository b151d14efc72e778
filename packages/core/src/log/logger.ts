/**
 * One pino root per process, created at init with base { rank, pid, host };
 * components get children (log.child({ mod: 'device' })). Logs are NDJSON on
 * stderr, which the launcher forwards per rank. Nothing logs per message.
 */
import os from 'node:os';
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, rank: number): Logger {
  return pino({ level, base: { rank, pid: process.pid, host: os.hostname() } }, pino.destination({ fd: 2, sync: true }));
}

/** A logger that drops everything (unit tests, and before init). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
