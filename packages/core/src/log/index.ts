export { createLogger, silentLogger } from './logger.ts';
export type { Logger, LogFn } from './logger.ts';
