/**
 * The launcher's wire-up service (a small PMI; protocol in @tsmpi/core/pmi).
 *
 * An HTTP server on loopback (on every address, or the --iface address, when
 * the job spans hosts), on a random port or one of --port-range, that serves
 * only upgrades. A process (rank) upgrades to a framed link (core's
 * pmi/link-frames.ts and link.ts: no WebSocket library in a rank, issue 38).
 * WebSocket upgrades on PROXY_PATH are per-host proxies' links, handed to the
 * job (remote-host.ts); those on PORT_PATH another job's mpiexec connecting at
 * a port (port-link.ts), handed to the job's dynamic service; a WebSocket on
 * any other path is refused.
 * Every rank's link gets a challenge first; one becomes a rank's only after a
 * hello that proves the job key (util/key-proof.ts: the key never travels)
 * and names a free rank, and the welcome proves the key back. Until then the
 * limits of pre-auth.ts hold (few bytes, few connections, a short life,
 * nothing decoded beyond a hello of MAX_HELLO_BYTES); anything else is
 * closed, logged with its remote address, and the job goes on.
 *
 * Secure (mpiexec --secure): the service runs TLS keyed by the job
 * (core's util/job-tls.ts, no certificate), or, for another secure job's
 * mpiexec dialling a port, by that port's secret (options.portPsk: the TLS
 * identity names which port); a connection is admitted to the
 * pre-authentication limits once its TLS handshake is done (which must finish
 * within LIFETIME_MS), and a failed TLS handshake is refused and logged like
 * a failed hello.
 *
 * State: the committed key/value store (one per job), the worlds (the one
 * mpiexec started and any spawned since: docs/adr/0040-dynamic-processes.md),
 * per world the ranks that arrived at its current fence with the pairs they
 * put, and the members by process number (a hello's rank).
 *
 * Fence: completes when every process of the caller's world has arrived; the
 * pairs put before it are committed and sent back with fenceDone to the
 * world's members. A rank that dies
 * while others wait in a fence is the job's business (job.ts aborts it), not
 * this service's: it never times out a fence itself.
 *
 * Events go to the owner (job.ts) synchronously, before the reply (ack) is
 * sent, so a process that waits for the ack and then exits is always known
 * as finalized or aborting by the time its exit is seen.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '@tsmpi/core/pmi';
import { WebSocket, WebSocketServer } from 'ws';
import {
  CLOSE_CODES,
  FramedLink,
  KeyChallenge,
  LINK_RESPONSE,
  LINK_UPGRADE,
  LINK_VERSION_HEADER,
  LINK_VERSION_REFUSAL,
  MAX_HELLO_BYTES,
  MAX_PEER_FAILED_CHARS,
  PMI_PROTOCOL_VERSION,
  decodeClientMessage,
  encodeServerMessage,
  jobTlsServerOptions,
  linkRequestError,
  pmiProofBinding,
  type BlockedIn,
  type ClientMessage,
  type DynOp,
  type FinalizeReport,
  type RankCounters,
  type ServerMessage,
} from '@tsmpi/core/pmi';
import { listenInRange } from '@tsmpi/transport-tcp/host';
import { LIFETIME_MS, PreAuthGate, remoteOf } from './pre-auth.ts';
import { PORT_PATH } from './port-link.ts';
import { PROXY_PATH } from './proxy-protocol.ts';

/** A connection on PROXY_PATH, upgraded, not yet authenticated: the job runs the proxy's hello on it. */
export interface PendingLink {
  readonly ws: WebSocket;
  /** The peer's address:port, for the log. */
  readonly remote: string;
  /** mpiexec's address on this connection. */
  readonly localAddress: string;
  /** The link proved the job key: the pre-authentication limits no longer apply. */
  authenticated(): void;
  /** Refuses the link: logged with its remote address, closed with `code`. */
  refuse(code: number, reason: string, data?: Record<string, unknown>): void;
}

/** What the job learns from the service. */
export interface WireupEvents {
  onJoined(rank: number, pid: number): void;
  onInitialized(rank: number): void;
  onFinalized(rank: number, report: FinalizeReport): void;
  onAbort(rank: number, code: number, message: string): void;
  /** `rank` lost its connection to process `process`: a failure of `rank` that follows is its consequence. */
  onPeerLost(rank: number, process: number): void;
  /** mpiexec --trace: `rank`'s trace (core's pmi trace-format, still encoded), before its finalized. */
  onTrace?(rank: number, data: Uint8Array): void;
  /** A connection on PROXY_PATH (proxy-protocol.ts): the job runs its challenge and checks its hello. */
  onProxyLink?(link: PendingLink): void;
  /** A connection on PORT_PATH (port-link.ts): another job's mpiexec connecting at a port; the job checks its proof. */
  onPortLink?(link: PendingLink): void;
  /** Every process of the world that starts at `first` completed a fence. */
  onFenceDone?(first: number): void;
  /** A request of dynamic processes from process `rank` (protocol.ts DYN_OPS): its answer, or [error class name, message]. */
  onDynamic?(rank: number, op: DynOp, args: Readonly<Record<string, unknown>>): Promise<{ readonly value: unknown } | { readonly error: readonly [string, string] }>;
}

