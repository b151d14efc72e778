/**
 * Wires a socket to the connection that owns it (outbound ChannelConnection or
 * accepted InboundConnection): the settings every connection socket gets and
 * the four event handlers and the handshake deadline, plus the `onread` callback of sockets that read
 * into a reused buffer (read-buffer.ts). Handlers are module-level functions that reach
 * their connection through a symbol on the socket (STYLE rule 12: no closure
 * per connection or per message).
 *
 * The handshake deadline is a timer of our own, not socket.setTimeout: a socket that ever had
 * setTimeout keeps its (cleared) timer, and Node refreshes it on every read and every write
 * (_unrefTimer: refresh, unrefActive, insertGuarded), three calls per message for a timeout that
 * ended with the handshake. As a deadline it also holds against a peer that trickles bytes.
 */
import type net from 'node:net';

/** The socket events a connection handles. */
export interface SocketEventSink {
  _onData(chunk: Uint8Array): void;
  _onEnd(): void;
  _onError(err: Error): void;
  _onClose(): void;
  _onTimeout(): void;
}

const kSink = Symbol('tsmpi.socketSink');
const kHandshakeTimer = Symbol('tsmpi.handshakeTimer');
type SinkSocket = net.Socket & { [kSink]: SocketEventSink; [kHandshakeTimer]: NodeJS.Timeout | null };

/**
 * Unrefs the socket (the transport never holds the event loop; interface.ts),
 * turns off Nagle, turns on TCP keep-alive (a vanished host is found), arms the handshake deadline
 * (sink._onTimeout when it passes; endHandshakeTimeout disarms it) and routes every event to `sink`.
 */
export function wireSocket(socket: net.Socket, sink: SocketEventSink, handshakeTimeoutMs: number, keepAliveMs: number): void {
  (socket as SinkSocket)[kSink] = sink;
  socket.unref();
  socket.setNoDelay(true);
  socket.setKeepAlive(true, keepAliveMs);
  const timer = setTimeout(handshakeTimedOut, handshakeTimeoutMs, socket as SinkSocket);
  timer.unref();
  (socket as SinkSocket)[kHandshakeTimer] = timer;
  socket.on('data', socketOnData);
  socket.on('end', socketOnEnd);
  socket.on('error', socketOnError);
  socket.on('close', socketOnClose);
}

/** The handshake is over (done or refused): its deadline no longer applies. */
export function endHandshakeTimeout(socket: net.Socket): void {
  const timer = (socket as SinkSocket)[kHandshakeTimer];
  if (timer === null || timer === undefined) return;
  clearTimeout(timer);
  (socket as SinkSocket)[kHandshakeTimer] = null;
}

function socketOnData(this: SinkSocket, chunk: Buffer): void {
  this[kSink]._onData(chunk);
}
/** The `onread` callback of a socket reading into a reused buffer (read-buffer.ts): the same route as 'data'. */
export function socketOnRead(this: net.Socket, nread: number, buf: Uint8Array): void {
  (this as SinkSocket)[kSink]._onData(buf.subarray(0, nread));
}
function socketOnEnd(this: SinkSocket): void {
  this[kSink]._onEnd();
}
function socketOnError(this: SinkSocket, err: Error): void {
  this[kSink]._onError(err);
}
function socketOnClose(this: SinkSocket): void {
  endHandshakeTimeout(this);
  this[kSink]._onClose();
}
function handshakeTimedOut(socket: SinkSocket): void {
  socket[kHandshakeTimer] = null;
  socket[kSink]._onTimeout();
}
