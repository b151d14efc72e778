export { Mutex } from './mutex.ts';
export { PayloadPool } from './payload-pool.ts';
