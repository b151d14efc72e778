/**
 * One-sided Put between 2 processes, timed per epoch: issue 37's targets, with the result line of
 * allreduce.ts so that compare.sh can set it beside Open MPI's and MPICH's (reference/put.c is the
 * same benchmark in C).
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/put.ts --call put-lock|put-flush|get-lock|put-fence [--compute SECONDS] [flags]
 *
 *   put-lock    rank 0 runs lock(1, exclusive), Put of SIZE bytes (default 8), unlock(1) per call:
 *               passive target; rank 1 waits in a barrier, or with --compute S computes for S
 *               seconds without calling MPI while rank 0 runs its timed calls (the case MPI's
 *               progress rule is about: the origin's figure should not change while the target
 *               computes; choose S longer than the timed loop)
 *   put-flush   as put-lock with a flush(1) between the Put and the unlock (the Put is complete at the
 *               target while the lock is still held: a program that then tells a third process, or
 *               reads back, does this)
 *   get-lock    as put-lock with a Get of SIZE bytes instead of the Put (the data is in the origin's
 *               buffer once unlock returns: a remote read, as a distributed hash table's lookup)
 *   put-fence   both ranks: rank 0 Puts SIZE bytes (default 1 MiB), then fence, per call
 * Rank 0 prints `CALL: SIZE-byte mean ...`: the mean per call (the loop's time / calls), SIZE / mean
 * in MB/s, the median, p99 and min per-call times and the CPU per call summed over both ranks.
 */
import * as MPI from '@tsmpi/core';
import { parseBenchArgs, takeFlag } from './bench-args.ts';
import { isLeadProcess } from './lead-rank.ts';
import { appendJsonRecord, bandwidthMBs, formatCallLine, formatConfigLine, recordHeader } from './report.ts';
import { summarizeCalls } from './stats.ts';

const USAGE = `usage: mpiexec -n 2 packages/bench/src/put.ts --call put-lock|put-flush|get-lock|put-fence [flags]

One-sided Put, timed per epoch: put-lock (lock, Put, unlock: passive target), put-flush
(lock, Put, flush, unlock), get-lock (lock, Get, unlock), put-fence (Put, then fence).
Prints the mean time per call in microseconds, the bandwidth, the median, p99 and min
per-call times and the CPU time per call (summed over both ranks).

  --call CALL      put-lock, put-flush, get-lock or put-fence (required)
  --compute S      put-lock, put-flush, get-lock: the target computes S seconds without calling MPI (default 0)
  --iterations N   timed calls (default 1000)
  --warmup N       untimed calls (default 50)
  --size BYTES     bytes per Put or Get (default 8, 1048576 for put-fence)
  --json FILE      append one JSON record (one line) to FILE
  -h, --help       this text`;

/** Busy work that never calls MPI, for `seconds`. */
function compute(seconds: number): number {
  const end = performance.now() + seconds * 1000;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 10_000; i++) x += Math.sqrt(i);
  return x;
}

type Call = 'put-lock' | 'put-flush' | 'get-lock' | 'put-fence';
const CALLS: readonly Call[] = ['put-lock', 'put-flush', 'get-lock', 'put-fence'];
const isCall = (c: string | undefined): c is Call => CALLS.includes(c as Call);
const byCall = takeFlag(process.argv.slice(2), 'call');
const byCompute = takeFlag(byCall.rest, 'compute');
const call = byCall.value;
const computeSeconds = Number(byCompute.value ?? '0');
const parsed = parseBenchArgs(byCompute.rest, { iterations: 1000, warmup: 50, window: 1, sizesBytes: [call === 'put-fence' ? 1 << 20 : 8] });
if (parsed.kind === 'help') {
  if (isLeadProcess()) console.log(USAGE);
} else if (parsed.kind === 'error' || !isCall(call) || !(computeSeconds >= 0)) {
  const why = parsed.kind === 'error' ? parsed.message : !isCall(call) ? `--call must be put-lock, put-flush, get-lock or put-fence (got ${call ?? 'nothing'})` : '--compute must be a number of seconds >= 0';
  if (isLeadProcess()) console.error(`put: ${why}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations: calls, warmup, sizesBytes, jsonFile } = parsed.flags;
  const sizeBytes = sizesBytes[0]!;
  await MPI.init();
  const comm = MPI.COMM_WORLD;
  if (comm.size !== 2) {
    if (comm.rank === 0) console.error(`put: runs on 2 processes (got ${comm.size})\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    const win = await MPI.Win.allocate(sizeBytes, 1, comm);
    const origin = new Uint8Array(sizeBytes).fill(7);
    const fetched = new Uint8Array(sizeBytes);
    if (call === 'get-lock' && comm.rank === 1) win.memory.fill(9);
    const epochs: Record<Call, () => Promise<void>> = {
      'put-lock': async () => { await win.lock(1, MPI.LOCK_EXCLUSIVE); win.Put(origin, 1); await win.unlock(1); },
      'put-flush': async () => { await win.lock(1, MPI.LOCK_EXCLUSIVE); win.Put(origin, 1); await win.flush(1); await win.unlock(1); },
      'get-lock': async () => { await win.lock(1, MPI.LOCK_EXCLUSIVE); win.Get(fetched, 1); await win.unlock(1); },
      'put-fence': async () => { if (comm.rank === 0) win.Put(origin, 1); await win.fence(); },
    };
    const one = epochs[call];
    const samples = new Float64Array(calls);
    let loopSeconds = 0;
    await win.fence();
    // The warm-up ends before the target starts computing, so that a target that stalls the origin
    // stalls the timed calls, not the untimed ones.
    if (call === 'put-fence' || comm.rank === 0) for (let i = 0; i < warmup; i++) await one();
    await comm.barrier();
    const cpuBefore = process.cpuUsage();
    if (call === 'put-fence' || comm.rank === 0) {
      const loopStart = MPI.wtime();
      for (let i = 0; i < calls; i++) {
        const start = MPI.wtime();
        await one();
        samples[i] = MPI.wtime() - start;
      }
      loopSeconds = MPI.wtime() - loopStart;
    } else if (computeSeconds > 0) {
      compute(computeSeconds);
    }
    const cpu = process.cpuUsage(cpuBefore);
    await comm.barrier();
    if (call === 'get-lock') {
      if (comm.rank === 0 && fetched[sizeBytes - 1] !== 9) throw new Error('put: the Get did not bring the target window\'s bytes');
    } else if (comm.rank === 1 && new Uint8Array(win.memory)[sizeBytes - 1] !== 7) throw new Error('put: the target window does not hold the origin\'s bytes');
    const cpuMillisPerCall = await comm.allreduce((cpu.user + cpu.system) / 1000 / calls, MPI.SUM);
    await win.free();
    if (comm.rank === 0) {
      const figures = summarizeCalls(samples, loopSeconds);
      const flavour = `channels ${MPI.config().channels}${call !== 'put-fence' ? `, target computes ${computeSeconds} s` : ''}`;
      console.log(formatCallLine(call, { sizeBytes, ...figures, cpuMillisPerCall, calls, processes: 2, flavour }));
      if (jsonFile !== null) {
        appendJsonRecord(jsonFile, {
          ...recordHeader(), bench: call, processes: 2, iterations: calls, warmup, sizeBytes, computeSeconds,
          ...figures, bandwidthMBs: bandwidthMBs(sizeBytes, figures.meanMicros), cpuMillisPerCall, config: MPI.config(),
        });
      }
      console.log(formatConfigLine(MPI.config()));
    }
  }
  await MPI.finalize();
}
