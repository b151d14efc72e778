/**
 * TcpTransport: the multichannel TCP implementation of the core transport
 * contract (@tsmpi/core/transport, interface.ts; papers/multichannel-parallel-
 * queues.txt 3.1-3.2: one channel per endpoint pair keeps per-pair order and
 * C connections spread one process's traffic; the pair's channel is
 * interface.ts channelOf, docs/adr/0018).
 *
 * Roles: one instance per thread that runs channel engines; it owns
 * `options.channels` towards every peer. It listens once (one server for all
 * its channels: the handshake names the channel, and a connection for a
 * channel this instance does not own is refused), publishes "host:port", and
 * after start() opens outbound connections lazily, one per (peer, channel),
 * on the first send. It sends only on connections it opened and receives
 * only on connections it accepted, so there are no connection races.
 *
 * In threads mode each channel's instance has its own listener, so the device
 * must give the instance that owns channel c, for every peer, the address
 * published by that peer's instance owning c (the contract's one string per
 * process is read that way).
 *
 * Thread instances (options.threadConnections): a user thread's own sending
 * side. It never listens; its connections say in the handshake that they are
 * a thread's, so the accepting side does not take their end for the end of
 * the process (inbound-connection.ts).
 *
 * Flushing: connections with queued frames register; one queueMicrotask
 * flushes them all when the code that sent them yields: one socket write per
 * channel for the sends of one synchronous stretch. A microtask, not
 * process.nextTick: the flush is queued before the continuation of the
 * caller's `await`, so a rank that computes right after `await comm.Send()`,
 * or after a collective that finished inside the call, has sent its frames
 * first (docs/adr/0061).
 *
 * Same host: the instance also listens on a Unix-domain socket in the job's
 * directory of mode 0700 (same-host.ts, docs/adr/0029) and, when that worked,
 * publishes its path with its address (address.ts); it dials a peer that
 * published the same host and a path there instead of over TCP. The
 * handshake binds the listener it runs over (handshake.ts), so a connection
 * carried from one listener to another fails.
 *
 * Secure (options.secure, mpiexec --secure, docs/adr/0034-secure-option-tls-psk.md): every TCP connection, dialled or
 * accepted, runs TLS keyed by the job (job-tls-socket.ts) under the handshake; same-host sockets
 * stay plain.
 *
 * Endpoint readers (options.listenName, docs/adr/0019): an instance that listens only on its
 * computed socket path in the job's directory, never on the network; a thread instance given
 * such a path (it starts with '/') as a peer's address dials only it.
 *
 * Peers: state per peer is ALIVE, DEPARTED (it sent GOODBYE: its close() is
 * graceful) or LOST (reported once through onPeerLost). Sending to a departed
 * or lost peer drops the frame; a departed peer is then reported lost once
 * (its frames cannot be delivered). Nothing is reported after our own close()
 * or destroy() started.
 */
import net from 'node:net';
import {
  channelOf, type ForeignPeer, type FrameHeader, type Transport, type TransportError, type TransportHandlers, type TransportLog, type TransportOptions,
} from '@tsmpi/core/transport';
import path from 'node:path';
import { formatAddress, formatPublished, parsePublished, type HostPort, type PublishedAddress } from './address.ts';
import { ChannelConnection } from './channel-connection.ts';
import type { ConnectionOwner } from './connection-owner.ts';
import { listenerBinding } from './handshake.ts';
import { InboundConnection } from './inbound-connection.ts';
import { JobTlsSockets } from './job-tls-socket.ts';
import { listenInRange } from './listen-port.ts';
import {
  HAS_UNIX_SOCKETS, checkOwnDirectory, ensureSameHostDirectory, forgetBoundPath, isSameHost, rememberBoundPath, transportSocketPath,
} from './same-host.ts';
import { DEFAULT_TUNING, MAX_PAYLOAD_BYTES, type TcpTuning } from './tuning.ts';

const PEER_ALIVE = 0;
const PEER_DEPARTED = 1;
const PEER_LOST = 2;