/** The processes that fence together: the world mpiexec started, or one spawn's. */
interface World {
  readonly first: number;
  readonly size: number;
  arrived: Set<number>;
  staged: (readonly [string, string])[];
}

/** One rank's answer to a roll-call; counters only when the roll-call asked for them (--dashboard) and the rank had some. */
export type RollCallAnswer =
  | { readonly kind: 'blocked'; readonly blockedIn: BlockedIn; readonly counters?: RankCounters }
  | { readonly kind: 'notInMpi'; readonly counters?: RankCounters }
  | { readonly kind: 'noAnswer' };

/** TCP keep-alive probe start on every wire-up connection. */
const KEEPALIVE_MS = 5_000;
/** Largest message from a process once it authenticated (a fence carries the pairs it put). */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;
/** How long a refused link may take to answer the close frame before it is dropped. */
const REFUSE_CLOSE_MS = 1_000;
/** Largest HTTP request head (the upgrade request of ws is about 250 bytes, a rank's link's 70). */
const MAX_HEADER_BYTES = 4096;

interface Conn {
  readonly link: FramedLink;
  readonly socket: Socket;
  readonly remote: string;
  readonly challenge: KeyChallenge;
  rank: number;
}

/** The service for one job. */
export class WireupServer {
  readonly #key: string;
  readonly #log: Logger;
  readonly #events: WireupEvents;
  readonly #gate: PreAuthGate;
  #wss: WebSocketServer | null = null;
  #http: Server | null = null;
  /** Every rank's link, authenticated or not: close() drops them. */
  readonly #links = new Set<FramedLink>();
  readonly #members = new Map<number, Conn>();
  readonly #committed = new Map<string, string>();
  readonly #worlds: World[] = [];
  #nextRollCallId = 1;
  readonly #rollCallWaiters = new Map<number, (rank: number, b: BlockedIn | null, counters: RankCounters | undefined) => void>();

  readonly #secure: boolean;

  /** The TLS PSK of another identity than the job's: an open port's, for other jobs' port links (port-link.ts). */
  readonly #portPsk: ((identity: string) => Buffer | null) | null;

  /**
   * @param options.secure - serve wss:// (TLS keyed by the job: mpiexec --secure)
   * @param options.portPsk - under secure, the PSK of a port's TLS identity (another job's mpiexec dialling a port), or null
   */
  constructor(size: number, jobKeyHex: string, log: Logger, events: WireupEvents, options: { readonly secure?: boolean; readonly portPsk?: (identity: string) => Buffer | null } = {}) {
    this.#secure = options.secure === true;
    this.#portPsk = options.portPsk ?? null;
    this.#worlds.push({ first: 0, size, arrived: new Set(), staged: [] });
    this.#key = jobKeyHex;
    this.#log = log;
    this.#events = events;
    // Every rank (and, fewer than ranks, every proxy) may connect at the same moment.
    this.#gate = new PreAuthGate(log, size);
  }

