/**
 * How the neighbor message rate evolves over one run: the kernel of
 * neighbor-rate.ts (window of Irecv then Isend, then waitall) timed in blocks,
 * each printed with its rate and this process's CPU time per iteration (all
 * its threads: V8's compiler and GC threads included). Issue 15 used it to
 * find where the first ~20,000 iterations go (docs/PERFORMANCE.md 4.11).
 *
 *   pnpm exec mpiexec -n 2 packages/bench/src/msgrate-curve.ts [--blocks 20] [--block 500] [--window 12]
 *
 * CPU per iteration is a steadier measure than the rate on a loaded machine:
 * with `--wait block` it counts work done, not time spent waiting for a core.
 * Rank 0 prints one line per block: iterations so far, elapsed ms, M msgs/s in
 * the block, CPU us per iteration in the block.
 */
import { parseArgs } from 'node:util';
import * as MPI from '@tsmpi/core';
import { isLeadProcess } from './lead-rank.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '20' },
    block: { type: 'string', default: '500' },
    window: { type: 'string', default: '12' },
    help: { type: 'boolean', short: 'h' },
  },
});
const blocks = Number(values.blocks);
const per = Number(values.block);
const window = Number(values.window);
if (values.help === true || ![blocks, per, window].every((n) => Number.isInteger(n) && n > 0)) {
  if (isLeadProcess()) console.error('usage: mpiexec -n 2 packages/bench/src/msgrate-curve.ts [--blocks N] [--block ITERATIONS] [--window N] (positive integers)');
  process.exitCode = values.help === true ? 0 : 2;
} else {
  await MPI.init();
  const comm = MPI.COMM_WORLD;
  if (comm.size !== 2) {
    if (comm.rank === 0) console.error(`msgrate-curve: needs exactly 2 processes (got ${comm.size})`);
    process.exitCode = 2;
  } else {
    const peer = 1 - comm.rank;
    const recv = Array.from({ length: window }, () => new Uint8Array(0));
    const send = new Uint8Array(0);
    const reqs: MPI.Request<void>[] = [];
    const lines: string[] = [];
    await comm.barrier();
    const t0 = MPI.wtime();
    for (let b = 0; b < blocks; b++) {
      const start = MPI.wtime();
      const cpu0 = process.cpuUsage();
      for (let it = 0; it < per; it++) {
        for (let i = 0; i < window; i++) reqs[i] = comm.Irecv(recv[i]!, peer, 0);
        for (let i = 0; i < window; i++) reqs[window + i] = comm.Isend(send, peer, 0);
        await MPI.Request.waitall(reqs);
      }
      const end = MPI.wtime();
      const cpu = process.cpuUsage(cpu0);
      // Formatting waits until the end: no string work inside the timed blocks.
      lines.push(`${(b + 1) * per}\t${((end - t0) * 1000).toFixed(0)} ms\t${((window * per) / (end - start) / 1e6).toFixed(3)} M/s\tcpu ${((cpu.user + cpu.system) / per).toFixed(1)} us/it`);
    }
    if (comm.rank === 0) console.log(`iterations\telapsed\trate\tcpu per iteration (rank 0)\n${lines.join('\n')}`);
  }
  await MPI.finalize();
}
