/**
 * The shared counter of the RMA tests (MPICH test/mpi/rma fetchandadd, in spirit), for
 * rma-passive.ts (ranks) and rma-threads-worker.ts (threads): every member of `comm` increments a
 * FLOAT64 counter on member 0 `n` times with FetchAndOp under lockAll, flushing each, and the
 * values every member fetched are gathered. The callers check them: each of 0 .. n * size - 1
 * exactly once (the FetchAndOps were atomic) and the counter at n * size.
 */
import * as MPI from '@tsmpi/core';

/** Runs the increments; returns the window (still open: the caller reads member 0's counter, then frees it) and every member's fetched values. */
export async function fetchAndOpCounter(comm: MPI.Comm, n: number): Promise<{ win: MPI.Win; fetched: Float64Array }> {
  const win = await MPI.Win.allocate(8, 8, comm);
  const mine = new Float64Array(n);
  await win.lockAll();
  for (let i = 0; i < n; i++) {
    const old = new Float64Array(1);
    win.FetchAndOp(new Float64Array([1]), old, 0, 0, MPI.SUM);
    await win.flush(0);
    mine[i] = old[0]!;
  }
  await win.unlockAll();
  await comm.barrier();
  const fetched = new Float64Array(n * comm.size);
  await comm.Allgather(mine, fetched);
  return { win, fetched };
}

/** Member 0's counter (call on member 0 only). */
export function counterValue(win: MPI.Win): number {
  return new Float64Array(win.memory.buffer, win.memory.byteOffset, 1)[0]!;
}
