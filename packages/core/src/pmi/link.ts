/**
 * One rank's link to the wire-up service over a plain socket (net.Socket, or
 * tls.TLSSocket under mpiexec --secure): link-frames.ts's frames both ways,
 * with a WebSocket's closing behaviour, on both sides (core's client.ts and
 * the launcher's wireup-server.ts), so a rank loads no WebSocket library
 * (issue 38).
 *
 * Callers: the owner of the socket, on the thread that owns it. It hands the
 * link a connected socket; the link reads and writes it from then on.
 * Events go to a LinkHandler: onMessage per message, onError for a failure
 * (a socket error, a frame the reader refused, a response that is not the
 * service's), then exactly one onClose(code, reason). The code is the one
 * the peer's close frame carried (or this side's, when it closed first), or
 * CLOSE_ABNORMAL when the connection ended without a close frame (as a
 * WebSocket's 1006).
 *
 * Closing: close(code, reason) sends a close frame and ends this side; the
 * peer answers with its own close frame and ends too. The link does not time
 * the peer out: owners that must not wait call terminate() after their own
 * timeout, as they did with ws.
 */
import type { Socket } from 'node:net';
import { FrameReader, MAX_RESPONSE_HEAD_BYTES, encodeCloseFrame, encodeMessageFrame, linkResponseError, type FrameSink } from './link-frames.ts';

/** A connection that ended without a close frame (as a WebSocket's 1006). */
export const CLOSE_ABNORMAL = 1006;
/** The reader refused a frame: the close code sent to the peer (a WebSocket's 1002, protocol error). */
const CLOSE_FRAME_ERROR = 1002;

/** The process side's link was refused at its opening (the service's response head: link-frames.ts linkResponseError). */
export class LinkOpeningError extends Error {}

export interface LinkHandler {
  onMessage(body: Buffer): void;
  onError(err: Error): void;
  onClose(code: number, reason: string): void;
}

/** A framed link over one socket. */
export class FramedLink implements FrameSink {
  readonly socket: Socket;
  readonly #reader: FrameReader;
  readonly #handler: LinkHandler;
  /** The process side waits for the service's 101 before the frames: the bytes of its head so far. */
  #responseHead: Buffer | null;
  #hasSentClose = false;
  #closeCode: number | null = null;
  #closeReason = '';
  #isClosed = false;

  /**
   * @param socket - connected (and, under TLS, secured); the process side has sent LINK_REQUEST on it
   * @param maxBodyBytes - largest message accepted (the reader's limit; see maxBodyBytes)
   * @param options.awaitResponse - the process side: read the service's LINK_RESPONSE before any frame
   */
  constructor(socket: Socket, maxBodyBytes: number, handler: LinkHandler, options: { readonly awaitResponse?: boolean } = {}) {
    this.socket = socket;
    this.#reader = new FrameReader(maxBodyBytes);
    this.#handler = handler;
    this.#responseHead = options.awaitResponse === true ? Buffer.alloc(0) : null;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err: Error) => this.#handler.onError(err));
    // The peer ended its side: end ours (a server's sockets may allow half-open connections).
    socket.on('end', () => this.socket.end());
    socket.on('close', () => this.#onSocketClose());
  }

  /**
   * Reads bytes that came off the socket before the link took it (the service side's upgrade
   * head). Called by the owner once it is ready for the handler's calls (they may come at once).
   */
  receive(bytes: Buffer): void {
    if (bytes.length > 0) this.#onData(bytes);
  }

  /** Largest message body accepted from now on (the service raises it once the process proved the job key). */
  set maxBodyBytes(n: number) {
    this.#reader.maxBodyBytes = n;
  }

  /** True until either side started closing. */
  get isOpen(): boolean {
    return !this.#hasSentClose && this.#closeCode === null && !this.#isClosed && !this.socket.destroyed;
  }

  /** Sends one message (encoded by protocol.ts); nothing once the link is closing. */
  send(body: Uint8Array): void {
    if (this.isOpen) this.socket.write(encodeMessageFrame(body));
  }

  /** Sends a close frame with `code` and `reason` and ends this side; the peer's answer ends the link. */
  close(code: number, reason = ''): void {
    if (this.#isClosed || this.#hasSentClose) return;
    this.#hasSentClose = true;
    this.#closeCode ??= code;
    if (this.#closeCode === code) this.#closeReason = reason;
    if (this.socket.destroyed) return;
    this.socket.end(encodeCloseFrame(code, reason));
  }

  /** Drops the connection at once. */
  terminate(): void {
    this.socket.destroy();
  }

  // FrameSink: the reader's frames.
  onMessage(body: Buffer): void {
    if (!this.#isClosed) this.#handler.onMessage(body);
  }

  onClose(code: number, reason: string): void {
    // The peer closed first: keep its code and reason, and answer (a WebSocket echoes the code).
    if (this.#closeCode === null) {
      this.#closeCode = code;
      this.#closeReason = reason;
    }
    this.close(code, reason);
  }

  #onData(chunk: Buffer): void {
    if (this.#responseHead !== null) {
      const head = Buffer.concat([this.#responseHead, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_RESPONSE_HEAD_BYTES) this.#fail(new LinkOpeningError('the wire-up service sent no response head within its bound'));
        else this.#responseHead = head;
        return;
      }
      this.#responseHead = null;
      const refused = linkResponseError(head.subarray(0, end).toString('latin1'));
      if (refused !== null) {
        this.#fail(new LinkOpeningError(refused));
        return;
      }
      chunk = head.subarray(end + 4);
      if (chunk.length === 0) return;
    }
    if (!this.#reader.push(chunk, this) && this.#reader.error !== null && !this.#hasSentClose) {
      this.#handler.onError(new Error(`malformed frame from the peer: ${this.#reader.error}`));
      this.close(CLOSE_FRAME_ERROR, 'malformed frame');
    }
  }

  /** A failure before any frame: reported, then the connection dropped. */
  #fail(err: LinkOpeningError): void {
    this.#reader.stop(err.message);
    this.#handler.onError(err);
    this.socket.destroy();
  }

  #onSocketClose(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    // Neither side sent a close frame: the connection ended abnormally.
    const code = this.#closeCode ?? CLOSE_ABNORMAL;
    this.#handler.onClose(code, code === CLOSE_ABNORMAL ? '' : this.#closeReason);
  }
}
