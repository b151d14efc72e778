/**
 * One collective, timed per call: the forms issue 36 sets targets for, with the same loop and
 * result line as allreduce.ts, so that compare.sh can set them beside Open MPI's and MPICH's
 * (reference/collective.c is the same benchmark in C).
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/collective.ts --call CALL [flags]
 *
 * CALL is one of
 *   allreduce          Allreduce of SIZE bytes of FLOAT64 with SUM
 *   allreduce-init     the same through one persistent request (AllreduceInit), started and
 *                      waited once per call (MPI_Allreduce_init + MPI_Start + MPI_Wait)
 *   reduce-scatter     ReduceScatter of SIZE bytes of FLOAT64 with SUM, equal counts (SIZE / P
 *                      bytes to each rank; SIZE a multiple of 8 * P)
 *   reduce-scatter-block  the same through ReduceScatterBlock (MPI_Reduce_scatter_block in collective.c)
 *   neighbor-alltoall  NeighborAlltoall of SIZE bytes to each neighbor on a periodic P/2 x 2
 *                      Cartesian communicator (P even, at least 4; 4 neighbors each)
 * Every rank runs a barrier, WARMUP untimed calls, a barrier, then the timed calls; rank 0 prints
 * `CALL: SIZE-byte mean ...` with the mean per call (the loop's time / calls), the bandwidth
 * SIZE / mean, the median, p99 and min of the per-call times, and the CPU per call summed over
 * the ranks. Sizes above 64 KiB run ITERATIONS * 64 KiB / SIZE calls, at least 10. With
 * `--blocks N`, rank 0 also prints `blocks: ...`, its per-call figures over the first N timed calls
 * and over the rest (computed after the loop from the samples it keeps anyway: the loop is the same),
 * to tell a tail of the first calls (compilation) from one that stays (issue 40).
 */
import * as MPI from '@tsmpi/core';
import { parseBenchArgs, takeFlag } from './bench-args.ts';
import { isLeadProcess } from './lead-rank.ts';
import { appendJsonRecord, bandwidthMBs, formatCallLine, formatConfigLine, recordHeader } from './report.ts';
import { blockSummary, summarizeCalls, type BlockSummary } from './stats.ts';

const USAGE = `usage: mpiexec -n P packages/bench/src/collective.ts --call CALL [flags]

One collective timed per call. CALL: allreduce, allreduce-init (persistent), reduce-scatter
(equal counts), reduce-scatter-block, neighbor-alltoall (periodic P/2 x 2 Cartesian communicator, P even >= 4).
Prints the mean time per call in microseconds, the bandwidth, the median, p99 and min
per-call times and the CPU time per call (summed over all ranks).

  --call CALL      the collective (required)
  --iterations N   timed calls for small sizes (default 2000; sizes above 64 KiB run
                   N * 64 KiB / SIZE calls, at least 10)
  --warmup N       untimed calls (default 50; sizes above 64 KiB: at least 2)
  --size BYTES     bytes per call (reduce-scatter: in all; neighbor-alltoall: to each neighbor),
                   a multiple of 8 (default 8)
  --blocks N       also print the per-call mean, median, p99 and max of the first N timed
                   calls and of the rest (rank 0's calls)
  --json FILE      append one JSON record (one line) to FILE
  -h, --help       this text`;

const CALLS = ['allreduce', 'allreduce-init', 'reduce-scatter', 'reduce-scatter-block', 'neighbor-alltoall'] as const;
type Call = (typeof CALLS)[number];
const SCALE_BYTES = 64 * 1024;

/** The problem with this call on `processes` ranks and `sizeBytes`, or null. */
function shapeError(call: Call, processes: number, sizeBytes: number): string | null {
  if (sizeBytes % 8 !== 0) return '--size must be a multiple of 8 (FLOAT64 elements)';
  if ((call === 'reduce-scatter' || call === 'reduce-scatter-block') && sizeBytes % (8 * processes) !== 0) {
    return `--size must be a multiple of 8 * ${processes} for ${call} on ${processes} processes`;
  }
  if (call === 'neighbor-alltoall' && (processes < 4 || processes % 2 !== 0)) return `neighbor-alltoall needs an even number of processes, at least 4 (got ${processes})`;
  return null;
}