const kTransport = Symbol('tsmpi.tcpTransport');
const kListener = Symbol('tsmpi.listener');
/** A listener of a transport's, and what its handshakes bind (handshake.ts listenerBinding). */
type OwnedServer = net.Server & { [kTransport]: TcpTransport; [kListener]: string };

interface Flushable {
  flush(): void;
}

export class TcpTransport implements Transport, ConnectionOwner {
  readonly _handlers: TransportHandlers;
  readonly _log: TransportLog;
  readonly _tuning: TcpTuning;
  readonly _jobKey: string;
  readonly _process: number;
  readonly _processCount: number;
  readonly _received: number[];
  readonly _threadConnections: boolean;
  readonly _onHoldChange: ((holding: boolean) => void) | null;
  readonly _maxUnsolicitedBytes: number;
  _isClosing = false;
  /** TLS of the TCP connections (options.secure), or null: plain. */
  readonly #tls: JobTlsSockets | null;

  readonly #channelCount: number;
  readonly #endpointsPerProcess: number;
  readonly #isOwned: boolean[];
  readonly #listenHost: string;
  readonly #listenPorts: { readonly lo: number; readonly hi: number } | undefined;
  readonly #sent: number[];
  /** Outbound connections, index peer * C + channel. */
  readonly #out: (ChannelConnection | undefined)[];
  readonly #inbound = new Set<InboundConnection>();
  readonly #peerState: Uint8Array;
  #addresses: (PublishedAddress | null)[] = [];
  /** Processes of coupled jobs (docs/adr/0043-connect-two-jobs.md): their pair key and this process's number there. */
  readonly #foreign = new Map<number, ForeignPeer>();
  /** Per peer: the same-host socket path to dial instead of an address (an endpoint reader's, interface.ts listenName), or null. */
  #names: (string | null)[] = [];
  /** Listen only on this same-host socket path (interface.ts listenName), or null. */
  readonly #listenName: string | null;
  #server: net.Server | null = null;
  /** The same-host listener (same-host.ts), or null. */
  #unixServer: net.Server | null = null;
  /** Host part of this instance's published address, once listening. */
  #ownHost: string | null = null;
  /**
   * Every accepted socket reads into this one buffer (read-buffer.ts); made at the first accept.
   * A plain Uint8Array, not a Buffer: payloads are views of it, and a consumer's payload.slice()
   * must copy (Buffer's slice() would return another view of the reused memory).
   */
  #readBuffer: Uint8Array | null = null;
  #isServerClosed = true;
  #liveSockets = 0;
  readonly #dirty: Flushable[] = [];
  #isFlushScheduled = false;
  /** The flush, bound once: queueMicrotask gets the same function every time (no closure per flush). */
  readonly #flushBound = (): void => this._flushAll();
  #closePromise: Promise<void> | null = null;
  #resolveClose: (() => void) | null = null;
  #closeTimer: NodeJS.Timeout | null = null;

  constructor(options: TransportOptions, tuning: TcpTuning = DEFAULT_TUNING) {
    const C = options.channelCount;
    this._handlers = options.handlers;
    this._log = options.log;
    this._tuning = tuning;
    this._jobKey = options.jobKey;
    this._process = options.process;
    this._processCount = options.processCount;
    this._maxUnsolicitedBytes = options.maxUnsolicitedPayloadBytes ?? MAX_PAYLOAD_BYTES;
    this.#channelCount = C;
    this.#endpointsPerProcess = options.endpointsPerProcess ?? 1;
    this.#listenHost = options.listenHost;
    this.#listenPorts = options.listenPorts;
    this.#isOwned = new Array<boolean>(C).fill(options.channels === undefined);
    if (options.channels !== undefined) for (const c of options.channels) this.#isOwned[c] = true;
    this.#sent = new Array<number>(C).fill(0);
    this._received = new Array<number>(C).fill(0);
    this.#out = new Array<ChannelConnection | undefined>(options.processCount * C);
    this.#peerState = new Uint8Array(options.processCount);
    this._threadConnections = options.threadConnections === true;
    this._onHoldChange = options.onHoldChange ?? null;
    this.#listenName = options.listenName ?? null;
    this.#tls = options.secure === true ? new JobTlsSockets(options.jobKey) : null;
  }

