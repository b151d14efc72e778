/**
 * Wires a socket to the connection that owns it (outbound ChannelConnection or
 * accepted InboundConnection): the settings every connection socket gets and
 * the five event handlers, plus the `onread` callback of sockets that read
 * into a reused buffer (read-buffer.ts). Handlers are module-level functions that reach
 * their connection through a symbol on the socket (STYLE rule 12: no closure
 * per connection or per message).
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
type SinkSocket = net.Socket & { [kSink]: SocketEventSink };

/**
 * Unrefs the socket (the transport never holds the event loop; interface.ts),
 * turns off Nagle, turns on TCP keep-alive (a vanished host is found), arms the handshake timeout and routes every event to `sink`.
 */
export function wireSocket(socket: net.Socket, sink: SocketEventSink, handshakeTimeoutMs: number, keepAliveMs: number): void {
  (socket as SinkSocket)[kSink] = sink;
  socket.unref();
  socket.setNoDelay(true);
  socket.setKeepAlive(true, keepAliveMs);
  socket.setTimeout(handshakeTimeoutMs);
  socket.on('data', socketOnData);
  socket.on('end', socketOnEnd);
  socket.on('error', socketOnError);
  socket.on('close', socketOnClose);
  socket.on('timeout', socketOnTimeout);
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
  this[kSink]._onClose();
}
function socketOnTimeout(this: SinkSocket): void {
  this[kSink]._onTimeout();
}
