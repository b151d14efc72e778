/**
 * Time on a core of this process's main thread, apart from all its other
 * threads (V8's compiler and GC helpers, libuv's pool, worker threads), read
 * from Linux's /proc/self/task/N/schedstat (nanoseconds, not rounded to clock
 * ticks). Issue 15 used the split to find that most of the CPU of a rank's
 * first 1,000 iterations is V8 compiling on its background threads
 * (docs/PERFORMANCE.md 4.17). Elsewhere than Linux both are 0.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Nanoseconds on a core since each thread started: the main thread, and the sum of the others. */
export interface ThreadCpu {
  readonly mainNs: number;
  readonly otherNs: number;
}

export function threadCpu(): ThreadCpu {
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return { mainNs: 0, otherNs: 0 }; // no procfs
  }
  let mainNs = 0;
  let otherNs = 0;
  for (const task of tasks) {
    let onCpuNs: number;
    try {
      onCpuNs = Number(readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      continue; // the thread exited between the listing and the read
    }
    if (Number(task) === process.pid) mainNs += onCpuNs;
    else otherNs += onCpuNs;
  }
  return { mainNs, otherNs };
}
