/**
 * Time on a core of this process's main thread, apart from all its other
 * threads (V8's compiler and GC helpers, libuv's pool, worker threads). The
 * main thread's comes from Linux's /proc/self/task/PID/schedstat (nanoseconds,
 * not rounded to clock ticks); the others' is the process's total
 * (process.cpuUsage, which keeps the time of threads that have exited) minus
 * the main thread's. Summing the live threads' schedstat instead would lose
 * the time of every thread that exits between two readings. Issue 15 used the
 * split to find that most of the CPU of a rank's first 1,000 iterations is V8
 * compiling on its background threads (docs/notebook/performance-2026-11.md 4.16). Elsewhere
 * than Linux the main thread's share is 0 and the others' the whole process's.
 */
import { readFileSync } from 'node:fs';

/** Nanoseconds on a core since the process started: its main thread, and all its other threads together. */
export interface ThreadCpu {
  readonly mainNs: number;
  readonly otherNs: number;
}

/** Nanoseconds on a core of thread `tid` of this process (its kernel id; the main thread's is the pid); throws without procfs. */
export function taskCpuNs(tid: number): number {
  return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
}

/** Nanoseconds on a core of the calling thread (a worker's own included); null without procfs. */
export function ownThreadCpuNs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/** Nanoseconds on a core of the whole process, its exited threads included (process.cpuUsage). */
export function processCpuNs(): number {
  const total = process.cpuUsage();
  return (total.user + total.system) * 1000;
}

export function threadCpu(): ThreadCpu {
  let mainNs = 0;
  try {
    mainNs = taskCpuNs(process.pid);
  } catch {
    // no procfs: everything counts as the other threads'
  }
  // The two clocks are read a moment apart: never report a negative share.
  return { mainNs, otherNs: Math.max(0, processCpuNs() - mainNs) };
}
