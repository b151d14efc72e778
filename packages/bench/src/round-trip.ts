/**
 * The ping-pong latency kernel: blocking Send/Recv round trips between two ranks.
 *
 * The initiator sends `sizeBytes` to the peer and waits for the same number of
 * bytes back; the responder echoes. After `warmup` untimed round trips and a
 * synchronization, the timed loop of `iterations` round trips is timed as a
 * whole (its mean per round trip is what a program pays) and every round trip
 * on its own with MPI.wtime (the median and p99: a steady cost against a tail
 * of scheduler hiccups on a shared machine). The process CPU time spent in
 * the timed loop is returned too.
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

/** What {@link runRoundTrip} measured over its timed loop. */
export interface RoundTripResult {
  /** On the initiator, the duration of each timed round trip in seconds; on the responder, empty. */
  readonly samples: Float64Array;
  /** Wall-clock seconds of the whole timed loop (on both sides). */
  readonly loopSeconds: number;
  /** This process's CPU time (user + system, all its threads: process.cpuUsage) during the timed loop, in microseconds. */
  readonly cpuMicros: number;
}

/**
 * Runs ping-pong round trips with `peer`.
 *
 * @param comm - communicator holding both ranks
 * @param peer - rank of the peer in `comm`
 * @param isInitiator - true on the side that sends first and measures; false on the echoing side
 * @param opts - iterations, warm-up, size, tag (default 0), sync (default `comm.barrier()`)
 * @returns the per-round-trip samples (initiator only), the loop's wall-clock time and this process's CPU time in it
 * @throws MPIError when a send, receive or the synchronization fails
 * @example
 * const { samples, loopSeconds } = await runRoundTrip(MPI.COMM_WORLD, 1, true, { iterations: 1000, warmup: 100, sizeBytes: 8 });
 */
export async function runRoundTrip(
  comm: MPI.Comm,
  peer: number,
  isInitiator: boolean,
  opts: RoundTripOptions,
): Promise<RoundTripResult> {
  const { iterations, warmup, sizeBytes } = opts;
  const tag = opts.tag ?? 0;
  const sendBuf = new Uint8Array(sizeBytes);
  const recvBuf = new Uint8Array(sizeBytes);

  for (let it = 0; it < warmup; it++) {
    await roundTrip(comm, peer, tag, isInitiator, sendBuf, recvBuf);
  }
  if (opts.sync !== undefined) await opts.sync();
  else await comm.barrier();

  const cpuBefore = process.cpuUsage();
  const loopStart = MPI.wtime();
  let samples = new Float64Array(0);
  if (!isInitiator) {
    for (let it = 0; it < iterations; it++) await roundTrip(comm, peer, tag, false, sendBuf, recvBuf);
  } else {
    samples = new Float64Array(iterations);
    for (let it = 0; it < iterations; it++) {
      const start = MPI.wtime();
      await roundTrip(comm, peer, tag, true, sendBuf, recvBuf);
      samples[it] = MPI.wtime() - start;
    }
  }
  const loopSeconds = MPI.wtime() - loopStart;
  const cpu = process.cpuUsage(cpuBefore);
  return { samples, loopSeconds, cpuMicros: cpu.user + cpu.system };
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
