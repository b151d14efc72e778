/**
 * The launcher's wire-up service (a small PMI; protocol in @tsmpi/core/pmi).
 *
 * A ws server on loopback (on every address, or the --iface address, when
 * the job spans hosts), on a random port or one of --port-range. Connections
 * on PROXY_PATH are per-host proxies' links, handed to the job (remote-host.ts). A connection becomes a rank's only
 * after a hello that carries the job key (compared in constant time) and a
 * free rank number; anything else is closed, logged at warn, and the job
 * goes on. State: the committed key/value store, the ranks that arrived at
 * the current fence with the pairs they put, and the members by rank.
 *
 * Fence: completes when all `size` ranks have arrived; the pairs put before
 * it are committed and sent back with fenceDone to everyone. A rank that dies
 * while others wait in a fence is the job's business (job.ts aborts it), not
 * this service's: it never times out a fence itself.
 *
 * Events go to the owner (job.ts) synchronously, before the reply (ack) is
 * sent, so a process that waits for the ack and then exits is always known
 * as finalized or aborting by the time its exit is seen.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import {
  CLOSE_CODES,
  PMI_PROTOCOL_VERSION,
  decodeClientMessage,
  encodeServerMessage,
  type BlockedIn,
  type ClientMessage,
  type FinalizeReport,
  type ServerMessage,
} from '@tsmpi/core/pmi';
import { listenInRange } from '@tsmpi/transport-tcp';
import { PROXY_PATH } from './proxy-protocol.ts';

/** What the job learns from the service. */
export interface WireupEvents {
  onJoined(rank: number, pid: number): void;
  onInitialized(rank: number): void;
  onFinalized(rank: number, report: FinalizeReport): void;
  onAbort(rank: number, code: number, message: string): void;
  /** `rank` lost its connection to process `process`: a failure of `rank` that follows is its consequence. */
  onPeerLost(rank: number, process: number): void;
  /** A connection on PROXY_PATH (proxy-protocol.ts): the job checks its hello. */
  onProxyLink?(ws: WebSocket, localAddress: string): void;
}

/** One rank's answer to a roll-call. */
export type RollCallAnswer =
  | { readonly kind: 'blocked'; readonly blockedIn: BlockedIn }
  | { readonly kind: 'notInMpi' }
  | { readonly kind: 'noAnswer' };

/** A connection that has not said hello in this time is closed. */
const HELLO_TIMEOUT_MS = 10_000;
/** TCP keep-alive probe start on every wire-up connection. */
const KEEPALIVE_MS = 5_000;
/** Largest message from a process (a fence carries the pairs it put). */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

interface Conn {
  readonly ws: WebSocket;
  readonly remote: string;
  rank: number;
  helloTimer: NodeJS.Timeout | null;
}

/** The service for one job. */
export class WireupServer {
  readonly #size: number;
  readonly #key: Buffer;
  readonly #log: Logger;
  readonly #events: WireupEvents;
  #wss: WebSocketServer | null = null;
  #http: Server | null = null;
  readonly #members = new Map<number, Conn>();
  readonly #committed = new Map<string, string>();
  #arrived = new Set<number>();
  #staged: (readonly [string, string])[] = [];
  #nextRollCallId = 1;
  readonly #rollCallWaiters = new Map<number, (rank: number, b: BlockedIn | null) => void>();

  constructor(size: number, jobKeyHex: string, log: Logger, events: WireupEvents) {
    this.#size = size;
    this.#key = Buffer.from(jobKeyHex, 'utf8');
    this.#log = log;
    this.#events = events;
  }

