/**
 * The socket a directly launched process shares with its launcher's PMI server
 * (Hydra's proxy, Slurm's slurmstepd): an inherited descriptor (PMI_FD) or a
 * TCP connection (PMI_PORT). Requests go one at a time; each reply settles the
 * oldest request, because neither PMI-1 nor PMI-2 tags replies and both
 * servers answer in order. Framing is the caller's (pmi1-wire.ts or
 * pmi2-wire.ts), handed in as `split` and `parse`.
 *
 * Event loop: the socket is referenced only while a request is outstanding, so
 * an idle connection never keeps a finished program alive (as pmi/client.ts).
 * When the server goes away (the launcher ended the job), pending requests
 * reject with MPIError(ERR_OTHER) and the lost handler runs.
 */
import net from 'node:net';
import { ERR_OTHER, mpiError } from '../util/index.ts';

/** A parsed command or reply: its cmd and its other fields. */
export interface PmiReply {
  readonly cmd: string;
  readonly fields: ReadonlyMap<string, string>;
}

/** How a PMI server's byte stream becomes replies. */
export interface PmiFraming {
  /** Complete frames in what arrived (keeps the rest); throws on a malformed stream. */
  split(chunk: Buffer): string[];
  /** One frame parsed; null when malformed. */
  parse(frame: string): PmiReply | null;
}

interface Waiter {
  readonly call: string;
  readonly expect: string;
  readonly resolve: (reply: PmiReply) => void;
  readonly reject: (err: Error) => void;
}

/** Where the PMI server is: an inherited descriptor, or host:port. */
export type PmiEndpoint = { readonly fd: number } | { readonly host: string; readonly port: number };

/** Connect timeout for PMI_PORT. */
const CONNECT_TIMEOUT_MS = 10_000;

export class PmiConnection {
  readonly #socket: net.Socket;
  readonly #framing: PmiFraming;
  readonly #waiters: Waiter[] = [];
  #isClosed = false;
  #isClosing = false;
  #lost: ((err: Error) => void) | null = null;

  private constructor(socket: net.Socket, framing: PmiFraming) {
    this.#socket = socket;
    this.#framing = framing;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#onGone(err.message));
    socket.on('close', () => this.#onGone('the PMI server closed the connection'));
    socket.unref();
  }

  /**
   * Opens the connection.
   * @throws MPIError(ERR_OTHER) when the descriptor is not a socket or the port cannot be reached
   */
  static async open(endpoint: PmiEndpoint, framing: PmiFraming): Promise<PmiConnection> {
    if ('fd' in endpoint) {
      let socket: net.Socket;
      try {
        socket = new net.Socket({ fd: endpoint.fd, readable: true, writable: true });
      } catch (e) {
        // A wrapper between the launcher and node (npx, tsx's CLI) may not pass the descriptor on.
        throw mpiError(ERR_OTHER, 'init', `PMI_FD=${endpoint.fd} is not a socket open in this process (${(e as Error).message}): start node itself under the launcher (TypeScript: node --import tsx app.ts, not npx tsx)`);
      }
      return new PmiConnection(socket, framing);
    }
    const socket = net.connect({ host: endpoint.host, port: endpoint.port });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(mpiError(ERR_OTHER, 'init', `cannot reach the PMI server at PMI_PORT=${endpoint.host}:${endpoint.port}: ${err.message}`));
      });
    });
    socket.setNoDelay(true);
    return new PmiConnection(socket, framing);
  }

  /** Runs when the server goes away outside close(). */
  setLostHandler(handler: (err: Error) => void): void {
    this.#lost = handler;
  }

  /**
   * Sends `frame` and resolves with the next reply, which must be `expect`.
   * @throws MPIError(ERR_OTHER) when the connection is gone or the reply is another command
   */
  request(call: string, frame: string | Buffer, expect: string): Promise<PmiReply> {
    if (this.#isClosed || this.#isClosing) return Promise.reject(mpiError(ERR_OTHER, call, 'the PMI connection is closed'));
    return new Promise<PmiReply>((resolve, reject) => {
      this.#waiters.push({ call, expect, resolve, reject });
      if (this.#waiters.length === 1) this.#socket.ref();
      this.#socket.write(frame);
    });
  }

  /** Waits for one more reply `expect` that the last request brings (PMI-1's initack is followed by three `set` lines). */
  expect(call: string, expect: string): Promise<PmiReply> {
    if (this.#isClosed || this.#isClosing) return Promise.reject(mpiError(ERR_OTHER, call, 'the PMI connection is closed'));
    return new Promise<PmiReply>((resolve, reject) => {
      this.#waiters.push({ call, expect, resolve, reject });
      if (this.#waiters.length === 1) this.#socket.ref();
    });
  }

  /** Sends `frame` expecting no reply (abort); resolves once written. */
  send(frame: string | Buffer): Promise<void> {
    if (this.#isClosed) return Promise.resolve();
    return new Promise<void>((resolve) => this.#socket.write(frame, () => resolve()));
  }

  /**
   * Closes the connection; later requests reject. Everything sent has been answered by then
   * (finalize's ack), so the socket is dropped at once: waiting for the server's end of a
   * half-closed socket (Hydra's PMI_PORT keeps it open) would leave the program waiting on
   * nothing that keeps its event loop alive.
   */
  close(): Promise<void> {
    if (this.#isClosed) return Promise.resolve();
    this.#isClosing = true;
    return new Promise<void>((resolve) => {
      this.#socket.once('close', () => resolve());
      this.#socket.ref(); // until 'close' (next turn)
      this.#socket.destroy();
    });
  }

  #onData(chunk: Buffer): void {
    let frames: string[];
    try {
      frames = this.#framing.split(chunk);
    } catch (e) {
      this.#socket.destroy();
      this.#onGone(`malformed data from the PMI server: ${(e as Error).message}`);
      return;
    }
    for (const frame of frames) {
      const reply = this.#framing.parse(frame);
      const waiter = this.#waiters.shift();
      if (waiter === undefined) continue; // nothing asked: PMI servers do not speak first
      if (this.#waiters.length === 0) this.#socket.unref();
      if (reply === null) waiter.reject(mpiError(ERR_OTHER, waiter.call, `malformed reply from the PMI server: ${JSON.stringify(frame.slice(0, 200))}`));
      else if (reply.cmd !== waiter.expect) waiter.reject(mpiError(ERR_OTHER, waiter.call, `the PMI server answered ${reply.cmd}, expected ${waiter.expect}${describeRc(reply)}`));
      else waiter.resolve(reply);
    }
  }

  #onGone(why: string): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    const waiters = this.#waiters.splice(0);
    for (const w of waiters) w.reject(mpiError(ERR_OTHER, w.call, `lost the PMI server: ${why}`));
    if (!this.#isClosing) this.#lost?.(mpiError(ERR_OTHER, 'pmi', `lost the PMI server (the launcher ended the job?): ${why}`));
  }
}

function describeRc(reply: PmiReply): string {
  const msg = reply.fields.get('msg') ?? reply.fields.get('errmsg');
  return msg === undefined ? '' : ` (${msg})`;
}

/**
 * The reply's rc field as a check.
 * @throws MPIError(ERR_OTHER) naming `call` when rc is present and not 0
 */
export function checkRc(call: string, reply: PmiReply): PmiReply {
  const rc = reply.fields.get('rc');
  if (rc !== undefined && rc !== '0') throw mpiError(ERR_OTHER, call, `the PMI server answered rc=${rc}${describeRc(reply)}`);
  return reply;
}
