/**
 * Where the first calls of an 8-byte allreduce go: rank 0's time per call by
 * block of 100 calls (median, mean, slowest), and each rank's main-thread
 * scheduling over the timed calls (time on a core, time runnable but waiting
 * for one, context switches), from Linux's /proc/self/task/PID/schedstat and
 * status. Issue 15 (docs/PERFORMANCE.md 4.26) used it to tell the first
 * blocks' unoptimised code from the run-queue waits of polling ranks that
 * outnumber the cores.
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/allreduce-first-calls.ts [--iterations N] [--kind float64-sum|int32-max|float32-sum]
 *
 * Like allreduce.ts: a barrier, 50 untimed calls, a barrier, then N timed calls (default 1000).
 * --kind picks the vector's element type and the op (default float64-sum, allreduce.ts's): init's
 * warm-up of the small allreduce (coll-warm-up.ts) must help every kind, not only those it runs.
 */
import * as MPI from '@tsmpi/core';
import { readFileSync } from 'node:fs';

const BLOCK = 100;
const WARMUP = 50;

/** The main thread's scheduling counters so far (Linux); zeros elsewhere. */
function mainThreadSched(): { runNs: number; waitNs: number; voluntary: number; involuntary: number } {
  try {
    const [runNs, waitNs] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
    const status = readFileSync(`/proc/self/task/${process.pid}/status`, 'utf8');
    const count = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { runNs: runNs!, waitNs: waitNs!, voluntary: count('voluntary_ctxt_switches'), involuntary: count('nonvoluntary_ctxt_switches') };
  } catch {
    return { runNs: 0, waitNs: 0, voluntary: 0, involuntary: 0 };
  }
}

const at = process.argv.indexOf('--iterations');
const calls = at >= 0 ? Number(process.argv[at + 1]) : 1000;
if (!Number.isInteger(calls) || calls < BLOCK) throw new Error(`allreduce-first-calls: --iterations must be an integer of at least ${BLOCK}`);

const KINDS = {
  'float64-sum': () => ({ send: new Float64Array(1), recv: new Float64Array(1), op: MPI.SUM }),
  'int32-max': () => ({ send: new Int32Array(2), recv: new Int32Array(2), op: MPI.MAX }),
  'float32-sum': () => ({ send: new Float32Array(2), recv: new Float32Array(2), op: MPI.SUM }),
};
const kindAt = process.argv.indexOf('--kind');
const kind = kindAt >= 0 ? process.argv[kindAt + 1]! : 'float64-sum';
if (!(kind in KINDS)) throw new Error(`allreduce-first-calls: --kind must be one of ${Object.keys(KINDS).join(', ')}`);

await MPI.init();
const comm = MPI.COMM_WORLD;
// 8 bytes whatever the kind.
const { send, recv, op } = KINDS[kind as keyof typeof KINDS]();
send.fill(comm.rank + 1);
await comm.barrier();
for (let i = 0; i < WARMUP; i++) await comm.Allreduce(send, recv, op);
await comm.barrier();
const samples = new Float64Array(calls);
const cpuBefore = process.cpuUsage();
const schedBefore = mainThreadSched();
const t0 = MPI.wtime();
for (let i = 0; i < calls; i++) {
  const start = MPI.wtime();
  await comm.Allreduce(send, recv, op);
  samples[i] = MPI.wtime() - start;
}
const wall = MPI.wtime() - t0;
const schedAfter = mainThreadSched();
const cpu = process.cpuUsage(cpuBefore);
const ms = (ns: number): string => (ns / 1e6).toFixed(1);
const line =
  `rank ${comm.rank}: wall ${(wall * 1e3).toFixed(1)} ms, process cpu ${((cpu.user + cpu.system) / 1e3).toFixed(1)} ms, ` +
  `main thread on a core ${ms(schedAfter.runNs - schedBefore.runNs)} ms, runnable waiting ${ms(schedAfter.waitNs - schedBefore.waitNs)} ms, ` +
  `switches voluntary ${schedAfter.voluntary - schedBefore.voluntary} involuntary ${schedAfter.involuntary - schedBefore.involuntary}`;
const lines = await comm.gather(line, 0);
if (comm.rank === 0) {
  for (const l of lines!) console.log(l);
  const us = (s: number): string => (s * 1e6).toFixed(0);
  for (let b = 0; b + BLOCK <= calls; b += BLOCK) {
    const block = Array.from(samples.subarray(b, b + BLOCK)).sort((p, q) => p - q);
    const mean = block.reduce((p, q) => p + q, 0) / BLOCK;
    console.log(`calls ${b + 1}-${b + BLOCK}: median ${us(block[BLOCK >> 1]!)} mean ${us(mean)} slowest ${us(block[BLOCK - 1]!)} us`);
  }
  const sorted = Array.from(samples).sort((p, q) => p - q);
  console.log(`all ${calls} calls: median ${(sorted[calls >> 1]! * 1e6).toFixed(1)} us, mean ${((wall / calls) * 1e6).toFixed(1)} us`);
}
await MPI.finalize();
