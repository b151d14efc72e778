/**
 * The Neighbor Message Rate kernel: one caller and one peer exchange windows of
 * nonblocking messages as fast as they can.
 *
 * Source: Dózsa, Kumar, Balaji et al., "Enabling Concurrent Multithreaded MPI
 * Communication on Multicore Petascale Systems" (EuroMPI 2010), section 4,
 * itself a variant of the Sequoia SQMR Phloem microbenchmark. Each iteration
 * posts `window` (12) nonblocking receives from the peer, then `window`
 * nonblocking sends to the peer, then waits for all of them. After `warmup`
 * (10) untimed iterations and a synchronization, `iterations` (10,000) are
 * timed. The rate is the messages this caller sent divided by the elapsed time.
 *
 * ```
 *   caller (rank 0)                        peer (rank 1)
 *   Irecv x12 ─┐                         ┌─ Irecv x12
 *   Isend x12 ─┼──── 12 messages ───────>│
 *              │<─── 12 messages ────────┼─ Isend x12
 *   waitall(24)┘                         └─ waitall(24)
 * ```
 *
 * The kernel knows nothing about processes or threads: it takes a communicator,
 * a peer rank, a tag and a synchronization function. The single-threaded
 * two-process form (msgrate.ts) calls it once per process with COMM_WORLD and
 * `comm.barrier()`. The multithreaded layouts ('paper': a root process whose N
 * threads each talk to their own peer process; 'pair': two processes, thread i
 * with thread i) call it from each thread body with their own peer and a
 * distinct tag per thread (so that thread i only matches thread i), and pass a
 * `sync` that suits their layout.
 *
 * Hot path: buffers and the request array are allocated once; the loop
 * allocates only what Irecv/Isend themselves allocate.
 */
import * as MPI from '@tsmpi/core';

/** Parameters of one {@link runNeighborRate} call. */
export interface NeighborRateOptions {
  /** Timed iterations (paper: 10,000). */
  readonly iterations: number;
  /** Untimed iterations before the synchronization (paper: 10). */
  readonly warmup: number;
  /** Receives and sends posted per iteration (paper: 12). */
  readonly window: number;
  /** Bytes per message (paper: 0). */
  readonly sizeBytes: number;
  /** Tag of every message; default 0. Threads sharing a communicator use distinct tags. */
  readonly tag?: number;
  /**
   * Runs after the warm-up and before the clock starts; it must return only
   * once the peer has finished its warm-up too. Default: `comm.barrier()`.
   */
  readonly sync?: () => Promise<void>;
}

/** What one caller measured. */
export interface NeighborRateResult {
  /** Messages this caller sent during the timed iterations (window x iterations). */
  readonly messagesSent: number;
  /** Wall time of the timed iterations, in seconds (MPI.wtime). */
  readonly elapsedSeconds: number;
  /** messagesSent / elapsedSeconds. */
  readonly messagesPerSecond: number;
}

/**
 * Runs the neighbor message-rate exchange with `peer` and returns this
 * caller's rate. The peer must call it with the same options (and `peer` set
 * to this caller's rank).
 *
 * @param comm - communicator holding both ranks
 * @param peer - rank of the peer in `comm`
 * @param opts - iteration counts, window, message size, tag (default 0), sync (default `comm.barrier()`)
 * @returns messages sent, elapsed seconds and messages per second of this caller
 * @throws MPIError when a send, receive or the synchronization fails
 * @example
 * const r = await runNeighborRate(MPI.COMM_WORLD, 1 - MPI.COMM_WORLD.rank,
 *   { iterations: 10_000, warmup: 10, window: 12, sizeBytes: 0 });
 */
export async function runNeighborRate(
  comm: MPI.Comm,
  peer: number,
  opts: NeighborRateOptions,
): Promise<NeighborRateResult> {
  const { iterations, warmup, window, sizeBytes } = opts;
  const tag = opts.tag ?? 0;
  // Receives need distinct buffers; concurrent sends may share one (MPI-3.0 allows it).
  const recvBufs: Uint8Array[] = [];
  for (let i = 0; i < window; i++) recvBufs.push(new Uint8Array(sizeBytes));
  const sendBuf = new Uint8Array(sizeBytes);
  const reqs: MPI.Request<void>[] = [];

  for (let it = 0; it < warmup; it++) {
    await exchangeWindow(comm, peer, tag, recvBufs, sendBuf, reqs);
  }
  if (opts.sync !== undefined) await opts.sync();
  else await comm.barrier();

  const start = MPI.wtime();
  for (let it = 0; it < iterations; it++) {
    await exchangeWindow(comm, peer, tag, recvBufs, sendBuf, reqs);
  }
  const elapsedSeconds = MPI.wtime() - start;
  const messagesSent = window * iterations;
  return { messagesSent, elapsedSeconds, messagesPerSecond: messagesSent / elapsedSeconds };
}

/** One iteration: post every receive, then every send, then wait for all (msgrate-curve.ts runs it too). */
export async function exchangeWindow(
  comm: MPI.Comm,
  peer: number,
  tag: number,
  recvBufs: readonly Uint8Array[],
  sendBuf: Uint8Array,
  reqs: MPI.Request<void>[],
): Promise<void> {
  const window = recvBufs.length;
  for (let i = 0; i < window; i++) reqs[i] = comm.Irecv(recvBufs[i], peer, tag);
  for (let i = 0; i < window; i++) reqs[window + i] = comm.Isend(sendBuf, peer, tag);
  await MPI.Request.waitall(reqs);
}
