/**
 * The kernel's id of the calling thread, and whether a thread of this process
 * still runs, from Linux's procfs (/proc/thread-self, /proc/self/task/TID).
 *
 * Why: a thread spinning on a shared lock whose holder was stopped inside the
 * locked section (worker.terminate(), out of memory) learns of it from the
 * "ended" word that the holder's Worker 'exit' handler sets, but that event
 * reaches one thread's event loop only, the main thread's, and a main thread
 * that spins never turns its loop. The kernel removes a thread's task entry
 * as soon as the thread exits (within milliseconds of terminate(), before
 * anyone joins it), so the spinner can ask the kernel instead
 * (docs/RELIABILITY.md section 5). Elsewhere than Linux the id is 0 (unknown)
 * and no thread is reported gone: the ended word alone answers there.
 */
import { existsSync, readlinkSync } from 'node:fs';

/** The calling thread's kernel id (its TID), or 0 where procfs does not say. */
export function kernelThreadId(): number {
  try {
    // "PID/task/TID"
    const tid = Number(readlinkSync('/proc/thread-self').split('/')[2]);
    return Number.isInteger(tid) && tid > 0 ? tid : 0;
  } catch {
    return 0;
  }
}

/** True when `tid` (from kernelThreadId, not 0) names no running thread of this process any more. */
export function isKernelThreadGone(tid: number): boolean {
  return tid > 0 && !existsSync(`/proc/self/task/${tid}`);
}
