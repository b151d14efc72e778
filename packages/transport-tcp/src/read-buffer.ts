/**
 * Accepted sockets that read into one reused buffer, the way `net.connect`'s
 * `onread` option makes a socket read.
 *
 * Why: by default Node reads a socket into a fresh 64 KiB Buffer per read.
 * Each is an ArrayBuffer backed outside the V8 heap, and at 12 MiB received
 * per 8 MiB allreduce call that external memory made V8 run a full
 * mark-compact every two or three calls (--trace-gc: "external memory
 * pressure"); a system-wide perf profile put a quarter of all CPU in V8's
 * marking and sweeping. The transport's consumers copy what they keep during
 * the call (transport/interface.ts: onDeliver's payload is valid only during
 * the call), so one buffer per transport serves every socket.
 *
 * A large payload that spans reads goes further: once its frame header has
 * arrived, the rest is read straight into the payload's target (the receive
 * buffer of a rendezvous message), so those bytes are never copied in user
 * space.
 *
 * How: Node takes `onread` only when it creates a Socket around a handle,
 * which a server's 'connection' does without it. The server therefore pauses
 * new connections (pauseOnConnect), and the paused socket's handle moves into
 * a Socket built with `onread`. `_handle` is not public API: when it is
 * missing, the accepted socket is used as it is (reads allocate, as before);
 * so is a TLS socket (mpiexec --secure), which reads through OpenSSL.
 */
import net from 'node:net';
import { socketOnRead } from './socket-events.ts';

interface HandleOwner {
  _handle: object | null;
}

/** Chooses the memory of a socket's next read. */
export interface ReadTargetSource {
  /** The unfilled rest of a large payload the connection is assembling, or null. */
  nextReadTarget(): Uint8Array | null;
}

/**
 * Returns a socket on `accepted`'s connection whose reads go into `source`'s target when it
 * has one (straight into the receive buffer), else into `buffer`; reads reach the sink that
 * wireSocket gives it. Without a handle to move, `accepted` itself. Either way the socket is
 * paused until the caller resume()s it, after wiring it. `accepted` must come from a server
 * created with pauseOnConnect.
 */
export function withReadBuffer(accepted: net.Socket, buffer: Uint8Array, source: ReadTargetSource): net.Socket {
  // A TLS socket (job-tls-socket.ts) reads through OpenSSL, whose handle is not the TCP one: as it is.
  if ((accepted as { encrypted?: boolean }).encrypted === true) return accepted;
  const owner = accepted as unknown as HandleOwner;
  const handle = owner._handle;
  if (handle === null || typeof handle !== 'object') return accepted;
  // Node calls the buffer function after every read, with no receiver: hence one closure per connection.
  const nextBuffer = (): Uint8Array => source.nextReadTarget() ?? buffer;
  const socket = new net.Socket({
    handle, readable: true, writable: true, pauseOnCreate: true, onread: { buffer: nextBuffer, callback: socketOnRead },
  } as net.SocketConstructorOpts);
  // The accepted wrapper gives the handle up; destroying it now only settles the server's connection count.
  owner._handle = null;
  accepted.destroy();
  return socket;
}
