/**
 * mpiexec --dashboard's HTTP and WebSocket server: serves the one page
 * (dashboard-page.ts) at `/`, the live snapshots on the WebSocket at `/ws`
 * and a rank's output tail as JSON at `/tail?rank=N` (dashboard-output.ts), all only to requests that carry the job's token
 * (dashboard-token.ts); anything without it gets 403, any other path 404,
 * any other method 405. Bound to 127.0.0.1 unless --dashboard-host says
 * otherwise.
 *
 * Hardening besides the token: no cookie is ever set; the page is sent with
 * no-store, no-referrer (the URL holds the token) and a content security
 * policy that allows only its own inline script and style and a connection
 * back to this server; an upgrade whose Origin is not this server's is
 * refused (another site in the user's browser cannot use a token it
 * somehow learned through a WebSocket of its own); viewers are few and send
 * nothing (any message closes them).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import type { TailLine } from './dashboard-output.ts';
import { DASHBOARD_PAGE } from './dashboard-page.ts';
import { tokenMatches, tokenOfUrl } from './dashboard-token.ts';

/** Browsers (tabs) watching at once. */
export const MAX_VIEWERS = 16;
/** Open connections at once (viewers, page loads, and whatever else knocks). */
const MAX_CONNECTIONS = 64;
/** Largest request head. */
const MAX_HEADER_BYTES = 8192;
/** A viewer whose unsent snapshots exceed this is too slow: it misses snapshots until it catches up. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
} as const;

function pathOf(url: string | undefined): string {
  const q = (url ?? '').indexOf('?');
  return q < 0 ? url ?? '' : (url ?? '').slice(0, q);
}

function refuse(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
  res.end(`${text}\n`);
}

/** The Origin of a browser's upgrade, when it is not this server (the Host it asked for). */
function isForeignOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false; // not a browser (a test client, curl)
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return true;
  }
  return host !== req.headers.host;
}

export class DashboardServer {
  readonly #token: string;
  readonly #log: Logger;
  readonly #tail: ((rank: number) => readonly TailLine[]) | null;
  #http: Server | null = null;
  #wss: WebSocketServer | null = null;
  readonly #viewers = new Set<WebSocket>();
  #last: string | null = null;

  /**
   * @param token - the job's dashboard token (dashboard-token.ts)
   * @param tail - a rank's output tail for `/tail` (null: that path is 404)
   */
  constructor(token: string, log: Logger, tail: ((rank: number) => readonly TailLine[]) | null = null) {
    this.#token = token;
    this.#log = log;
    this.#tail = tail;
  }

  /** Viewers connected now (the sampler samples only while there is one). */
  get viewers(): number {
    return this.#viewers.size;
  }

  /** Listens on host:port (0: a free port); resolves to the port. */
  async start(host: string, port: number): Promise<number> {
    const http = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => this.#onRequest(req, res));
    http.maxConnections = MAX_CONNECTIONS;
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1024 });
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.#onUpgrade(wss, req, socket, head));
    http.on('clientError', (_err, socket: Socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(port, host, () => {
        http.off('error', reject);
        resolve();
      });
    });
    this.#http = http;
    this.#wss = wss;
    return (http.address() as AddressInfo).port;
  }

  /** Sends a snapshot to every viewer; a viewer that connects later gets the last one at once. */
  broadcast(text: string): void {
    this.#last = text;
    for (const ws of this.#viewers) if (ws.readyState === WebSocket.OPEN && ws.bufferedAmount < MAX_BUFFERED_BYTES) ws.send(text);
  }

  /** Closes every viewer and the server. */
  close(): Promise<void> {
    const http = this.#http;
    this.#http = null;
    if (http === null) return Promise.resolve();
    for (const ws of this.#viewers) ws.terminate();
    this.#viewers.clear();
    this.#wss?.close();
    http.closeAllConnections();
    return new Promise((resolve) => http.close(() => resolve()));
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (!tokenMatches(this.#token, tokenOfUrl(req.url))) {
      this.#log.debug({ remote: req.socket.remoteAddress, path: pathOf(req.url) }, 'dashboard request without the token refused');
      refuse(res, 403, 'Forbidden: this dashboard needs the token of the URL mpiexec printed');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, 405, 'Method not allowed');
      return;
    }
    if (pathOf(req.url) === '/tail' && this.#tail !== null) {
      const rank = new URL(req.url ?? '', 'http://x').searchParams.get('rank') ?? '';
      if (!/^\d{1,9}$/.test(rank)) {
        refuse(res, 400, `Bad request: rank=${rank.slice(0, 20)}: expected a rank number`);
        return;
      }
      res.writeHead(200, { ...PAGE_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ rank: Number(rank), lines: this.#tail(Number(rank)) }));
      return;
    }
    if (pathOf(req.url) !== '/') {
      refuse(res, 404, 'Not found');
      return;
    }
    res.writeHead(200, PAGE_HEADERS);
    res.end(req.method === 'HEAD' ? undefined : DASHBOARD_PAGE);
  }

  #onUpgrade(wss: WebSocketServer, req: IncomingMessage, socket: Socket, head: Buffer): void {
    const deny = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroySoon();
    };
    if (!tokenMatches(this.#token, tokenOfUrl(req.url))) return deny(403, 'Forbidden');
    if (pathOf(req.url) !== '/ws') return deny(404, 'Not Found');
    if (isForeignOrigin(req)) return deny(403, 'Forbidden');
    if (this.#viewers.size >= MAX_VIEWERS) return deny(503, 'Service Unavailable');
    wss.handleUpgrade(req, socket, head, (ws) => {
      this.#viewers.add(ws);
      ws.on('close', () => this.#viewers.delete(ws));
      ws.on('error', () => this.#viewers.delete(ws));
      // Viewers only watch.
      ws.on('message', () => ws.close(1008, 'viewers send nothing'));
      if (this.#last !== null) ws.send(this.#last);
    });
  }
}
