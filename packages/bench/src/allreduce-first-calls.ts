/**
 * Where the first calls of an allreduce go: rank 0's time per call by block
 * of calls (median, mean, slowest), the CPU of each block summed over the
 * ranks (user and system time, and of it V8's and libuv's threads), and each
 * rank's main-thread scheduling over the timed calls (time on a core, time
 * runnable but waiting for one, context switches), from Linux's
 * /proc/self/task/PID/schedstat and status. Issue 15 used it to tell the first
 * blocks' unoptimised code from the run-queue waits of polling ranks that
 * outnumber the cores (8 bytes, docs/notebook/performance-2026-11.md 4.26), and to follow the
 * 8 MiB allreduce's CPU per call as V8 compiles its path (4.43).
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/allreduce-first-calls.ts [--iterations N] [--block N] [--warmup N]
 *                                                                      [--kind float64-sum|int32-max|float32-sum | --size BYTES]
 *
 * Like allreduce.ts: a barrier, --warmup untimed calls (default 50), a barrier, then N timed
 * calls (default 1000) in blocks of --block (default 100); the last line gives all the calls' mean
 * (the loop's time / calls), median, p99 and CPU per call over all ranks. --kind picks the 8-byte vector's element
 * type and the op (default float64-sum, allreduce.ts's), to compare how each kind's first calls
 * compile. --size runs a FLOAT64 SUM of
 * BYTES instead (a multiple of 8), as allreduce.ts --size does.
 */
import * as MPI from '@tsmpi/core';
import { readFileSync } from 'node:fs';
import { summarizeCalls } from './stats.ts';
import { threadCpu } from './thread-cpu.ts';

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

/** The integer after `flag` on the command line, or `fallback` without the flag. */
function intFlag(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const BLOCK = intFlag('--block', 100);
const WARMUP = intFlag('--warmup', 50);
const calls = intFlag('--iterations', 1000);
if (!Number.isInteger(BLOCK) || BLOCK < 1) throw new Error('allreduce-first-calls: --block must be a positive integer');
if (!Number.isInteger(WARMUP) || WARMUP < 0) throw new Error('allreduce-first-calls: --warmup must be an integer of at least 0');
if (!Number.isInteger(calls) || calls < BLOCK) throw new Error(`allreduce-first-calls: --iterations must be an integer of at least ${BLOCK} (--block)`);

const KINDS = {
  'float64-sum': () => ({ send: new Float64Array(1), recv: new Float64Array(1), op: MPI.SUM }),
  'int32-max': () => ({ send: new Int32Array(2), recv: new Int32Array(2), op: MPI.MAX }),
  'float32-sum': () => ({ send: new Float32Array(2), recv: new Float32Array(2), op: MPI.SUM }),
};
const kindAt = process.argv.indexOf('--kind');
const kind = kindAt >= 0 ? process.argv[kindAt + 1]! : 'float64-sum';
if (!(kind in KINDS)) throw new Error(`allreduce-first-calls: --kind must be one of ${Object.keys(KINDS).join(', ')}`);
const size = intFlag('--size', 0);
if (process.argv.includes('--size') && (!Number.isInteger(size) || size < 8 || size % 8 !== 0 || kindAt >= 0)) {
  throw new Error('allreduce-first-calls: --size must be a positive multiple of 8 (a FLOAT64 SUM), without --kind');
}

await MPI.init();
const comm = MPI.COMM_WORLD;
// 8 bytes whatever the kind, unless --size says otherwise.
const { send, recv, op } = size > 0
  ? { send: new Float64Array(size / 8), recv: new Float64Array(size / 8), op: MPI.SUM }
  : KINDS[kind as keyof typeof KINDS]();
send.fill(comm.rank + 1);
await comm.barrier();
for (let i = 0; i < WARMUP; i++) await comm.Allreduce(send, recv, op);
await comm.barrier();
const samples = new Float64Array(calls);
const blocks = Math.floor(calls / BLOCK);
// Per block: user and system microseconds of the whole process, and nanoseconds of its threads other than the main one.
const blockUser = new Float64Array(blocks);
const blockSystem = new Float64Array(blocks);
const blockOtherNs = new Float64Array(blocks);
const cpuBefore = process.cpuUsage();
const schedBefore = mainThreadSched();
let blockCpu = process.cpuUsage();
let blockThreads = threadCpu();
const t0 = MPI.wtime();
for (let i = 0; i < calls; i++) {
  const start = MPI.wtime();
  await comm.Allreduce(send, recv, op);
  samples[i] = MPI.wtime() - start;
  if ((i + 1) % BLOCK === 0) {
    const b = (i + 1) / BLOCK - 1;
    const used = process.cpuUsage(blockCpu);
    const threads = threadCpu();
    blockUser[b] = used.user;
    blockSystem[b] = used.system;
    blockOtherNs[b] = threads.otherNs - blockThreads.otherNs;
    blockCpu = process.cpuUsage();
    blockThreads = threadCpu();
  }
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
const sumUser = new Float64Array(blocks);
const sumSystem = new Float64Array(blocks);
const sumOtherNs = new Float64Array(blocks);
await comm.Reduce(blockUser, sumUser, MPI.SUM, 0);
await comm.Reduce(blockSystem, sumSystem, MPI.SUM, 0);
await comm.Reduce(blockOtherNs, sumOtherNs, MPI.SUM, 0);
const cpuMillisPerCall = await comm.allreduce((cpu.user + cpu.system) / 1e3 / calls, MPI.SUM);
if (comm.rank === 0) {
  for (const l of lines!) console.log(l);
  const us = (s: number): string => (s * 1e6).toFixed(0);
  // CPU per call summed over the ranks, in milliseconds.
  const perCall = (total: number, unitsPerMs: number): string => (total / unitsPerMs / BLOCK).toFixed(3);
  for (let b = 0; b < blocks; b++) {
    const block = Array.from(samples.subarray(b * BLOCK, (b + 1) * BLOCK)).sort((p, q) => p - q);
    const mean = block.reduce((p, q) => p + q, 0) / BLOCK;
    console.log(
      `calls ${b * BLOCK + 1}-${(b + 1) * BLOCK}: median ${us(block[BLOCK >> 1]!)} mean ${us(mean)} slowest ${us(block[BLOCK - 1]!)} us; ` +
        `cpu per call over all ranks: user ${perCall(sumUser[b]!, 1e3)} system ${perCall(sumSystem[b]!, 1e3)} ms, of it other threads ${perCall(sumOtherNs[b]!, 1e6)} ms`,
    );
  }
  const all = summarizeCalls(samples, wall);
  console.log(
    `all ${calls} calls: mean ${all.meanMicros.toFixed(1)} us (median ${all.medianMicros.toFixed(1)}, p99 ${all.p99Micros.toFixed(1)}; ` +
      `cpu ${cpuMillisPerCall.toFixed(3)} ms per call over all ranks)`,
  );
}
await MPI.finalize();
