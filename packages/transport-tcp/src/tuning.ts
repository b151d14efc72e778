/**
 * Tuning values of the TCP transport, each with the reason for its default.
 * createTransport uses DEFAULT_TUNING; tests build a TcpTransport with smaller
 * timeouts.
 */

export interface TcpTuning {
  /** send() returns false once a channel holds more than this many unsent bytes. */
  readonly highWaterMarkBytes: number;
  /** A connection must finish its handshake within this time (both sides). */
  readonly handshakeTimeoutMs: number;
  /** close() destroys connections whose peers have not ended them after this long. */
  readonly closeTimeoutMs: number;
  /** Payloads sent with a sentToken and at least this long are written by reference (no copy). */
  readonly referenceMinBytes: number;
  /** Received payloads of at least this size are offered to handlers.payloadTarget; rests this long are read into it. */
  readonly targetMinBytes: number;
  /** Initial size of a channel's reusable batch buffer. */
  readonly batchInitialBytes: number;
  /** Size of the one buffer accepted sockets read into (read-buffer.ts). */
  readonly readBufferBytes: number;
  /** TCP keep-alive: idle time before the kernel's first probe, on every connection. */
  readonly keepAliveMs: number;
  /** A refused or unreachable connect is retried, with backoff, for this long before the peer counts as lost. */
  readonly connectRetryMs: number;
  /** The same for a refused connect (no listener): the peer's process is most likely gone, so a shorter budget. */
  readonly connectRefusedRetryMs: number;
  /** First retry delay; doubled on every retry up to connectRetryMaxDelayMs. */
  readonly connectRetryDelayMs: number;
  readonly connectRetryMaxDelayMs: number;
  /**
   * A user thread's own connection (threadConnections) whose connect or handshake fails or times out,
   * but not refused, is retried, with the same backoff, for this long.
   */
  readonly threadConnectRetryMs: number;
  /** Peers that published this transport's host are reached over a Unix-domain socket file in the job's directory of mode 0700 (same-host.ts, docs/adr/0029). */
  readonly sameHostUnix: boolean;
}

/**
 * - highWaterMarkBytes 4 MiB: 64 eager messages at the default 64 KiB eager
 *   limit, or several rendezvous chunks, fit before the device is asked to
 *   back off; with C channels and P peers the worst case stays bounded
 *   (4 MiB x C x P) while a burst of small messages never hits it.
 * - handshakeTimeoutMs 10 s: a loopback handshake takes well under 1 ms, but
 *   at job start hundreds of processes connect at once into one accept
 *   backlog on loaded nodes; 10 s tolerates that and still frees a stray
 *   connection (port scanner, wrong job) promptly.
 * - closeTimeoutMs 5 s: close() runs after MPI's final barrier, when every
 *   peer is closing too and answers within milliseconds; a peer that has not
 *   ended its side after 5 s is hung, and finalize must not hang with it.
 * - referenceMinBytes 16 KiB: below it a copy into the batch (memcpy at
 *   ~10 GB/s, under 2 us) is cheaper than an extra writev entry and a write
 *   callback.
 * - targetMinBytes 64 KiB: the size of Node's default socket read (accepted
 *   sockets read up to readBufferBytes); only payloads near it or above it
 *   are likely to span reads, where receiving into the device's buffer saves
 *   an allocation and a copy. It is also the smallest rest of such a payload
 *   that the socket reads straight into the target: a smaller rest would cost
 *   a read system call of its own, more than copying it.
 * - batchInitialBytes 64 KiB: one socket read's worth; it grows on demand.
 * - readBufferBytes 1 MiB: one per transport, shared by its accepted sockets;
 *   a loopback read of a large message takes 150 KiB on average into it
 *   (against 64 KiB reads into fresh Buffers), and a 1 MiB buffer per
 *   transport is small next to the shared-memory regions.
 * - keepAliveMs 5 s: a connection to a host that vanished without a FIN
 *   (link down, machine gone) is found by the kernel's probes instead of
 *   never; mpiexec's heartbeats end such a job sooner (within 10 s), the
 *   probes free the sockets of a process that outlives it. Idle MPI channels
 *   cost one small probe per 5 s.
 * - connectRetryMs 10 s, from 50 ms doubling to 1 s: a peer's listener is up
 *   before its address is published, so a refused connect is rare and means a
 *   transient fault (a SYN dropped by a busy host, a route coming up); ten
 *   seconds covers those and is the same bound as the handshake timeout.
 * - connectRefusedRetryMs 1 s: a refused connect means no listener, which
 *   after the address was published means the peer process ended; one second
 *   of retries covers a restarting network stack without delaying the report
 *   of a dead peer (which names the cause of a job's failure) by ten.
 * - threadConnectRetryMs unbounded: a thread connection goes to a process
 *   whose listener the kernel answered (it accepted the connection, or
 *   refused it: refused keeps connectRefusedRetryMs) but whose event loop may
 *   not serve the handshake for a while: 8-16 threads per process connecting
 *   at once on a loaded 2-core machine, or a peer whose main thread hosts the
 *   channels (inline progress) and computes. One such handshake took over 10 s
 *   (docs/adr/0015) and ended a correct job. Whether the peer is gone is for
 *   its process connections and mpiexec to say, not for a thread's.
 * - sameHostUnix true: a Unix-domain socket skips the kernel's TCP/IP stack;
 *   plain Node ran a ping-pong 19% faster and 12-frame batches 22% faster
 *   over one than over TCP loopback (same-host.ts, docs/adr/0012).
 */
export const DEFAULT_TUNING: TcpTuning = {
  highWaterMarkBytes: 4 * 1024 * 1024,
  handshakeTimeoutMs: 10_000,
  closeTimeoutMs: 5_000,
  referenceMinBytes: 16 * 1024,
  targetMinBytes: 64 * 1024,
  batchInitialBytes: 64 * 1024,
  readBufferBytes: 1024 * 1024,
  keepAliveMs: 5_000,
  connectRetryMs: 10_000,
  connectRefusedRetryMs: 1_000,
  connectRetryDelayMs: 50,
  connectRetryMaxDelayMs: 1_000,
  threadConnectRetryMs: Number.POSITIVE_INFINITY,
  sameHostUnix: true,
};

/** Largest payload a frame header may announce (u32 wire field; Node's Buffer limit is far above). */
export const MAX_PAYLOAD_BYTES = 0xffff_ffff;
