/**
 * One accepted connection: the server side of the handshake (its decisions
 * are inbound-handshake.ts's pure state machine; this class performs them on
 * the socket), then the frame parser that delivers every frame of a chunk in
 * one loop.
 *
 * States
 *   HANDSHAKE  CHALLENGE sent, waiting for HELLO (timer armed). A bad HELLO,
 *              garbage, a timeout, a process index out of range or a channel
 *              this instance does not own: logged with log.warn and destroyed;
 *              the transport carries on.
 *   OPEN       frames flow in; a GOODBYE frame marks the peer as departing,
 *              so its end of stream is graceful. An end of stream without
 *              GOODBYE while we are not closing is a lost peer.
 *              A thread connection (the HELLO says so: a user thread of the
 *              peer sends on it directly) speaks for its thread only: its
 *              GOODBYE or its end says the thread is done, never that the
 *              process departed or was lost (the peer's other connections
 *              and the launcher report that).
 *   CLOSED     socket closed.
 *
 * The return direction carries the ACCEPT and, when this transport closes, a
 * GOODBYE frame before our end of stream.
 */
import type net from 'node:net';
import type { FrameHeader } from '@tsmpi/core/transport';
import type { ConnectionOwner } from './connection-owner.ts';
import { HEADER_BYTES, KIND_GOODBYE, encodeHeader } from './frame-codec.ts';
import { FrameParser, PARSE_STATUS, type EagerHook, type FrameSink } from './frame-parser.ts';
import { INBOUND_ACTION, InboundHandshake } from './inbound-handshake.ts';
import { withReadBuffer, type ReadTargetSource } from './read-buffer.ts';
import { MAX_PAYLOAD_BYTES } from './tuning.ts';
import { endHandshakeTimeout, wireSocket, type SocketEventSink } from './socket-events.ts';

const STATE_HANDSHAKE = 0;
const STATE_OPEN = 1;
const STATE_CLOSED = 2;


/** Shared, never modified: the socket may keep a reference until it is written. */
const GOODBYE = new Uint8Array(HEADER_BYTES);
encodeHeader(GOODBYE, 0, { kind: KIND_GOODBYE, flags: 0, contextId: 0, srcEndpoint: 0, dstEndpoint: 0, tag: 0, seq: 0, aux: 0, aux2: 0, payloadLength: 0 }, 0);

export class InboundConnection implements FrameSink, SocketEventSink, ReadTargetSource {
  readonly #owner: ConnectionOwner;
  readonly #socket: net.Socket;
  /** The listener that accepted this connection, for the log of a refusal (a Unix socket has no remote address). */
  readonly #listener: string;
  #state = STATE_HANDSHAKE;
  #handshake: InboundHandshake | null;
  #parser: FrameParser | null = null;
  #hasGoodbye = false;
  #isEnding = false;
  /** A user thread's own connection (handshake.ts THREAD_CONNECTION_BIT): its end is not the process's. */
  #isThread = false;
  /** the seq word of the last frame delivered (TransportHandlers.onThreadConnectionEnd), -1: none */
  #lastSeq = -1;
  /** The peer is a coupled job's process (docs/adr/0043): its frames' endpoints are renumbered (#renumber). */
  #isForeign = false;
  /** Peer process and channel, known once the handshake is done (-1 before). */
  process = -1;
  channel = -1;

