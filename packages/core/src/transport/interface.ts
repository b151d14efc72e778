/**
 * The transport contract (a netmod, in MPICH words): the whole interface
 * between the device layer of @tsmpi/core and a byte transport such as
 * @tsmpi/transport-tcp. Core owns it; a transport sees nothing else of core.
 *
 * Roles and threads
 * - One Transport instance is created, driven and closed by one thread (the
 *   thread that runs its channel engine(s)); every method is called, and every
 *   handler is called back, on that thread only. A Transport owns `channels`
 *   (a subset of 0..channelCount-1) towards every peer process.
 * - The device calls listen() once, publishes the returned address through the
 *   wire-up service, and after the fence calls start() with every process's
 *   address. Connections are made lazily on the first send to a peer.
 *
 * Channels and order
 * - A frame from endpoint s to endpoint d travels on channel
 *   channelOf(s, d, endpointsPerProcess, channelCount) (below): one channel
 *   per (s, d) pair, so its frames are delivered in the order send() was
 *   called (MPI's non-overtaking rule rests on this), and the same channel
 *   for (d, s), so answers (CTS, SYNC_ACK) reach the thread that hosts it.
 *
 * Buffers
 * - send() copies `header` before it returns (the device reuses one header
 *   object). If `sentToken < 0` it also copies `payload` before returning; if
 *   `sentToken >= 0` it may keep a reference to `payload` and calls
 *   handlers.onSent(sentToken) once it no longer needs it (rendezvous data
 *   goes out without a copy; the caller must not touch it until then).
 * - Everything sent during one turn of the event loop leaves in one write per
 *   channel (batching).
 * - handlers.onDeliver(header, payload): both are valid only during the call;
 *   copy or consume them. `header` is a reused object.
 * - handlers.payloadTarget(header), when given, is asked for large payloads
 *   before their bytes arrive; returning a Uint8Array of exactly
 *   header.payloadLength bytes lets the transport receive straight into it
 *   (then onDeliver gets that same array). A payload above
 *   options.maxUnsolicitedPayloadBytes is accepted only into such an array.
 *
 * Event loop
 * - A transport holds no reference on its thread's event loop (servers and
 *   sockets are unref'd), so a program that returns without MPI.finalize()
 *   exits. The device keeps the loop alive while operations are pending and
 *   while close() runs.
 *
 * Errors
 * - Methods never throw for network events. A peer whose connection fails or
 *   closes unexpectedly is reported once through handlers.onPeerLost; a
 *   connection that fails the job-key handshake is closed and logged, and the
 *   job goes on. Errors carry a string code (TSMPI_ERR_PEER_CLOSED, ...);
 *   the device turns them into MPIError(ERR_PROC_FAILED) at its boundary.
 */

/** Kinds of frames. The device gives them meaning; a transport only carries them. */
export const FRAME_KIND = {
  /** payload is the whole message */
  EAGER: 1,
  /** eager, and the receiver answers SYNC_ACK once matched (ssend) */
  EAGER_SYNC: 2,
  /** receiver -> sender: the synchronous send was matched; aux = sender's request id */
  SYNC_ACK: 3,
  /** request to send; aux = sender's request id, aux2 = message length; no payload */
  RNDV_RTS: 4,
  /** clear to send; aux = sender's request id, aux2 = receiver's request id */
  RNDV_CTS: 5,
  /** rendezvous data; aux = receiver's request id */
  RNDV_DATA: 6,
  /** device-internal control message (msgpack payload) */
  CONTROL: 7,
  /**
   * sender -> receiver: cancel the message of send slot aux (MPI_Cancel of a synchronous or
   * rendezvous send); context, endpoints and tag are the message's; no payload
   */
  CANCEL_SEND: 8,
  /** receiver -> sender: the message of send slot aux was removed before a receive matched it; sent only then */
  CANCEL_ACK: 9,
  /** one-sided operation on a window (device/rma-target.ts): aux = code, element kind, op; aux2 = bytes or lock type */
  RMA: 10,
} as const;
export type FrameKind = (typeof FRAME_KIND)[keyof typeof FRAME_KIND];

/** Bit flags in FrameHeader.flags. */
export const FRAME_FLAG = {
  /** payload is msgpack of a JavaScript value (object form: send/recv) */
  OBJECT: 1,
  /** message was sent in synchronous mode (ssend) */
  SYNC: 2,
} as const;

/**
 * A frame header. Wire sizes: kind u8, flags u8, contextId u16, srcEndpoint
 * u32, dstEndpoint u32, tag i32, seq u32, aux u32, aux2 u32, payloadLength u32.
 */
