/**
 * What a connection to mpiexec's wire-up service may cost before it has
 * proved the job key: anyone who can reach the port (another user of the
 * machine, anyone on the network of a multi-host job) gets this far, so
 * everything here is bounded and nothing is decoded.
 *
 *   - at most MAX_WAITING connections (or the job's size and some, for a
 *     job whose ranks could all arrive at once) wait for authentication; one
 *     more closes the oldest waiting one (an idle attacker cannot hold the
 *     door shut for long, and a real rank or proxy authenticates in
 *     milliseconds);
 *   - each has LIFETIME_MS from its TCP accept to a proved hello;
 *   - after the WebSocket upgrade it may send at most MAX_BYTES raw bytes
 *     (the hello of a rank or proxy is about 200): counted on the socket
 *     itself, before ws buffers a frame, so a 16 MiB message costs one socket
 *     read, not 16 MiB (the HTTP request before it is bounded by the
 *     server's maxHeaderSize and the same lifetime).
 * A refused connection is logged with the remote address and port: at warn
 * the first time for each remote address (up to REMEMBERED_ADDRESSES of
 * them), at debug afterwards, so a flood cannot flood mpiexec's stderr.
 */
import type { Socket } from 'node:net';
import type { Logger } from '@tsmpi/core/pmi';

/** Connections that may wait for authentication at once. */
export const MAX_WAITING = 256;
/** Time from TCP accept to an accepted hello. */
export const LIFETIME_MS = 5_000;
/** Raw bytes after the upgrade before an accepted hello (framing included): the hello bound (1 KiB) with room for framing. */
export const MAX_BYTES = 2048;
/** Remote addresses whose first refusal was logged at warn. */
const REMEMBERED_ADDRESSES = 1024;

interface Waiting {
  readonly socket: Socket;
  readonly remote: string;
  readonly timer: NodeJS.Timeout;
  bytes: number;
  onData: ((chunk: Buffer) => void) | null;
}

/** "address:port" of a socket's peer, as the log shows it. */
export function remoteOf(socket: Socket): string {
  const a = (socket.remoteAddress ?? '?').replace(/^::ffff:/, '');
  return `${a.includes(':') ? `[${a}]` : a}:${socket.remotePort ?? '?'}`;
}

/** The unauthenticated connections of one wire-up service. */
export class PreAuthGate {
  readonly #log: Logger;
  /** In accept order: the first is the oldest. */
  readonly #waiting = new Map<Socket, Waiting>();
  readonly #warned = new Set<string>();
  readonly #maxWaiting: number;
  /** What the log calls the connections: the wire-up service's, or the name server's (nameserver.ts). */
  readonly #refusedText: string;
  readonly #refusedAgainText: string;

  /**
   * @param expected - connections the job itself makes at once (its ranks and proxies): the bound is never below it
   * @param service - the service the log names ('wire-up'; 'name server' for tsmpi-nameserver)
   */
  constructor(log: Logger, expected = 0, service = 'wire-up') {
    this.#log = log;
    this.#maxWaiting = Math.max(MAX_WAITING, expected + 64);
    this.#refusedText = `${service} connection refused (later refusals from this address are logged at debug)`;
    this.#refusedAgainText = `${service} connection refused`;
  }

  /** Connections waiting for authentication now. */
  get waitingCount(): number {
    return this.#waiting.size;
  }

  /** A TCP connection was accepted: it waits for authentication from now on. */
  admit(socket: Socket): void {
    if (this.#waiting.size >= this.#maxWaiting) {
      const oldest = this.#waiting.values().next().value as Waiting;
      this.refuse(oldest.socket, 'too many connections waiting for authentication; closed the oldest');
    }
    const w: Waiting = {
      socket, remote: remoteOf(socket), bytes: 0, onData: null,
      timer: setTimeout(() => this.refuse(socket, `no accepted hello within ${LIFETIME_MS / 1000} s`), LIFETIME_MS),
    };
    w.timer.unref();
    this.#waiting.set(socket, w);
    socket.once('close', () => this.#forget(socket));
  }

  /** True while `socket` waits for authentication (false once it authenticated or was refused). */
  isWaiting(socket: Socket): boolean {
    return this.#waiting.has(socket);
  }

  /**
   * The connection was upgraded to a WebSocket: from now on its raw bytes are
   * counted (`head` first). Call before ws takes the socket, so this listener
   * sees each chunk before ws buffers it.
   */
  countBytes(socket: Socket, head: Buffer): void {
    const w = this.#waiting.get(socket);
    if (w === undefined) return;
    const add = (n: number): void => {
      w.bytes += n;
      if (w.bytes > MAX_BYTES) this.refuse(socket, `more than ${MAX_BYTES} bytes before an accepted hello`);
    };
    w.onData = (chunk: Buffer) => add(chunk.length);
    socket.prependListener('data', w.onData);
    add(head.length);
  }

  /** The connection proved the job key: no limit of this gate applies to it any more. */
  authenticated(socket: Socket): void {
    this.#forget(socket);
  }

  /** Logs the refusal with the remote address and closes the connection at once (no closing handshake). */
  refuse(socket: Socket, reason: string, data: Record<string, unknown> = {}): void {
    const remote = this.#waiting.get(socket)?.remote ?? remoteOf(socket);
    this.#forget(socket);
    this.logRefusal(socket, remote, reason, data);
    socket.destroy();
  }

  /** Logs a refused connection: at warn the first time for its remote address, else at debug. */
  logRefusal(socket: Socket, remote: string, reason: string, data: Record<string, unknown> = {}): void {
    const address = (socket.remoteAddress ?? '?').replace(/^::ffff:/, '');
    const isFirst = !this.#warned.has(address) && this.#warned.size < REMEMBERED_ADDRESSES;
    if (isFirst) this.#warned.add(address);
    const fields = { remote, reason, ...data };
    if (isFirst) this.#log.warn(fields, this.#refusedText);
    else this.#log.debug(fields, this.#refusedAgainText);
  }

  /** Closes every waiting connection (the service is closing). */
  close(): void {
    for (const w of [...this.#waiting.values()]) {
      this.#forget(w.socket);
      w.socket.destroy();
    }
  }

  #forget(socket: Socket): void {
    const w = this.#waiting.get(socket);
    if (w === undefined) return;
    this.#waiting.delete(socket);
    clearTimeout(w.timer);
    if (w.onData !== null) socket.off('data', w.onData);
  }
}
