/**
 * The ping-pong latency kernel: blocking Send/Recv round trips between two ranks.
 *
 * The initiator sends `sizeBytes` to the peer and waits for the same number of
 * bytes back; the responder echoes. After `warmup` untimed round trips and a
 * synchronization, every one of `iterations` round trips is timed on its own
 * with MPI.wtime, so the caller can report the median (robust against the
 * scheduler hiccups of a shared 2-core machine) rather than the mean.
 *
 * Like neighbor-rate.ts, it takes a communicator, a peer, a tag and a sync
 * function, so a thread body can call it in the multithreaded layouts.
 */
import * as MPI from '@tsmpi/core';

/** Parameters of one {@link runRoundTrip} call. */
export interface RoundTripOptions {
  /** Timed round trips. */
  readonly iterations: number;
  /** Untimed round trips before the synchronization. */
  readonly warmup: number;
  /** Bytes per message, each way. */
  readonly sizeBytes: number;
  /** Tag of every message; default 0. */
  readonly tag?: number;
  /** Runs after the warm-up, before timing. Default: `comm.barrier()`. */
  readonly sync?: () => Promise<void>;
}

/**
 * Runs ping-pong round trips with `peer`.
 *
 * @param comm - communicator holding both ranks
 * @param peer - rank of the peer in `comm`
 * @param isInitiator - true on the side that sends first and measures; false on the echoing side
 * @param opts - iterations, warm-up, size, tag (default 0), sync (default `comm.barrier()`)
 * @returns on the initiator, the duration of each timed round trip in seconds;
 *   on the responder, an empty array
 * @throws MPIError when a send, receive or the synchronization fails
 * @example
 * const samples = await runRoundTrip(MPI.COMM_WORLD, 1, true, { iterations: 1000, warmup: 100, sizeBytes: 8 });
 */
export async function runRoundTrip(
  comm: MPI.Comm,
  peer: number,
  isInitiator: boolean,
  opts: RoundTripOptions,
): Promise<Float64Array> {
  const { iterations, warmup, sizeBytes } = opts;
  const tag = opts.tag ?? 0;
  const sendBuf = new Uint8Array(sizeBytes);
  const recvBuf = new Uint8Array(sizeBytes);

  for (let it = 0; it < warmup; it++) {
    await roundTrip(comm, peer, tag, isInitiator, sendBuf, recvBuf);
  }
  if (opts.sync !== undefined) await opts.sync();
  else await comm.barrier();

  if (!isInitiator) {
    for (let it = 0; it < iterations; it++) await roundTrip(comm, peer, tag, false, sendBuf, recvBuf);
    return new Float64Array(0);
  }
  const samples = new Float64Array(iterations);
  for (let it = 0; it < iterations; it++) {
    const start = MPI.wtime();
    await roundTrip(comm, peer, tag, true, sendBuf, recvBuf);
    samples[it] = MPI.wtime() - start;
  }
  return samples;
}

/** One round trip: send then receive on the initiator, receive then send on the responder. */
async function roundTrip(
  comm: MPI.Comm,
  peer: number,
  tag: number,
  isInitiator: boolean,
  sendBuf: Uint8Array,
  recvBuf: Uint8Array,
): Promise<void> {
  if (isInitiator) {
    await comm.Send(sendBuf, peer, tag);
    await comm.Recv(recvBuf, peer, tag);
  } else {
    await comm.Recv(recvBuf, peer, tag);
    await comm.Send(sendBuf, peer, tag);
  }
}