  /**
   * Starts listening on `host` (127.0.0.1 for a one-host job, a non-loopback
   * address or 0.0.0.0 when the job spans hosts), on any free port or on one
   * of `ports` (--port-range); resolves to the port.
   */
  async start(host = '127.0.0.1', ports: { readonly lo: number; readonly hi: number } | null = null): Promise<number> {
    const http = createServer();
    await listenInRange(http, host, ports ?? undefined);
    const wss = new WebSocketServer({ server: http, perMessageDeflate: false, maxPayload: MAX_PAYLOAD_BYTES });
    this.#wss = wss;
    this.#http = http;
    wss.on('error', (err) => this.#log.error({ err }, 'wire-up service error'));
    wss.on('connection', (ws, req) => this.#onConnection(ws, req));
    return (http.address() as AddressInfo).port;
  }

  /** Ranks currently connected. */
  get connectedRanks(): number[] {
    return [...this.#members.keys()];
  }

  /**
   * Asks every connected rank what it is blocked in.
   * @param timeoutMs - how long to wait for answers; ranks that stay silent are 'noAnswer'
   */
  rollCall(timeoutMs: number): Promise<Map<number, RollCallAnswer>> {
    const answers = new Map<number, RollCallAnswer>();
    for (let r = 0; r < this.#size; r++) answers.set(r, { kind: 'noAnswer' });
    const id = this.#nextRollCallId++;
    const expected = new Set(this.#members.keys());
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#rollCallWaiters.delete(id);
        resolve(answers);
      };
      const timer = setTimeout(finish, timeoutMs);
      this.#rollCallWaiters.set(id, (rank, b) => {
        if (!expected.has(rank)) return;
        expected.delete(rank);
        answers.set(rank, b === null ? { kind: 'notInMpi' } : { kind: 'blocked', blockedIn: b });
        if (expected.size === 0) finish();
      });
      if (expected.size === 0) {
        finish();
        return;
      }
      for (const c of this.#members.values()) this.#send(c, { t: 'rollCall', id });
    });
  }

  /** Closes every connection and the server. */
  close(): Promise<void> {
    const wss = this.#wss;
    const http = this.#http;
    this.#wss = null;
    this.#http = null;
    if (wss === null || http === null) return Promise.resolve();
    for (const ws of wss.clients) ws.terminate();
    return new Promise((resolve) => wss.close(() => http.close(() => resolve())));
  }

  #onConnection(ws: WebSocket, req: IncomingMessage): void {
    // A vanished host is found by the kernel too (remote ranks and proxies); mpiexec's heartbeats are faster.
    req.socket.setKeepAlive(true, KEEPALIVE_MS);
    if (req.url === PROXY_PATH) {
      if (this.#events.onProxyLink === undefined) ws.close(CLOSE_CODES.protocol, 'no proxies in this job');
      else this.#events.onProxyLink(ws, req.socket.localAddress ?? '');
      return;
    }
    const conn: Conn = { ws, remote: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`, rank: -1, helloTimer: null };
    conn.helloTimer = setTimeout(() => this.#refuse(conn, CLOSE_CODES.helloTimeout, 'no hello in time'), HELLO_TIMEOUT_MS);
    conn.helloTimer.unref();
    ws.on('message', (data: RawData) => this.#onMessage(conn, data as Buffer));
    ws.on('error', (err) => this.#log.debug({ err, remote: conn.remote }, 'wire-up connection error'));
    ws.on('close', () => {
      if (conn.helloTimer !== null) clearTimeout(conn.helloTimer);
      if (conn.rank >= 0 && this.#members.get(conn.rank) === conn) {
        this.#members.delete(conn.rank);
        this.#log.debug({ rank: conn.rank }, 'rank disconnected from the wire-up service');
      }
    });
  }

  #refuse(conn: Conn, code: number, reason: string, data: Record<string, unknown> = {}): void {
    this.#log.warn({ remote: conn.remote, reason, ...data }, 'wire-up connection refused');
    conn.ws.close(code, reason);
    // Do not wait for a peer that ignores the closing handshake.
    setTimeout(() => conn.ws.terminate(), 1000).unref();
  }

  #isKeyValid(key: string): boolean {
    const given = Buffer.from(key, 'utf8');
    return given.length === this.#key.length && timingSafeEqual(given, this.#key);
  }

  #send(conn: Conn, m: ServerMessage): void {
    if (conn.ws.readyState === WebSocket.OPEN) conn.ws.send(encodeServerMessage(m));
  }

  #onMessage(conn: Conn, data: Buffer): void {
    const m: ClientMessage | null = decodeClientMessage(data);
    if (m === null) {
      this.#refuse(conn, CLOSE_CODES.protocol, 'malformed message', { rank: conn.rank });
      return;
    }
    if (conn.rank < 0) {
      this.#onHello(conn, m);
      return;
    }
    switch (m.t) {
      case 'hello':
        this.#refuse(conn, CLOSE_CODES.protocol, 'second hello', { rank: conn.rank });
        return;
      case 'fence':
        this.#onFence(conn, m.puts);
        return;
      case 'get':
        this.#send(conn, { t: 'getReply', id: m.id, value: this.#committed.get(m.key) ?? null });
        return;
      case 'initialized':
        this.#events.onInitialized(conn.rank);
        return;
      case 'finalized':
        this.#events.onFinalized(conn.rank, m.report);
        this.#send(conn, { t: 'ack', id: m.id });
        return;
      case 'abort':
        this.#events.onAbort(conn.rank, m.code, m.message);
        this.#send(conn, { t: 'ack', id: m.id });
        return;
      case 'peerLost':
        this.#events.onPeerLost(conn.rank, m.process);
        this.#send(conn, { t: 'ack', id: m.id });
        return;
      case 'rollCallReply':
        this.#rollCallWaiters.get(m.id)?.(conn.rank, m.blockedIn);
        return;
    }
  }

  #onHello(conn: Conn, m: ClientMessage): void {
    if (m.t !== 'hello') {
      this.#refuse(conn, CLOSE_CODES.protocol, 'first message is not hello', { type: m.t });
      return;
    }
    if (!this.#isKeyValid(m.key)) {
      this.#refuse(conn, CLOSE_CODES.badKey, 'wrong job key', { rank: m.rank, clientPid: m.pid });
      return;
    }
    if (m.v !== PMI_PROTOCOL_VERSION) {
      this.#refuse(conn, CLOSE_CODES.protocol, 'protocol version mismatch', { version: m.v, expected: PMI_PROTOCOL_VERSION });
      return;
    }
    if (m.rank < 0 || m.rank >= this.#size || this.#members.has(m.rank)) {
      this.#refuse(conn, CLOSE_CODES.badRank, 'rank out of range or already connected', { rank: m.rank, clientPid: m.pid });
      return;
    }
    if (conn.helloTimer !== null) clearTimeout(conn.helloTimer);
    conn.helloTimer = null;
    conn.rank = m.rank;
    this.#members.set(m.rank, conn);
    this.#log.debug({ rank: m.rank, pid: m.pid }, 'rank joined the wire-up service');
    this.#send(conn, { t: 'welcome', size: this.#size });
    this.#events.onJoined(m.rank, m.pid);
  }

  #onFence(conn: Conn, puts: readonly (readonly [string, string])[]): void {
    if (this.#arrived.has(conn.rank)) {
      this.#refuse(conn, CLOSE_CODES.protocol, 'fence called twice', { rank: conn.rank });
      return;
    }
    this.#arrived.add(conn.rank);
    for (const p of puts) this.#staged.push(p);
    if (this.#arrived.size < this.#size) return;
    const kvs = this.#staged;
    for (const [k, v] of kvs) this.#committed.set(k, v);
    this.#arrived = new Set();
    this.#staged = [];
    this.#log.debug({ pairs: kvs.length }, 'fence completed');
    const done = encodeServerMessage({ t: 'fenceDone', kvs });
    for (const c of this.#members.values()) {
      if (c.ws.readyState === WebSocket.OPEN) c.ws.send(done);
    }
  }
}