  listen(): Promise<string> {
    if (this.#listenName !== null) return this.#listenOnName(this.#listenName);
    const server = net.createServer({ noDelay: true, pauseOnConnect: true }) as OwnedServer;
    server[kTransport] = this;
    this.#server = server;
    return listenInRange(server, this.#listenHost, this.#listenPorts).then(() => {
      const port = (server.address() as net.AddressInfo).port;
      const address = formatAddress(this.#listenHost, port);
      server[kListener] = listenerBinding('tcp', address);
      server.on('error', serverOnError);
      server.on('connection', serverOnConnection);
      this.#isServerClosed = false;
      // The transport never holds the event loop (interface.ts): the device does while operations are pending.
      server.unref();
      this.#ownHost = parsePublished(address)?.tcp.host ?? null;
      return this.#listenUnix(port).then((unixPath) => formatPublished(address, unixPath));
    });
  }

  /**
   * Listens on this instance's same-host socket; resolves to its path, or to null without one (turned
   * off, no Unix sockets here, the job's directory not safe, the bind failed): peers here then use TCP.
   */
  #listenUnix(port: number): Promise<string | null> {
    if (!this._tuning.sameHostUnix || !HAS_UNIX_SOCKETS) return Promise.resolve(null);
    const socketPath = transportSocketPath(this._jobKey, this._process, port);
    const server = this.#newPathServer(socketPath);
    return listenOnPath(server, socketPath).then(
      () => {
        this.#unixServer = server;
        return socketPath;
      },
      (err: Error) => {
        this._log.warn({ path: socketPath, err: err.message }, 'no same-host socket; the processes on this host connect to this one over TCP');
        return null;
      },
    );
  }