  /**
   * Starts listening on `host` (127.0.0.1 for a one-host job, a non-loopback
   * address or 0.0.0.0 when the job spans hosts), on any free port or on one
   * of `ports` (--port-range); resolves to the port.
   */
  async start(host = '127.0.0.1', ports: { readonly lo: number; readonly hi: number } | null = null): Promise<number> {
    const gate = this.#gate;
    // Only WebSocket upgrades are served; a plain request is refused at once.
    const onRequest = (req: IncomingMessage, res: { destroy(): void }): void => {
      gate.refuse(req.socket, 'not a WebSocket upgrade');
      res.destroy();
    };
    let http: Server;
    if (this.#secure) {
      const portPsk = this.#portPsk;
      http = createTlsServer({ ...jobTlsServerOptions(this.#key, portPsk === null ? undefined : (identity) => portPsk(identity)), maxHeaderSize: MAX_HEADER_BYTES, handshakeTimeout: LIFETIME_MS }, onRequest);
      // The gate counts what comes through TLS: the socket the upgrade hands over is the TLS one.
      http.on('secureConnection', (socket: Socket) => gate.admit(socket));
    } else {
      http = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, onRequest);
      http.on('connection', (socket: Socket) => gate.admit(socket));
    }
    // An https server reports a failed TLS handshake here too (its tlsClientError becomes a clientError).
    http.on('clientError', (err: Error, socket: Socket) => {
      const isTls = ((err as NodeJS.ErrnoException).code ?? '').startsWith('ERR_SSL') || (err as { library?: string }).library === 'SSL routines';
      if (isTls) gate.refuse(socket, 'TLS handshake failed (not this job\'s key nor an open port\'s secret, or not --secure)', { error: err.message.split('\n')[0] });
      else gate.refuse(socket, 'malformed HTTP request', { error: err.message });
    });
    await listenInRange(http, host, ports ?? undefined);
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_PAYLOAD_BYTES });
    http.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      if (!gate.isWaiting(socket)) {
        socket.destroy();
        return;
      }
      gate.countBytes(socket, head);
      if (gate.isWaiting(socket) && (req.headers.upgrade ?? '').toLowerCase() === LINK_UPGRADE) {
        const mismatch = linkRequestError(req.headers[LINK_VERSION_HEADER.toLowerCase()]);
        if (mismatch === null) this.#onRankLink(socket, head);
        else this.#refuseLinkVersion(socket, mismatch);
        return;
      }
      // WebSockets are the proxies' and other jobs' links only: ranks join over their framed link.
      if (req.url !== PROXY_PATH && req.url !== PORT_PATH) {
        gate.refuse(socket, 'not a rank\'s link, nor a WebSocket on the proxies\' or ports\' path');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws, req, socket));
    });
    this.#wss = wss;
    this.#http = http;
    wss.on('error', (err) => this.#log.error({ err }, 'wire-up service error'));
    return (http.address() as AddressInfo).port;
  }

  /** A spawned world: processes first..first+size-1 may join now (their hellos name those numbers). */
  addWorld(first: number, size: number): void {
    this.#worlds.push({ first, size, arrived: new Set(), staged: [] });
  }

  /** Puts a committed value (a coupled job's process's address: dynamic-service.ts); processes read it with get. */
  commit(key: string, value: string): void {
    this.#committed.set(key, value);
  }

  /** A committed value (a process's address, put before its world's fence), or undefined. */
  committed(key: string): string | undefined {
    return this.#committed.get(key);
  }

  #worldOf(process: number): World | undefined {
    return this.#worlds.find((w) => process >= w.first && process < w.first + w.size);
  }

  /** Ranks currently connected. */
  get connectedRanks(): number[] {
    return [...this.#members.keys()];
  }

  /**
   * Asks every connected rank what it is blocked in.
   * @param timeoutMs - how long to wait for answers; ranks that stay silent are 'noAnswer'
   * @param withCounters - also ask for each rank's counters (mpiexec --dashboard's sample)
   */
  rollCall(timeoutMs: number, withCounters = false): Promise<Map<number, RollCallAnswer>> {
    const answers = new Map<number, RollCallAnswer>();
    for (const w of this.#worlds) for (let r = w.first; r < w.first + w.size; r++) answers.set(r, { kind: 'noAnswer' });
    const id = this.#nextRollCallId++;
    const expected = new Set(this.#members.keys());
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#rollCallWaiters.delete(id);
        resolve(answers);
      };
      const timer = setTimeout(finish, timeoutMs);
      this.#rollCallWaiters.set(id, (rank, b, counters) => {
        if (!expected.has(rank)) return;
        expected.delete(rank);
        const c = counters === undefined ? {} : { counters };
        answers.set(rank, b === null ? { kind: 'notInMpi', ...c } : { kind: 'blocked', blockedIn: b, ...c });
        if (expected.size === 0) finish();
      });
      if (expected.size === 0) {
        finish();
        return;
      }
      const ask = encodeServerMessage(withCounters ? { t: 'rollCall', id, counters: true } : { t: 'rollCall', id });
      for (const c of this.#members.values()) c.link.send(ask);
    });
  }

  /**
   * Tells process `to`, when it is connected, that `failed` (another job's process coupled at a port:
   * coupled-links.ts) failed; the process fails its calls that involve it (wire-up peerFailed).
   */
  tellPeerFailed(to: number, failed: number, why: string): void {
    const c = this.#members.get(to);
    if (c !== undefined) this.#send(c, { t: 'peerFailed', process: failed, why: why.slice(0, MAX_PEER_FAILED_CHARS) });
  }

  /** Closes every connection and the server. */
  close(): Promise<void> {
    const wss = this.#wss;
    const http = this.#http;
    this.#wss = null;
    this.#http = null;
    if (wss === null || http === null) return Promise.resolve();
    for (const ws of wss.clients) ws.terminate();
    for (const link of this.#links) link.terminate();
    this.#gate.close();
    return new Promise((resolve) => wss.close(() => http.close(() => resolve())));
  }

  #onConnection(ws: WebSocket, req: IncomingMessage, socket: Socket): void {
    // A vanished host is found by the kernel too (remote ranks and proxies); mpiexec's heartbeats are faster.
    socket.setKeepAlive(true, KEEPALIVE_MS);
    const remote = remoteOf(socket);
    if (req.url === PORT_PATH) {
      ws.on('error', (err) => this.#log.debug({ err, remote }, 'port link error'));
      const pending: PendingLink = {
        ws, remote, localAddress: socket.localAddress ?? '',
        authenticated: () => this.#gate.authenticated(socket),
        refuse: (code, reason, data = {}) => this.#refuseWs(ws, socket, remote, code, reason, data),
      };
      if (this.#events.onPortLink === undefined) pending.refuse(CLOSE_CODES.protocol, 'no ports in this job');
      else this.#events.onPortLink(pending);
      return;
    }
    if (req.url === PROXY_PATH) {
      ws.on('error', (err) => this.#log.debug({ err, remote }, 'proxy link error'));
      if (this.#events.onProxyLink === undefined) {
        this.#refuseWs(ws, socket, remote, CLOSE_CODES.protocol, 'no proxies in this job');
        return;
      }
      this.#events.onProxyLink({
        ws, remote, localAddress: socket.localAddress ?? '',
        authenticated: () => this.#gate.authenticated(socket),
        refuse: (code, reason, data = {}) => this.#refuseWs(ws, socket, remote, code, reason, data),
      });
      return;
    }
    this.#refuseWs(ws, socket, remote, CLOSE_CODES.protocol, 'no such path');
  }

  /**
   * A process of another tsmpi version opened its link: logged as a refusal, answered with this side's version
   * in plain HTTP (the process says "different tsmpi versions" and exits), then closed. The gate's limits still
   * hold the socket until it is gone.
   */
  #refuseLinkVersion(socket: Socket, why: string): void {
    this.#gate.logRefusal(socket, remoteOf(socket), why);
    socket.end(LINK_VERSION_REFUSAL);
  }

  /** A process opened its link (core's pmi/link.ts): answer the upgrade, then challenge it. */
  #onRankLink(socket: Socket, head: Buffer): void {
    socket.setTimeout(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.write(LINK_RESPONSE);
    let conn: Conn | null = null; // set before the link delivers anything (receive() below)
    // Before the hello is accepted, a frame may be no larger than a hello (the gate bounds the bytes besides).
    const link = new FramedLink(socket, MAX_HELLO_BYTES, {
      onMessage: (body) => this.#onMessage(conn!, body),
      onError: (err) => {
        if (conn!.rank < 0 && this.#gate.isWaiting(socket)) this.#gate.refuse(socket, 'malformed link before hello', { error: err.message });
        else this.#log.debug({ err, remote: conn!.remote, rank: conn!.rank }, 'wire-up connection error');
      },
      onClose: () => {
        this.#links.delete(link);
        if (conn!.rank >= 0 && this.#members.get(conn!.rank) === conn) {
          this.#members.delete(conn!.rank);
          this.#log.debug({ rank: conn!.rank }, 'rank disconnected from the wire-up service');
        }
      },
    });
    conn = { link, socket, remote: remoteOf(socket), challenge: new KeyChallenge(this.#key), rank: -1 };
    this.#links.add(link);
    this.#send(conn, { t: 'challenge', v: PMI_PROTOCOL_VERSION, nonce: conn.challenge.nonce });
    // What the process sent after its upgrade request, in the same read: read once conn exists.
    link.receive(head);
  }

  #refuse(conn: Conn, code: number, reason: string, data: Record<string, unknown> = {}): void {
    // A link that has not authenticated stays under the gate's limits meanwhile (bytes, lifetime).
    this.#gate.logRefusal(conn.socket, conn.remote, reason, data);
    conn.link.close(code, reason);
    // Do not wait for a peer that ignores the close frame.
    setTimeout(() => conn.link.terminate(), REFUSE_CLOSE_MS).unref();
  }

  #refuseWs(ws: WebSocket, socket: Socket, remote: string, code: number, reason: string, data: Record<string, unknown> = {}): void {
    // A peer that has not authenticated stays under the gate's limits meanwhile (bytes, lifetime).
    this.#gate.logRefusal(socket, remote, reason, data);
    ws.close(code, reason);
    // Do not wait for a peer that ignores the closing handshake.
    setTimeout(() => ws.terminate(), REFUSE_CLOSE_MS).unref();
  }

  #send(conn: Conn, m: ServerMessage): void {
    conn.link.send(encodeServerMessage(m));
  }

  #onMessage(conn: Conn, data: Buffer): void {
    // (Before the hello the link's reader takes no frame over MAX_HELLO_BYTES: nothing larger reaches the decoder.)
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
        this.#rollCallWaiters.get(m.id)?.(conn.rank, m.blockedIn, m.counters);
        return;
      case 'clock':
        // mpiexec's clock for the rank's offset (--trace): the same clock trace-merge.ts aligns to.
        this.#send(conn, { t: 'clockReply', id: m.id, timeMs: performance.timeOrigin + performance.now() });
        return;
      case 'trace':
        this.#events.onTrace?.(conn.rank, m.data);
        this.#send(conn, { t: 'ack', id: m.id });
        return;
      case 'dyn':
        this.#onDynamic(conn, m.id, m.op, m.a);
        return;
    }
  }

  #onDynamic(conn: Conn, id: number, op: DynOp, args: Readonly<Record<string, unknown>>): void {
    const handler = this.#events.onDynamic;
    if (handler === undefined) {
      this.#send(conn, { t: 'dynReply', id, error: ['ERR_SPAWN', 'this mpiexec serves no dynamic processes'], value: null });
      return;
    }
    handler(conn.rank, op, args).then(
      (r) => this.#send(conn, 'error' in r ? { t: 'dynReply', id, error: r.error, value: null } : { t: 'dynReply', id, error: null, value: r.value }),
      (err: Error) => this.#send(conn, { t: 'dynReply', id, error: ['ERR_OTHER', err.message], value: null }),
    );
  }

  #onHello(conn: Conn, m: ClientMessage): void {
    if (m.t !== 'hello') {
      this.#refuse(conn, CLOSE_CODES.protocol, 'first message is not hello', { type: m.t });
      return;
    }
    if (m.v !== PMI_PROTOCOL_VERSION) {
      this.#refuse(conn, CLOSE_CODES.protocol, 'protocol version mismatch (a rank of another tsmpi version)', { version: m.v, expected: PMI_PROTOCOL_VERSION });
      return;
    }
    const proof = conn.challenge.answer(m.nonce, pmiProofBinding(m.v, m.rank, m.pid), m.proof);
    if (proof === null) {
      this.#refuse(conn, CLOSE_CODES.badKey, 'hello does not prove the job key', { rank: m.rank, clientPid: m.pid });
      return;
    }
    // Authenticated from here on: a refusal below is a job member's mistake, closed properly.
    this.#gate.authenticated(conn.socket);
    conn.link.maxBodyBytes = MAX_PAYLOAD_BYTES;
    const world = this.#worldOf(m.rank);
    if (world === undefined || this.#members.has(m.rank)) {
      this.#refuse(conn, CLOSE_CODES.badRank, 'rank out of range or already connected', { rank: m.rank, clientPid: m.pid });
      return;
    }
    conn.rank = m.rank;
    this.#members.set(m.rank, conn);
    this.#log.debug({ rank: m.rank, pid: m.pid }, 'rank joined the wire-up service');
    this.#send(conn, { t: 'welcome', size: world.size, proof });
    this.#events.onJoined(m.rank, m.pid);
  }

  #onFence(conn: Conn, puts: readonly (readonly [string, string])[]): void {
    const w = this.#worldOf(conn.rank)!;
    if (w.arrived.has(conn.rank)) {
      this.#refuse(conn, CLOSE_CODES.protocol, 'fence called twice', { rank: conn.rank });
      return;
    }
    w.arrived.add(conn.rank);
    for (const p of puts) w.staged.push(p);
    if (w.arrived.size < w.size) return;
    const kvs = w.staged;
    for (const [k, v] of kvs) this.#committed.set(k, v);
    w.arrived = new Set();
    w.staged = [];
    this.#log.debug({ pairs: kvs.length, world: w.first }, 'fence completed');
    const done = encodeServerMessage({ t: 'fenceDone', kvs });
    for (const [r, c] of this.#members) {
      if (r >= w.first && r < w.first + w.size) c.link.send(done);
    }
    this.#events.onFenceDone?.(w.first);
  }
}