export interface FrameHeader {
  kind: number;
  flags: number;
  contextId: number;
  srcEndpoint: number;
  dstEndpoint: number;
  tag: number;
  seq: number;
  aux: number;
  aux2: number;
  payloadLength: number;
}

/**
 * The largest message, in bytes: 4 GiB - 1. Lengths travel in u32 fields (payloadLength, the
 * RTS's aux2), and Node 20's typed arrays hold at most 2^32 bytes (buffer.constants.MAX_LENGTH),
 * so only a message of exactly 4 GiB is refused (the API checks, with ERR_COUNT).
 */
export const MAX_MESSAGE_BYTES = 0xffff_ffff;

/**
 * The channel that carries every frame between endpoints s and d (either
 * direction), with J endpoints per process (endpoint e lives in process
 * floor(e / J), at index e mod J) and C channels per process pair:
 *
 *   (floor(s / J) + floor(d / J) + (min(s, d) mod J)) mod C
 *
 * With J = 1 this is the paper's (s + d) mod C (multichannel queues 3.1-3.2).
 * With J > 1 the paper's rule on global ranks sends endpoint i of one process
 * and endpoint i of another over the same channel for every i when C divides
 * J (0 -> 2 and 1 -> 3 both on channel 0 with J = C = 2), so the endpoints of
 * a process share one connection and one engine. Taking the index of the
 * lower endpoint instead spreads endpoint i's traffic with its peer i over
 * the channels, keeps the function symmetric, and loads every channel
 * equally over all pairs of two processes when C divides J (docs/adr/0018).
 * Header fields are u32: no 32-bit integer arithmetic here.
 */
export function channelOf(srcEndpoint: number, dstEndpoint: number, endpointsPerProcess: number, channelCount: number): number {
  const J = endpointsPerProcess;
  if (J === 1) return (srcEndpoint + dstEndpoint) % channelCount;
  const lower = srcEndpoint < dstEndpoint ? srcEndpoint : dstEndpoint;
  return (Math.floor(srcEndpoint / J) + Math.floor(dstEndpoint / J) + (lower % J)) % channelCount;
}

export function newFrameHeader(): FrameHeader {
  return { kind: 0, flags: 0, contextId: 0, srcEndpoint: 0, dstEndpoint: 0, tag: 0, seq: 0, aux: 0, aux2: 0, payloadLength: 0 };
}

/**
 * Fills `out` as the answer of kind `kind` to frame `h` (CANCEL_ACK, RNDV_DATA, a window's reply):
 * the same context, the endpoints swapped, flags and aux2 zero. `seq` is left as it is: whoever
 * numbers frames on that path sets it.
 */
export function fillAnswer(out: FrameHeader, h: FrameHeader, kind: number, tag: number, aux: number, payloadLength: number): FrameHeader {
  out.kind = kind;
  out.flags = 0;
  out.contextId = h.contextId;
  out.srcEndpoint = h.dstEndpoint;
  out.dstEndpoint = h.srcEndpoint;
  out.tag = tag;
  out.aux = aux;
  out.aux2 = 0;
  out.payloadLength = payloadLength;
  return out;
}

/**
 * A plain EAGER frame (flags 0) from process `srcProcess`, its header's fields given as numbers by
 * the transport (the wire layout is the transport's alone): context id, source and destination
 * endpoint, tag. Its payload is `bytes[start, end)`, valid only during the call: a handler that
 * keeps it makes the view or copy itself, so a frame it declines costs no allocation. (seq, aux and
 * aux2 are not given: the lean send writes them zero, and a transport offers no frame whose reader
 * needs them, such as a reader route's tagged one, to a handler that takes frames so.)
 */
export type EagerArrived = (
  srcProcess: number, contextId: number, srcEndpoint: number, dstEndpoint: number, tag: number,
  bytes: Uint8Array, start: number, end: number,
) => boolean;

/** Minimal structured logger (pino-compatible subset). */
export interface TransportLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface TransportError {
  /** TSMPI_ERR_PEER_CLOSED | TSMPI_ERR_CONNECT | TSMPI_ERR_HANDSHAKE | TSMPI_ERR_SOCKET | TSMPI_ERR_PROTOCOL (a frame the receiver refuses) */
  readonly code: string;
  readonly message: string;
  readonly cause?: unknown;
}

