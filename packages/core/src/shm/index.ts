export { Mutex } from './mutex.ts';
export { PayloadPool } from './payload-pool.ts';
export { Ring } from './ring.ts';
export { SpinLocks, setLockHolder, lockHolder, type LockHolders } from './spin-lock.ts';
export { isKernelThreadGone, kernelThreadId } from './kernel-thread.ts';