/** One call of the collective, ready to run in a loop. */
async function prepare(call: Call, comm: MPI.Comm, sizeBytes: number): Promise<{ run: () => Promise<void>; free: () => void }> {
  const n = sizeBytes / 8;
  if (call === 'allreduce' || call === 'allreduce-init') {
    const send = new Float64Array(n).fill(comm.rank + 1);
    const recv = new Float64Array(n);
    if (call === 'allreduce') return { run: () => comm.Allreduce(send, recv, MPI.SUM), free: () => {} };
    const req = comm.AllreduceInit(send, recv, MPI.SUM);
    return { run: () => { req.start(); return req.wait(); }, free: () => req.free() };
  }
  if (call === 'reduce-scatter' || call === 'reduce-scatter-block') {
    const send = new Float64Array(n).fill(comm.rank + 1);
    const recv = new Float64Array(n / comm.size);
    if (call === 'reduce-scatter-block') return { run: () => comm.ReduceScatterBlock(send, recv, MPI.SUM), free: () => {} };
    const counts = new Array<number>(comm.size).fill(n / comm.size);
    return { run: () => comm.ReduceScatter(send, recv, counts, MPI.SUM), free: () => {} };
  }
  const cart = await comm.createCart([comm.size / 2, 2], [true, true]);
  if (cart === null) throw new Error('collective: createCart returned null for a rank of the grid');
  const send = new Float64Array(4 * n).fill(comm.rank);
  const recv = new Float64Array(4 * n);
  return { run: () => cart.NeighborAlltoall(send, recv), free: () => void cart.free() };
}

/** "calls A-B mean M us (median, p99 P, max X)": one block of the --blocks line. */
function formatBlock(from: number, to: number, b: BlockSummary): string {
  return `calls ${from + 1}-${to} mean ${b.meanMicros.toFixed(2)} us (median ${b.medianMicros.toFixed(2)}, p99 ${b.p99Micros.toFixed(2)}, max ${b.maxMicros.toFixed(2)})`;
}

const { value: call, rest: afterCall } = takeFlag(process.argv.slice(2), 'call');
const { value: blocksFlag, rest } = takeFlag(afterCall, 'blocks');
const firstBlock = blocksFlag === undefined ? 0 : Number(blocksFlag);
const parsed = parseBenchArgs(rest, { iterations: 2000, warmup: 50, window: 1, sizesBytes: [8] });
if (parsed.kind === 'help') {
  if (isLeadProcess()) console.log(USAGE);
} else if (parsed.kind === 'error' || !CALLS.includes(call as Call) || !(Number.isInteger(firstBlock) && firstBlock >= 0)) {
  const why = parsed.kind === 'error' ? parsed.message
    : !CALLS.includes(call as Call) ? `--call must be one of ${CALLS.join(', ')} (got ${call ?? 'nothing'})`
    : `--blocks must be a whole number of calls (got ${blocksFlag})`;
  if (isLeadProcess()) console.error(`collective: ${why}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations, warmup, sizesBytes, jsonFile } = parsed.flags;
  const which = call as Call;
  await MPI.init();
  const comm = MPI.COMM_WORLD;
  const bad = sizesBytes.map((s) => shapeError(which, comm.size, s)).find((e) => e !== null);
  if (bad !== undefined) {
    if (comm.rank === 0) console.error(`collective: ${bad}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    for (const sizeBytes of sizesBytes) {
      const calls = sizeBytes <= SCALE_BYTES ? iterations : Math.max(10, Math.round((iterations * SCALE_BYTES) / sizeBytes));
      const warm = sizeBytes > SCALE_BYTES ? Math.max(2, Math.min(warmup, calls)) : warmup;
      const one = await prepare(which, comm, sizeBytes);
      await comm.barrier();
      for (let i = 0; i < warm; i++) await one.run();
      await comm.barrier();
      const samples = new Float64Array(calls);
      const cpuBefore = process.cpuUsage();
      const loopStart = MPI.wtime();
      for (let i = 0; i < calls; i++) {
        const start = MPI.wtime();
        await one.run();
        samples[i] = MPI.wtime() - start;
      }
      const loopSeconds = MPI.wtime() - loopStart;
      const cpu = process.cpuUsage(cpuBefore);
      one.free();
      const cpuMillisPerCall = await comm.allreduce((cpu.user + cpu.system) / 1000 / calls, MPI.SUM);
      if (comm.rank !== 0) continue;
      const figures = summarizeCalls(samples, loopSeconds);
      console.log(formatCallLine(which, { sizeBytes, ...figures, cpuMillisPerCall, calls, processes: comm.size, flavour: `channels ${MPI.config().channels}` }));
      if (firstBlock > 0 && firstBlock < calls) {
        console.log(`blocks: ${formatBlock(0, firstBlock, blockSummary(samples, 0, firstBlock))}; ${formatBlock(firstBlock, calls, blockSummary(samples, firstBlock, calls))}`);
      }
      if (jsonFile !== null) {
        appendJsonRecord(jsonFile, {
          ...recordHeader(), bench: which, processes: comm.size, iterations: calls, warmup: warm, sizeBytes,
          ...figures, bandwidthMBs: bandwidthMBs(sizeBytes, figures.meanMicros), cpuMillisPerCall, config: MPI.config(),
        });
      }
    }
    if (comm.rank === 0) console.log(formatConfigLine(MPI.config()));
  }
  await MPI.finalize();
}