export interface TransportHandlers {
  onDeliver(srcProcess: number, header: FrameHeader, payload: Uint8Array): void;
  onSent(sentToken: number): void;
  onPeerLost(process: number, err: TransportError): void;
  payloadTarget?(srcProcess: number, header: FrameHeader): Uint8Array | null;
  /**
   * Optional, "eager arrived" (the lean path's arrival, docs/adr/0020-lean-common-path.md): offered,
   * before any header object is made, each plain EAGER frame (flags 0) that arrives whole in one
   * read with a payload onDeliver would get as a view of that read (EagerArrived). True: the handler
   * consumed the frame (the transport counts it received); false, having done nothing: the
   * transport decodes it and calls onDeliver as usual.
   */
  onEager?: EagerArrived;
  /**
   * Optional: an accepted thread connection (TransportOptions.threadConnections on the dialling
   * side) from `srcProcess` closed, its thread having left or died, after every frame it carried
   * was delivered; `lastSeq` is the `seq` word of its last frame (-1: it carried none). An endpoint
   * reader takes the end of a sender thread's connection for that thread's FIN when the thread
   * died before sending one (docs/adr/0019, gap 4).
   */
  onThreadConnectionEnd?(srcProcess: number, lastSeq: number): void;
}

export interface TransportOptions {
  /** This process's index in the job, 0..processCount-1. */
  readonly process: number;
  readonly processCount: number;
  /** Channels per process pair in the whole job (C). */
  readonly channelCount: number;
  /** The channels this instance owns (default: all of 0..C-1). */
  readonly channels?: readonly number[];
  /** Endpoints per process (J, `--endpoints`; default 1): channelOf() needs it to pick a frame's channel. */
  readonly endpointsPerProcess?: number;
  /** Per-job secret (hex); every connection must prove it knows it. */
  readonly jobKey: string;
  /** Interface address to listen on ('127.0.0.1' for single-host jobs). */
  readonly listenHost: string;
  /** Ports to listen on, both ends included (mpiexec --port-range); absent: any free port. */
  readonly listenPorts?: { readonly lo: number; readonly hi: number };
  /**
   * The largest payload a peer may send in a frame that handlers.payloadTarget did not supply an
   * array for (the device: its eager limit). A larger one is refused before anything is allocated:
   * the connection is closed and the peer reported lost (TSMPI_ERR_PROTOCOL). Absent: no bound
   * below the u32 wire field.
   */
  readonly maxUnsolicitedPayloadBytes?: number;
  readonly log: TransportLog;
  readonly handlers: TransportHandlers;
  /**
   * This instance belongs to one user thread that sends on connections of its
   * own (device.ts, "direct sends"): it never listens, and its connections are
   * marked as thread connections in the handshake, so the accepting side takes
   * their end (the thread exited) for what it is, not for the peer process's
   * departure or loss. It holds the thread's event loop while frames wait to reach the
   * kernel (connecting, or a write the kernel did not take at once), so a
   * thread that sends and ends does not lose them.
   */
  readonly threadConnections?: boolean;
  /**
   * Optional, with threadConnections: called when one of this instance's connections starts (true)
   * or stops (false) holding frames the kernel has not taken (queued, connecting, or the part of a
   * write the kernel refused), so the calls balance. Those frames need this thread's event loop:
   * a thread that dies while any connection holds them has lost them (its process says so,
   * packages/core/src/api/worker.ts), and one that computes delays them until it runs again.
   */
  readonly onHoldChange?: (holding: boolean) => void;
  /**
   * Optional, an endpoint reader's transport (docs/adr/0019): listen only on this same-host name (a
   * Unix-domain socket's absolute path, which ReaderSocketName gives, in a directory only the job's
   * user may enter: docs/adr/0029) and not on the network; listen() resolves to the name. On the
   * sending side, a peer address given to start() that starts with '/' is such a name: it is
   * dialled as it is, with no network connection to fall back to.
   */
  readonly listenName?: string;
  /**
   * Optional (mpiexec --secure, docs/adr/0034-secure-option-tls-psk.md): every connection over the network (not a same-host
   * socket in the job's 0700 directory) runs TLS keyed by jobKey (util/job-tls.ts) under the
   * connection handshake; a peer without the key fails the TLS handshake. Every process of a job
   * sets it alike.
   */
  readonly secure?: boolean;
}

/**
 * A process of another mpiexec job coupled to this one by connect/accept (docs/adr/0043-connect-two-jobs.md),
 * known here by a number of this job's universe. Its connections prove `key` (the pair of jobs' key) instead
 * of the job key, this process says it is `asProcess` (its number in the other job) when it dials it, and
 * frames from it name endpoints in the other job's numbering: the receiving transport renumbers them.
 */