  /**
   * @param accepted a socket from the transport's server (pauseOnConnect); it stays paused until resume()
   * @param readBuffer the transport's shared read buffer (read-buffer.ts)
   * @param listener the listener that accepted it (handshake.ts listenerBinding): the HELLO must be made for it
   */
  constructor(owner: ConnectionOwner, accepted: net.Socket, readBuffer: Uint8Array, listener: string) {
    this.#owner = owner;
    this.#listener = listener;
    const socket = withReadBuffer(accepted, readBuffer, this);
    this.#socket = socket;
    this.#handshake = new InboundHandshake((p) => owner._keyOf(p), { processCount: owner._processCount, listener, isChannelOwned: (c) => owner._isChannelOwned(c) });
    wireSocket(socket, this, owner._tuning.handshakeTimeoutMs, owner._tuning.keepAliveMs);
    socket.write(this.#handshake.start());
  }

  /** Starts reading; `onClosed` runs once the socket has closed. */
  resume(onClosed: () => void): void {
    this.#socket.once('close', onClosed);
    this.#socket.resume();
  }

  /** close(): say GOODBYE and end our side; keep reading until the peer ends its side. */
  beginClose(): void {
    if (this.#state === STATE_OPEN) {
      if (this.#isEnding) return;
      this.#isEnding = true;
      this.#socket.write(GOODBYE);
      this.#socket.end();
    } else if (this.#state === STATE_HANDSHAKE) {
      this.#socket.destroy();
    }
  }

  destroy(): void {
    this.#parser?.stop();
    this.#socket.destroy();
  }

  /**
   * The parser's eager hook when the handlers take plain eager frames as numbers (interface.ts
   * onEager), else null. A thread connection has none: its frames are decoded so that #lastSeq names its last one.
   */
  #eagerHook(owner: ConnectionOwner): EagerHook | null {
    const onEager = owner._handlers.onEager;
    if (onEager === undefined || this.#isThread) return null;
    const process = this.process;
    const received = owner._received;
    const channel = this.channel;
    if (this.#isForeign) {
      const J = owner._endpointsPerProcess;
      const me = owner._process;
      return (ctx, src, dst, tag, bytes, start, end) => {
        if (!onEager(process, ctx, process * J + (src % J), me * J + (dst % J), tag, bytes, start, end)) return false;
        received[channel]!++;
        return true;
      };
    }
    return (ctx, src, dst, tag, bytes, start, end) => {
      if (!onEager(process, ctx, src, dst, tag, bytes, start, end)) return false;
      received[channel]!++;
      return true;
    };
  }

  /**
   * A coupled job's frame names endpoints in its job's numbering. A process sends only as itself and only
   * to the process it dialled, so its source is this connection's peer and its destination this process:
   * the endpoint within each process (e mod J) is kept, the process part replaced. Idempotent.
   */
  #renumber(header: FrameHeader): void {
    const J = this.#owner._endpointsPerProcess;
    header.srcEndpoint = this.process * J + (header.srcEndpoint % J);
    header.dstEndpoint = this.#owner._process * J + (header.dstEndpoint % J);
  }

  // FrameSink
  frameArrived(header: FrameHeader, payload: Uint8Array): void {
    if (this.#isForeign) this.#renumber(header);
    if (header.kind === KIND_GOODBYE) {
      this.#hasGoodbye = true;
      if (!this.#isThread) this.#owner._peerDeparted(this.process);
      return;
    }
    const owner = this.#owner;
    owner._received[this.channel]!++;
    this.#lastSeq = header.seq;
    owner._handlers.onDeliver(this.process, header, payload);
  }

  frameTarget(header: FrameHeader): Uint8Array | null {
    const handlers = this.#owner._handlers;
    if (this.#isForeign) this.#renumber(header);
    return handlers.payloadTarget === undefined ? null : handlers.payloadTarget(this.process, header);
  }

  // ReadTargetSource: called after every read.
  nextReadTarget(): Uint8Array | null {
    return this.#parser === null ? null : this.#parser.unfilledTarget(this.#owner._tuning.targetMinBytes);
  }

  /** @internal socket 'data' (hot path) */
  _onData(chunk: Uint8Array): void {
    if (this.#state === STATE_OPEN) {
      const status = this.#parser!.feed(chunk);
      if (status !== PARSE_STATUS.OK) this.#protocolError(status);
      return;
    }
    if (this.#state !== STATE_HANDSHAKE || this.#handshake === null) return;
    const hs = this.#handshake.feed(chunk);
    if (hs.kind === INBOUND_ACTION.WAIT) return;
    if (hs.kind === INBOUND_ACTION.CLOSE) {
      this.#refuse(hs.reason);
      return;
    }
    const owner = this.#owner;
    this.#handshake = null;
    this.process = hs.process;
    this.channel = hs.channel;
    this.#isThread = hs.isThreadConnection;
    this.#isForeign = owner._isForeign(hs.process);
    // A thread's end is graceful by nature: the thread exits, its socket closes.
    if (this.#isThread) this.#hasGoodbye = true;
    this.#state = STATE_OPEN;
    endHandshakeTimeout(this.#socket);
    this.#socket.write(hs.reply);
    this.#parser = new FrameParser(this, owner._tuning.targetMinBytes, MAX_PAYLOAD_BYTES, owner._maxUnsolicitedBytes, this.#eagerHook(owner));
    if (owner._isClosing) {
      this.beginClose();
      return;
    }
    if (hs.rest.length > 0) this._onData(hs.rest);
  }

  /** @internal socket 'end' */
  _onEnd(): void {
    if (this.#state === STATE_OPEN && !this.#hasGoodbye && !this.#owner._isClosing) {
      this.#lose('TSMPI_ERR_PEER_CLOSED', 'peer ended the connection without saying goodbye');
    }
  }

  /** @internal socket 'error': 'close' follows and decides. */
  _onError(err: Error): void {
    if (this.#state === STATE_OPEN && !this.#hasGoodbye && !this.#owner._isClosing) {
      this.#lose('TSMPI_ERR_PEER_CLOSED', err.message, err);
    }
  }

  /** @internal socket 'timeout' (armed only while handshaking) */
  _onTimeout(): void {
    if (this.#state !== STATE_HANDSHAKE || this.#handshake === null) return;
    const action = this.#handshake.timeout();
    if (action.kind === INBOUND_ACTION.CLOSE) this.#refuse(action.reason);
  }

  /** @internal socket 'close' */
  _onClose(): void {
    if (this.#state === STATE_OPEN && !this.#hasGoodbye && !this.#owner._isClosing) {
      this.#lose('TSMPI_ERR_PEER_CLOSED', 'connection closed unexpectedly');
    }
    // 'close' follows every 'data': each frame this connection carried has been delivered.
    if (this.#state === STATE_OPEN && this.#isThread) this.#owner._handlers.onThreadConnectionEnd?.(this.process, this.#lastSeq);
    this.#state = STATE_CLOSED;
    this.#parser?.stop();
    this.#owner._socketClosed();
  }

  /** The peer sent a frame the parser refused: the stream cannot be trusted, so the peer is lost (the job fails). */
  #protocolError(status: number): void {
    if (status === PARSE_STATUS.TOO_LARGE) {
      this.#lose('TSMPI_ERR_PROTOCOL', 'frame header announces an impossible payload length');
      return;
    }
    const h = this.#parser!.header;
    this.#owner._log.warn({ peer: this.process, channel: this.channel, kind: h.kind, payloadLength: h.payloadLength, limit: this.#owner._maxUnsolicitedBytes }, 'refused an unsolicited frame larger than the eager limit');
    this.#lose('TSMPI_ERR_PROTOCOL', `a frame of kind ${h.kind} announces ${h.payloadLength} payload bytes that no receive asked for (at most ${this.#owner._maxUnsolicitedBytes} may come unasked: the eager limit; do all ranks use the same --eager-limit?)`);
  }

  #refuse(reason: string): void {
    const s = this.#socket;
    this.#owner._log.warn({ listener: this.#listener, remoteAddress: s.remoteAddress, remotePort: s.remotePort, reason }, 'refused a connection that failed the handshake');
    this.#state = STATE_CLOSED;
    this.#handshake = null;
    s.destroy();
  }

  #lose(code: string, message: string, cause?: unknown): void {
    const process = this.process;
    this.#state = STATE_CLOSED;
    this.#parser?.stop();
    this.#socket.destroy();
    this.#owner._peerLost(process, cause === undefined
      ? { code, message: `channel ${this.channel} from process ${process}: ${message}` }
      : { code, message: `channel ${this.channel} from process ${process}: ${message}`, cause });
  }
}
