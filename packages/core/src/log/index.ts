export { createLogger, silentLogger } from './logger.ts';
export type { Logger } from './logger.ts';
