/**
 * The name server (docs/adr/0046-name-server-between-jobs.md): one table of service names for the
 * jobs whose mpiexec runs with `--nameserver FILE` (name-table.ts), served over the link of
 * nameserver-link.ts. nameserver-main.ts is the command around it.
 *
 * Listening is wss:// with TLS keyed by the secret (util/job-tls.ts): a client without the secret fails
 * the TLS handshake before a byte of the protocol. Each connection is then under the wire-up service's
 * pre-authentication limits (pre-auth.ts: bytes, lifetime, connections waiting) until its hello proves
 * the secret (util/key-proof.ts, bound to the address in the file); the welcome proves it back. A
 * refusal (TLS, proof, malformed or oversized message, too slow) is logged with the remote address and
 * closed; the server and its other links go on. A proven link is one job's: the names it published
 * go when it closes.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { CLOSE_CODES, KeyChallenge, MAX_HELLO_BYTES, jobTlsServerOptions, type Logger } from '@tsmpi/core/pmi';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { NameTable } from './name-table.ts';
import { MAX_NAMESERVER_MESSAGE_BYTES, decodeNameserverMessage, nameserverBinding, type NameserverMessage } from './nameserver-link.ts';
import { LIFETIME_MS, PreAuthGate, remoteOf } from './pre-auth.ts';

/** Largest HTTP request head (a WebSocket upgrade is about 250 bytes). */
const MAX_HEADER_BYTES = 4096;
/** TCP keep-alive on proven links: a job whose host vanished loses its names after the kernel gives up. */
const KEEPALIVE_MS = 5_000;

export class NameServer {
  readonly #secret: string;
  readonly #log: Logger;
  readonly #gate: PreAuthGate;
  readonly #table = new NameTable();
  #http: Server | null = null;
  #wss: WebSocketServer | null = null;
  #nextLink = 1;
  /** The address the file names (the proofs bind it), set by start. */
  #advertised: { host: string; port: number } | null = null;

  /** @param secret - 64 hex digits, drawn by the caller and written to the file only */
  constructor(secret: string, log: Logger) {
    this.#secret = secret;
    this.#log = log;
    this.#gate = new PreAuthGate(log, 0, 'name server');
  }

  /** Names held now (tests, the log). */
  get nameCount(): number {
    return this.#table.size;
  }

  /**
   * Listens on `host`:`port` (0: a free port).
   * @param advertisedHost - the host the file names (what clients dial and the proofs bind); default `host`
   * @returns the port
   */
  async start(host: string, port: number, advertisedHost = host): Promise<number> {
    const gate = this.#gate;
    const http = createServer({ ...jobTlsServerOptions(this.#secret), maxHeaderSize: MAX_HEADER_BYTES, handshakeTimeout: LIFETIME_MS }, (req, res) => {
      gate.refuse(req.socket, 'not a WebSocket upgrade');
      res.destroy();
    });
    // Admitted once TLS is done: the socket the upgrade hands over is the TLS one.
    http.on('secureConnection', (socket: Socket) => gate.admit(socket));
    http.on('clientError', (err: Error, socket: Socket) => {
      const isTls = ((err as NodeJS.ErrnoException).code ?? '').startsWith('ERR_SSL') || (err as { library?: string }).library === 'SSL routines';
      gate.refuse(socket, isTls ? 'TLS handshake failed (the client does not hold the secret of this server\'s file)' : 'malformed HTTP request', { error: err.message.split('\n')[0] });
    });
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_NAMESERVER_MESSAGE_BYTES });
    http.on('upgrade', (req, socket: Socket, head: Buffer) => {
      if (!gate.isWaiting(socket)) {
        socket.destroy();
        return;
      }
      gate.countBytes(socket, head);
      wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws, socket));
    });
    wss.on('error', (err) => this.#log.error({ err }, 'name server error'));
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    this.#http = http;
    this.#wss = wss;
    const bound = (http.address() as AddressInfo).port;
    this.#advertised = { host: advertisedHost, port: bound };
    return bound;
  }

  /** Closes every link and the listener. */
  close(): Promise<void> {
    const http = this.#http;
    const wss = this.#wss;
    this.#http = null;
    this.#wss = null;
    if (http === null || wss === null) return Promise.resolve();
    for (const ws of wss.clients) ws.terminate();
    this.#gate.close();
    return new Promise((resolve) => wss.close(() => http.close(() => resolve())));
  }

  #onConnection(ws: WebSocket, socket: Socket): void {
    const remote = remoteOf(socket);
    const challenge = new KeyChallenge(this.#secret);
    let link = 0; // 0 until the hello proved the secret
    const refuse = (reason: string, code: number = CLOSE_CODES.protocol): void => {
      this.#gate.logRefusal(socket, remote, reason);
      ws.close(code, reason.slice(0, 100));
      setTimeout(() => ws.terminate(), 1000).unref();
    };
    ws.on('error', (err) => this.#log.debug({ err, remote }, 'name server link error'));
    ws.on('message', (data: RawData) => {
      const b = data as Buffer;
      if (link === 0 && b.length > MAX_HELLO_BYTES) {
        refuse(`message before the proof too large (${b.length} bytes)`);
        return;
      }
      const m = decodeNameserverMessage(b);
      if (m === null) {
        refuse('malformed message');
        return;
      }
      if (link === 0) {
        this.#hello(ws, socket, challenge, m, refuse, (id) => {
          link = id;
        });
        return;
      }
      if (m.t !== 'req' || typeof m.id !== 'number') {
        refuse('not a request');
        return;
      }
      const answer = m.op === 'publish' ? this.#table.publish(link, m.service, m.port)
        : m.op === 'lookup' ? this.#table.lookup(m.service)
        : m.op === 'unpublish' ? this.#table.unpublish(link, m.service, m.port)
        : { error: ['ERR_ARG', `unknown operation ${JSON.stringify(m.op)}`] as const };
      this.#log.debug({ link, op: m.op, ok: !('error' in answer) }, 'name server request');
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ t: 'ans', id: m.id, ...answer } satisfies NameserverMessage));
    });
    ws.on('close', () => {
      if (link === 0) return;
      const dropped = this.#table.dropLink(link);
      this.#log.info({ link, remote, dropped }, 'job left the name server; its names went with it');
    });
    ws.send(JSON.stringify({ t: 'challenge', nonce: challenge.nonce.toString('base64') } satisfies NameserverMessage));
  }

  #hello(ws: WebSocket, socket: Socket, challenge: KeyChallenge, m: NameserverMessage, refuse: (reason: string, code?: number) => void, proven: (link: number) => void): void {
    const where = this.#advertised;
    if (m.t !== 'hello' || typeof m.nonce !== 'string' || typeof m.proof !== 'string' || where === null) {
      refuse('no hello');
      return;
    }
    const back = challenge.answer(Buffer.from(m.nonce, 'base64'), nameserverBinding(where), Buffer.from(m.proof, 'base64'));
    if (back === null) {
      refuse('the hello does not prove the secret', CLOSE_CODES.badKey);
      return;
    }
    this.#gate.authenticated(socket);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    const id = this.#nextLink++;
    proven(id);
    this.#log.info({ link: id, remote: remoteOf(socket) }, 'job joined the name server');
    ws.send(JSON.stringify({ t: 'welcome', proof: back.toString('base64') } satisfies NameserverMessage));
  }
}