export interface ForeignPeer {
  readonly key: string;
  readonly asProcess: number;
  /** Its own number in the other job, for messages (a lost peer is named so); absent: unknown. */
  readonly theirProcess?: number;
  /**
   * The other job runs channel engines (--progress threads|engines): channel c of it listens at
   * `channelAddresses[c]`, not at its one published address, so a transport dials that channel there.
   * Absent: every channel at the address addPeers gave.
   */
  readonly channelAddresses?: readonly string[];
}

export interface Transport {
  /** Starts listening; resolves to this instance's address, to be published to peers. */
  listen(): Promise<string>;
  /** Gives the address every process published (index = process). Connections are lazy. */
  start(peerAddresses: readonly string[]): void;
  /**
   * Optional (dynamic processes, docs/adr/0040-dynamic-processes.md): addresses of processes that
   * joined the job after start() (index = process; '' leaves an entry as it was). Connections stay
   * lazy. A transport without it cannot reach spawned processes (spawn then refuses).
   */
  addPeers?(peerAddresses: readonly string[], foreign?: ReadonlyMap<number, ForeignPeer>): void;
  /**
   * Queues a frame for `dstProcess` on channel channelOf(srcEndpoint, dstEndpoint, J, C).
   * Returns false when the channel's queue is past its high-water mark (the
   * caller should back off); the frame is queued all the same.
   */
  send(dstProcess: number, header: FrameHeader, payload: Uint8Array | null, sentToken: number): boolean;
  /**
   * Optional: writes now the frames queued for this turn's flush (a transport that batches a turn's
   * frames). Called before a synchronous pause of the thread, a module's load at its first use
   * (util/first-use-load.ts), so that a peer does not wait for it; never throws.
   */
  flushPending?(): void;
  /**
   * Optional: opens this instance's connections to `peer` now rather than on the first send,
   * and resolves once they carry frames (or failed: then onPeerLost reports it). A user thread
   * with direct sends calls it at init, because a connection's handshake needs its thread's
   * event loop, which a thread that computes after a send does not run.
   */
  open?(peer: number): Promise<void>;
  /**
   * Optional: false while a frame sent now to `dstProcess` on `channel` would wait for this
   * instance to open the connection (none yet, or its handshake under way), which needs its
   * thread's event loop; true once frames go to the kernel at the turn's flush, and whenever
   * `send` would not queue them (closing, the peer lost). Absent: frames never wait so.
   */
  isOpen?(dstProcess: number, channel: number): boolean;
  /**
   * Optional (the lean send of docs/adr/0020-lean-common-path.md): queues an EAGER frame
   * (flags, seq, aux and aux2 zero) with `payload` copied, for `dstProcess` on `channel`, which
   * must be channelOf(srcEndpoint, dstEndpoint, J, C) and owned here, writing the header's
   * bytes in place instead of taking a FrameHeader. Returns false, having done nothing, when
   * the frame cannot go this way now (closing, the peer not alive, the channel not open yet):
   * the caller then uses `send`, which handles those cases.
   */
  queueEager?(dstProcess: number, channel: number, contextId: number, srcEndpoint: number, dstEndpoint: number, tag: number, payload: Uint8Array): boolean;
  /**
   * Optional: true once this instance accepts connections. An endpoint reader's name (listenName)
   * is bound inside listen() itself, while its promise resolves on a later turn: the device asks
   * right after listen() so that a reader announces its route within MPI.threadAttach (docs/adr/0019).
   */
  isListening?(): boolean;
  /** Per owned channel: frames sent and received so far. Index = channel number. */
  channelStats(): { sent: number; received: number }[];
  /**
   * Optional (mpiexec --dashboard's traffic matrix, read only when a sample asks): bytes written so
   * far on this instance's connections to each process (index = process), as the sockets count
   * them (handshakes included): nothing is counted per frame for it.
   */
  bytesToProcess?(): number[];
  /** Flushes what is queued, ends every connection gracefully and stops listening. */
  close(): Promise<void>;
  /** Drops everything at once. */
  destroy(err?: TransportError): void;
}

/** What a transport module exports (core loads it by name, see the `transport` setting). */
export type TransportFactory = (options: TransportOptions) => Transport;

/**
 * Optional export `readerSocketName` of a transport module that can carry endpoint readers
 * (docs/adr/0019): the same-host name (listenName) of the reader of endpoint `endpoint` of
 * process `process` in its `epoch`-th reading, computed alike by the reader and its senders.
 * A module without it gives no readers: every endpoint stays on the engine path.
 */
export type ReaderSocketName = (jobKey: string, process: number, endpoint: number, epoch: number) => string;