  /** A server for the Unix-domain socket `socketPath`, whose connections this transport accepts. */
  #newPathServer(socketPath: string): OwnedServer {
    const server = net.createServer({ pauseOnConnect: true }) as OwnedServer;
    server[kTransport] = this;
    server[kListener] = listenerBinding('unix', socketPath);
    return server;
  }

  /** An endpoint reader's listener: the socket path only; a path already taken rejects (it is computed, never chosen). */
  #listenOnName(name: string): Promise<string> {
    if (!HAS_UNIX_SOCKETS) return Promise.reject(new Error('a same-host socket needs Unix-domain sockets'));
    const server = this.#newPathServer(name);
    this.#server = server;
    return listenOnPath(server, name).then(
      () => {
        this.#isServerClosed = false;
        return name;
      },
      (err: unknown) => {
        this.#server = null;
        throw err;
      },
    );
  }

  start(peerAddresses: readonly string[]): void {
    this.#names = peerAddresses.map((a) => (a.startsWith('/') ? a : null));
    this.#addresses = peerAddresses.map((a) => (a.startsWith('/') ? null : parsePublished(a)));
    // A thread instance never listens: its host is the one its own process published, so same-host peers are still reached over Unix sockets.
    if (this._threadConnections && this.#ownHost === null) this.#ownHost = this.#addresses[this._process]?.tcp.host ?? null;
  }

  addPeers(peerAddresses: readonly string[], foreign?: ReadonlyMap<number, ForeignPeer>): void {
    foreign?.forEach((f, p) => {
      this.#foreign.set(p, f);
      this.#tls?.addPair(f.key);
    });
    peerAddresses.forEach((a, p) => {
      if (a === '') return;
      this.#names[p] = a.startsWith('/') ? a : null;
      this.#addresses[p] = a.startsWith('/') ? null : parsePublished(a);
    });
  }

  /** @internal ConnectionOwner: the key a HELLO claiming `process` proves (a coupled job's process: the pair key). */
  _keyOf(process: number): string {
    return this.#foreign.get(process)?.key ?? this._jobKey;
  }

  /** @internal ConnectionOwner: the number this process says it is when it dials `peer` (another job's: its number there). */
  _helloProcess(peer: number): number {
    return this.#foreign.get(peer)?.asProcess ?? this._process;
  }

  /** @internal ConnectionOwner: J, for the renumbering of a coupled job's frames. */
  get _endpointsPerProcess(): number {
    return this.#endpointsPerProcess;
  }

  /** @internal ConnectionOwner: true when `process` is a coupled job's. */
  _isForeign(process: number): boolean {
    return this.#foreign.has(process);
  }

  /**
   * Queues a frame on channel channelOf(srcEndpoint, dstEndpoint, J, C) (contract in interface.ts).
   * Frames to a lost or departed peer, or sent after close()/destroy(), are dropped.
   * @throws RangeError when dstProcess is out of range or the channel is not owned
   *   by this instance (a device bug, never a network event)
   */
  send(dstProcess: number, header: FrameHeader, payload: Uint8Array | null, sentToken: number): boolean {
    if (this._isClosing) return true; // dropped: the transport is closing
    const C = this.#channelCount;
    const channel = channelOf(header.srcEndpoint, header.dstEndpoint, this.#endpointsPerProcess, C);
    if (this.#isOwned[channel] !== true) {
      throw new RangeError(`channel ${channel} (endpoints ${header.srcEndpoint} -> ${header.dstEndpoint}) is not owned by this transport`);
    }
    const state = this.#peerState[dstProcess];
    if (state !== PEER_ALIVE) {
      if (state === PEER_DEPARTED) {
        process.nextTick(reportLost, this, dstProcess, { code: 'TSMPI_ERR_PEER_CLOSED', message: `process ${dstProcess} has closed its transport` });
      } else if (state === undefined) {
        throw new RangeError(`process ${dstProcess} is out of range`);
      }
      return true;
    }
    const slot = dstProcess * C + channel;
    const conn = this.#out[slot] ?? this.#openChannel(dstProcess, channel);
    if (conn === null) return true;
    this.#sent[channel]!++;
    return conn.queue(header, payload, sentToken);
  }

  /** Interface.ts: a live peer's owned channel whose connection is absent or still opening is not open. */
  isOpen(dstProcess: number, channel: number): boolean {
    if (this._isClosing || this.#peerState[dstProcess] !== PEER_ALIVE || this.#isOwned[channel] !== true) return true;
    return this.#out[dstProcess * this.#channelCount + channel]?.isOpen === true;
  }

  /** The lean send's frame (interface.ts): only to a live peer on an open connection of an owned channel, else false. */
  queueEager(dstProcess: number, channel: number, contextId: number, srcEndpoint: number, dstEndpoint: number, tag: number, payload: Uint8Array): boolean {
    if (this._isClosing || this.#peerState[dstProcess] !== PEER_ALIVE || this.#isOwned[channel] !== true) return false;
    const conn = this.#out[dstProcess * this.#channelCount + channel];
    if (conn === undefined || conn === null || !conn.isOpen) return false;
    this.#sent[channel]!++;
    conn.queueEager(contextId, srcEndpoint, dstEndpoint, tag, payload);
    return true;
  }

  /** Opens every owned channel to `peer` now; resolves once each is open or closed (interface.ts). */
  open(peer: number): Promise<void> {
    const C = this.#channelCount;
    const waits: Promise<void>[] = [];
    if (this._isClosing || this.#peerState[peer] !== PEER_ALIVE) return Promise.resolve();
    for (let c = 0; c < C; c++) {
      if (this.#isOwned[c] !== true) continue;
      const conn = this.#out[peer * C + c] ?? this.#openChannel(peer, c);
      if (conn !== null) waits.push(conn.opened);
    }
    return Promise.all(waits).then(() => undefined);
  }

  /** True once the listener is bound (interface.ts): a same-host name binds inside listen(), before its promise resolves. */
  isListening(): boolean {
    return this.#server?.listening === true;
  }

  channelStats(): { sent: number; received: number }[] {
    const stats: { sent: number; received: number }[] = [];
    for (let c = 0; c < this.#channelCount; c++) stats.push({ sent: this.#sent[c]!, received: this._received[c]! });
    return stats;
  }

  bytesToProcess(): number[] {
    const C = this.#channelCount;
    const out = new Array<number>(this.#out.length / C).fill(0);
    for (let i = 0; i < this.#out.length; i++) {
      const conn = this.#out[i];
      if (conn !== undefined && conn !== null) out[Math.floor(i / C)]! += conn.bytesWritten;
    }
    return out;
  }

  close(): Promise<void> {
    if (this.#closePromise !== null) return this.#closePromise;
    this._isClosing = true;
    this.#closePromise = new Promise<void>((resolve) => {
      this.#resolveClose = resolve;
    });
    this.#closeServer();
    for (const conn of this.#out) conn?.beginClose();
    for (const conn of this.#inbound) conn.beginClose();
    this.#closeTimer = setTimeout(closeTimedOut, this._tuning.closeTimeoutMs, this);
    this.#closeTimer.unref();
    this.#checkClosed();
    return this.#closePromise;
  }

  destroy(err?: TransportError): void {
    if (err !== undefined) this._log.debug({ code: err.code }, 'transport destroyed');
    this._isClosing = true;
    this.#closeServer();
    for (const conn of this.#out) conn?.destroy();
    for (const conn of this.#inbound) conn.destroy();
    this.#dirty.length = 0;
    this.#finishClose();
  }

  // ConnectionOwner

  _isChannelOwned(channel: number): boolean {
    return this.#isOwned[channel] === true;
  }

  _scheduleFlush(flushable: Flushable): void {
    this.#dirty.push(flushable);
    if (this.#isFlushScheduled) return;
    this.#isFlushScheduled = true;
    queueMicrotask(this.#flushBound);
  }

  /** Transport.flushPending: the turn's flush now, if one is scheduled (the scheduled one then finds nothing to write). */
  flushPending(): void {
    if (this.#isFlushScheduled) this._flushAll();
  }

  _flushAll(): void {
    this.#isFlushScheduled = false;
    const dirty = this.#dirty;
    for (let i = 0; i < dirty.length; i++) dirty[i]!.flush();
    dirty.length = 0;
  }

  _peerDeparted(process: number): void {
    if (this.#peerState[process] === PEER_ALIVE) this.#peerState[process] = PEER_DEPARTED;
  }

  _peerLost(process: number, err: TransportError): void {
    if (this.#peerState[process] === PEER_LOST) return;
    this.#peerState[process] = PEER_LOST;
    const C = this.#channelCount;
    for (let c = 0; c < C; c++) this.#out[process * C + c]?.destroy();
    if (this._isClosing) return;
    // A peer that ended is the peer's failure (mpiexec reports it): info; anything else about the link: warn.
    this._log[err.code === 'TSMPI_ERR_PEER_CLOSED' ? 'info' : 'warn']({ peer: process, code: err.code, reason: err.message }, 'peer lost');
    this._handlers.onPeerLost(process, err);
  }

  _socketClosed(): void {
    this.#liveSockets--;
    this.#checkClosed();
  }

  /** A socket to `peer` at `address` over TCP: over TLS with options.secure, keyed by the job (a coupled job's process: the pair key). */
  _dialTcp(address: HostPort, peer: number): net.Socket {
    if (this.#tls !== null) return this.#tls.connect(address.host, address.port, this.#foreign.get(peer)?.key ?? null);
    return net.connect({ host: address.host, port: address.port, noDelay: true });
  }

  /** A connection `listener` (handshake.ts listenerBinding) accepted. */
  _accept(socket: net.Socket, listener: string): void {
    if (this._isClosing) {
      socket.destroy();
      return;
    }
    this.#liveSockets++;
    this.#readBuffer ??= new Uint8Array(this._tuning.readBufferBytes);
    // Same-host sockets stay plain (only the job's user can reach them); TCP ones run TLS with options.secure.
    const accepted = this.#tls !== null && listener.startsWith('tcp ') ? this.#tls.accept(socket, listener, this._log) : socket;
    const conn = new InboundConnection(this, accepted, this.#readBuffer, listener);
    this.#inbound.add(conn);
    conn.resume(() => this.#inbound.delete(conn));
  }

  #openChannel(peer: number, channel: number): ChannelConnection | null {
    const name = this.#names[peer];
    if (name !== null && name !== undefined) {
      const conn = new ChannelConnection(this, peer, channel);
      this.#out[peer * this.#channelCount + channel] = conn;
      this.#liveSockets++;
      conn.connect(null, '', name);
      return conn;
    }
    // A coupled job's process under channel engines listens per channel (ForeignPeer.channelAddresses).
    const perChannel = this.#foreign.get(peer)?.channelAddresses?.[channel];
    const address = perChannel === undefined ? this.#addresses[peer] : parsePublished(perChannel);
    if (address === undefined || address === null) {
      process.nextTick(reportLost, this, peer, { code: 'TSMPI_ERR_CONNECT', message: `no valid address for process ${peer} (was start() called?)` });
      return null;
    }
    const conn = new ChannelConnection(this, peer, channel);
    this.#out[peer * this.#channelCount + channel] = conn;
    this.#liveSockets++;
    // Only a path the peer published, so one it bound; only on its host, where the path means its socket.
    const sameHost = this._tuning.sameHostUnix && HAS_UNIX_SOCKETS && address.unixPath !== null && isSameHost(this.#ownHost, address.tcp.host);
    conn.connect(address.tcp, address.tcpText, sameHost ? address.unixPath : null);
    return conn;
  }

  #closeServer(): void {
    // The same-host listener closes alongside; its accepted sockets are counted like TCP ones.
    this.#unixServer?.close();
    this.#unixServer = null;
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    server.close(() => {
      this.#isServerClosed = true;
      this.#checkClosed();
    });
  }

  #checkClosed(): void {
    if (this.#resolveClose !== null && this.#liveSockets === 0 && this.#isServerClosed) this.#finishClose();
  }

  #finishClose(): void {
    if (this.#closeTimer !== null) clearTimeout(this.#closeTimer);
    this.#closeTimer = null;
    const resolve = this.#resolveClose;
    this.#resolveClose = null;
    if (this.#closePromise === null) this.#closePromise = Promise.resolve();
    resolve?.();
  }

  /** @internal close timeout: drop what is still open. */
  _closeTimedOut(): void {
    if (this.#resolveClose === null) return;
    this._log.warn({ liveSockets: this.#liveSockets }, 'close timed out; destroying remaining connections');
    this.destroy();
  }
}

function reportLost(t: TcpTransport, peer: number, err: TransportError): void {
  t._peerLost(peer, err);
}

function closeTimedOut(t: TcpTransport): void {
  t._closeTimedOut();
}

function serverOnConnection(this: OwnedServer, socket: net.Socket): void {
  this[kTransport]._accept(socket, this[kListener]);
}

function serverOnError(this: OwnedServer, err: Error): void {
  this[kTransport]._log.error({ err: err.message }, 'listening server error');
}

/**
 * Listens on the Unix-domain socket `socketPath` in the job's same-host directory (same-host.ts),
 * which is made or checked first. Synchronously, as a reader needs (it announces itself at once,
 * interface.ts isListening): the check, the bind (Node binds a Unix socket inside listen()) and a
 * second check that the directory is still this user's (nobody put another in its place between
 * the first check and the bind; if so the socket is closed at once). Resolves once listening, with
 * the server accepting and unref'd (the transport never holds the event loop); rejects when the
 * directory is not one of this user's of mode 0700, or the path is taken. The socket file goes when
 * the server closes (Node unlinks it) or, if it never does, when this thread exits.
 */
function listenOnPath(server: OwnedServer, socketPath: string): Promise<void> {
  const dir = path.dirname(socketPath);
  try {
    ensureSameHostDirectory(dir);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.removeListener('error', reject);
      server.on('error', serverOnError);
      server.on('connection', serverOnConnection);
      server.unref();
      resolve();
    });
    if (!server.listening) return; // the bind failed: 'error' follows
    rememberBoundPath(socketPath);
    server.once('close', () => forgetBoundPath(socketPath));
    try {
      checkOwnDirectory(dir);
    } catch (err) {
      server.removeAllListeners('listening');
      server.removeListener('error', reject);
      server.close();
      reject(err as Error);
    }
  });
}
