/**
 * Collective write then read of a 3-D array through subarray views, 4 processes: issue 37's I/O
 * target (at least Open MPI's bandwidth on the same file system), with the result line of
 * collective.ts so that compare.sh can set it beside Open MPI's and MPICH's (reference/io.c is the
 * same benchmark in C).
 *
 *   pnpm exec mpiexec -n 4 packages/bench/src/io.ts [--dir DIR] [--size BYTES] [flags]
 *
 * The array is FLOAT64, X x 256 x 256 (SIZE / 512 KiB planes; default 256 MiB: 512 planes), split
 * 2 x 2 x 1 over the ranks (io-block.ts: pieces of 256 KiB that interleave in the file). Every rank
 * opens one file in DIR, sets its view to its block (File.setView with a Datatype.subarray
 * filetype), and repeats: WriteAll of its block from the start of the view; then, as many times,
 * ReadAll of it. Each call is timed from a barrier, and a call's time is the slowest rank's.
 * After the last read, outside the timed part, every rank compares what it read with what it wrote,
 * byte for byte (each element holds its index in the array). The file is removed at the end. No
 * sync: the figures are those of the file system's page cache, as ROMIO's coll_perf measures.
 * Rank 0 prints `io-write: SIZE-byte mean ...` and `io-read: SIZE-byte mean ...`: the mean per call,
 * SIZE / mean in MB/s, the median, p99 and min of the calls and the CPU per call over all ranks.
 */
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import * as MPI from '@tsmpi/core';
import { parseBenchArgs, takeFlag } from './bench-args.ts';
import { IO_PROCESSES, ioArray, ioBlock, ioBlockData } from './io-block.ts';
import { isLeadProcess } from './lead-rank.ts';
import { appendJsonRecord, bandwidthMBs, formatCallLine, formatConfigLine, recordHeader } from './report.ts';
import { summarizeCalls } from './stats.ts';

const USAGE = `usage: mpiexec -n 4 packages/bench/src/io.ts [--dir DIR] [flags]

Collective write then read of a 3-D FLOAT64 array split 2 x 2 x 1 over 4 processes, each rank's
block a subarray view: WriteAll, then ReadAll, each timed per call (the slowest rank's time).
Prints for each the mean time per call, the bandwidth, the median, p99 and min per-call times
and the CPU time per call (summed over all ranks).

  --dir DIR        directory of the file, on the file system to measure (default /var/tmp;
                   the file is removed afterwards)
  --iterations N   timed writes, then as many timed reads (default 5)
  --warmup N       untimed write and read before them (default 1)
  --size BYTES     the array's size, a multiple of 1 MiB (default 268435456: 512 x 256 x 256)
  --json FILE      append one JSON record (one line) per call to FILE
  -h, --help       this text`;

/** statfs's f_type of tmpfs (linux/magic.h): a directory there measures memory, not a disk. */
const TMPFS_MAGIC = 0x01021994;

const byDir = takeFlag(process.argv.slice(2), 'dir');
const dir = byDir.value ?? '/var/tmp';
const parsed = parseBenchArgs(byDir.rest, { iterations: 5, warmup: 1, window: 1, sizesBytes: [256 * 1024 * 1024] });
const shape = parsed.kind === 'run' ? ioArray(parsed.flags.sizesBytes[0]!) : null;
if (parsed.kind === 'help') {
  if (isLeadProcess()) console.log(USAGE);
} else if (parsed.kind === 'error' || shape === null || 'error' in shape || parsed.flags.sizesBytes.length !== 1) {
  const why = parsed.kind === 'error' ? parsed.message : shape !== null && 'error' in shape ? shape.error : 'give one --size';
  if (isLeadProcess()) console.error(`io: ${why}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const { iterations: calls, warmup, sizesBytes, jsonFile } = parsed.flags;
  const sizeBytes = sizesBytes[0]!;
  await MPI.init();
  const comm = MPI.COMM_WORLD;
  if (comm.size !== IO_PROCESSES) {
    if (comm.rank === 0) console.error(`io: runs on ${IO_PROCESSES} processes (got ${comm.size})\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    if (comm.rank === 0 && statfsSync(dir).type === TMPFS_MAGIC) console.error(`io: warning: ${dir} is a tmpfs (memory), not a disk`);
    const path = join(dir, await comm.bcast(`tsmpi-io-bench-${process.pid}-${Date.now()}.dat`, 0));
    const block = ioBlock(shape.sizes, comm.rank);
    const filetype = MPI.Datatype.subarray(block.sizes, block.subsizes, block.starts, 'C', MPI.FLOAT64).commit();
    const written = ioBlockData(block);
    const read = new Float64Array(written.length);
    const file = await MPI.File.open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR);
    try {
      await file.setView(0, MPI.FLOAT64, filetype);
      /** `count` collective calls after `warm` untimed ones: the slowest rank's time of each, and the CPU per call over all ranks. */
      const timed = async (warm: number, count: number, one: () => Promise<MPI.Status>): Promise<{ samples: Float64Array; cpuMillisPerCall: number }> => {
        const samples = new Float64Array(count);
        let cpuMicros = 0;
        for (let i = -warm; i < count; i++) {
          file.seek(0);
          read.fill(-1);
          await comm.barrier();
          const cpuBefore = process.cpuUsage();
          const start = MPI.wtime();
          const status = await one();
          const seconds = MPI.wtime() - start;
          const cpu = process.cpuUsage(cpuBefore);
          if (status.getCount(MPI.FLOAT64) !== written.length) throw new Error(`io: a collective call moved ${status.getCount(MPI.BYTE)} bytes, not ${written.byteLength}`);
          if (i < 0) continue;
          samples[i] = await comm.allreduce(seconds, MPI.MAX);
          cpuMicros += cpu.user + cpu.system;
        }
        return { samples, cpuMillisPerCall: await comm.allreduce(count > 0 ? cpuMicros / 1000 / count : 0, MPI.SUM) };
      };
      for (let w = 0; w < warmup; w++) {
        await timed(1, 0, () => file.WriteAll(written));
        await timed(1, 0, () => file.ReadAll(read));
      }
      const writes = await timed(0, calls, () => file.WriteAll(written));
      const reads = await timed(0, calls, () => file.ReadAll(read));
      const same = Buffer.compare(Buffer.from(read.buffer), Buffer.from(written.buffer)) === 0;
      if ((await comm.allreduce(same ? 0 : 1, MPI.SUM)) !== 0) throw new Error(`io: ${same ? 'another rank' : `rank ${comm.rank}`} read back other bytes than it wrote`);
      if (comm.rank === 0) {
        for (const [name, r] of [['io-write', writes], ['io-read', reads]] as const) {
          const figures = summarizeCalls(r.samples);
          console.log(formatCallLine(name, { sizeBytes, ...figures, cpuMillisPerCall: r.cpuMillisPerCall, calls, processes: IO_PROCESSES, flavour: `channels ${MPI.config().channels}` }));
          if (jsonFile !== null) {
            appendJsonRecord(jsonFile, {
              ...recordHeader(), bench: name, processes: IO_PROCESSES, iterations: calls, warmup, sizeBytes, dir,
              ...figures, bandwidthMBs: bandwidthMBs(sizeBytes, figures.meanMicros), cpuMillisPerCall: r.cpuMillisPerCall, config: MPI.config(),
            });
          }
        }
        console.log(formatConfigLine(MPI.config()));
      }
    } finally {
      await file.close();
      filetype.free();
      if (comm.rank === 0) await MPI.File.delete(path);
    }
  }
  await MPI.finalize();
}
