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
  /** How the one flush per turn is scheduled: process.nextTick or queueMicrotask. */
  readonly flushWith: 'nextTick' | 'microtask';
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
 * - flushWith 'nextTick': a tick scheduled from promise code runs only after
 *   the whole microtask queue has drained, so sends issued across a chain of
 *   awaits still share one write. test/micro-bench.ts (two instances in one
 *   process, "12 sends, then await" both ways, 0-byte frames): nextTick
 *   2.0-2.2 M msgs/s vs queueMicrotask 1.3 M msgs/s; ping-pong equal
 *   (~20 us per round trip). In one process both ends share the event loop,
 *   which favours nextTick's wider batching; two processes may differ less.
 */
export const DEFAULT_TUNING: TcpTuning = {
  highWaterMarkBytes: 4 * 1024 * 1024,
  handshakeTimeoutMs: 10_000,
  closeTimeoutMs: 5_000,
  referenceMinBytes: 16 * 1024,
  targetMinBytes: 64 * 1024,
  batchInitialBytes: 64 * 1024,
  readBufferBytes: 1024 * 1024,
  flushWith: 'nextTick',
};

/** Largest payload a frame header may announce (u32 wire field; Node's Buffer limit is far above). */
export const MAX_PAYLOAD_BYTES = 0xffff_ffff;
