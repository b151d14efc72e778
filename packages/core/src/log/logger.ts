/**
 * One pino root per process, created at init with base { rank, pid, host };
 * components get children (log.child({ mod: 'device' })). Logs are NDJSON on
 * stderr, which the launcher forwards per rank. Nothing logs per message.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Logger } from 'pino';

/** pino by require, as pmi/client.ts loads ws: importing it from an ES module runs the CJS lexer over its files at every start-up. */
const { pino } = createRequire(import.meta.url)('pino') as typeof import('pino');

export type { Logger };

export function createLogger(level: string, rank: number): Logger {
  return pino({ level, base: { rank, pid: process.pid, host: os.hostname() } }, pino.destination({ fd: 2, sync: true }));
}

/** A logger that drops everything (unit tests, and before init). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
