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
 * Flushing: connections with queued frames register once per turn; one
 * process.nextTick (tuning.flushWith) flushes them all: one socket write per
 * channel per turn. See tuning.ts for why nextTick is the default.
 *
 * Same host: the instance also listens on an abstract Unix-domain socket
 * named after the job key and its address, and dials a peer that published
 * the same host there instead of over TCP (same-host.ts, docs/adr/0012).
 *
 * Endpoint readers (options.listenName, docs/adr/0019, proposed; the device's readers listen,
 * no sender dials them yet): an instance that listens only on its computed abstract name, never on the network; a
 * thread instance given such a name (it starts with NUL) as a peer's address dials only it.
 *
 * Peers: state per peer is ALIVE, DEPARTED (it sent GOODBYE: its close() is
 * graceful) or LOST (reported once through onPeerLost). Sending to a departed
 * or lost peer drops the frame; a departed peer is then reported lost once
 * (its frames cannot be delivered). Nothing is reported after our own close()
 * or destroy() started.
 */
import net from 'node:net';
import {
  channelOf, type FrameHeader, type Transport, type TransportError, type TransportHandlers, type TransportLog, type TransportOptions,
} from '@tsmpi/core/transport';
import { formatAddress, parseAddress, type HostPort } from './address.ts';
import { ChannelConnection } from './channel-connection.ts';
import type { ConnectionOwner } from './connection-owner.ts';
import { InboundConnection } from './inbound-connection.ts';
import { listenInRange } from './listen-port.ts';
import { HAS_ABSTRACT_SOCKETS, isSameHost, sameHostSocketName } from './same-host.ts';
import { DEFAULT_TUNING, MAX_PAYLOAD_BYTES, type TcpTuning } from './tuning.ts';

const PEER_ALIVE = 0;
const PEER_DEPARTED = 1;
const PEER_LOST = 2;

const kTransport = Symbol('tsmpi.tcpTransport');
type OwnedServer = net.Server & { [kTransport]: TcpTransport };

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
  #addresses: (HostPort | null)[] = [];
  /** Per peer: the same-host name to dial instead of an address (an endpoint reader's, interface.ts listenName), or null. */
  #names: (string | null)[] = [];
  /** Listen only on this same-host name (interface.ts listenName), or null. */
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
  readonly #flushWithMicrotask: boolean;
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
    // A thread's own connections flush at the end of its microtask: a thread that computes
    // right after `await send()` must not keep the frame (interface.ts threadConnections).
    this.#flushWithMicrotask = tuning.flushWith === 'microtask' || this._threadConnections;
  }

  listen(): Promise<string> {
    if (this.#listenName !== null) return this.#listenOnName(this.#listenName);
    const server = net.createServer({ noDelay: true, pauseOnConnect: true }) as OwnedServer;
    server[kTransport] = this;
    this.#server = server;
    return listenInRange(server, this.#listenHost, this.#listenPorts).then(() => {
      server.on('error', serverOnError);
      server.on('connection', serverOnConnection);
      this.#isServerClosed = false;
      // The transport never holds the event loop (interface.ts): the device does while operations are pending.
      server.unref();
      const port = (server.address() as net.AddressInfo).port;
      const address = formatAddress(this.#listenHost, port);
      this.#ownHost = parseAddress(address)?.host ?? null;
      return this.#listenUnix(address).then(() => address);
    });
  }

  /** Listens on the same-host socket of `address`; without one (not Linux, name taken), peers here use TCP. */
  #listenUnix(address: string): Promise<void> {
    if (!this._tuning.sameHostUnix || !HAS_ABSTRACT_SOCKETS) return Promise.resolve();
    const server = this.#newNameServer();
    return listenOnSameHostName(server, sameHostSocketName(this._jobKey, address)).then(
      () => {
        this.#unixServer = server;
      },
      (err: Error) => {
        this._log.debug({ err: err.message }, 'no same-host socket; same-host peers connect over TCP');
      },
    );
  }

  /** A server for an abstract Unix-domain name, whose connections this transport accepts. */
  #newNameServer(): OwnedServer {
    const server = net.createServer({ pauseOnConnect: true }) as OwnedServer;
    server[kTransport] = this;
    return server;
  }

  /** An endpoint reader's listener: the same-host name only; a name already taken rejects (it is computed, never chosen). */
  #listenOnName(name: string): Promise<string> {
    if (!HAS_ABSTRACT_SOCKETS) return Promise.reject(new Error('a same-host name needs abstract Unix-domain sockets (Linux)'));
    const server = this.#newNameServer();
    this.#server = server;
    return listenOnSameHostName(server, name).then(
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
    this.#names = peerAddresses.map((a) => (a.startsWith('\0') ? a : null));
    this.#addresses = peerAddresses.map((a) => (a.startsWith('\0') ? null : parseAddress(a)));
    // A thread instance never listens: its host is the one its own process published, so same-host peers are still reached over Unix sockets.
    if (this._threadConnections && this.#ownHost === null) this.#ownHost = this.#addresses[this._process]?.host ?? null;
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

  /** The lean send's frame (interface.ts): only to a live peer on an open connection of an owned channel, else false. */
  queueEager(dstProcess: number, channel: number, contextId: number, srcEndpoint: number, dstEndpoint: number, tag: number, payload: Uint8Array): boolean {
    if (this._isClosing || this.#peerState[dstProcess] !== PEER_ALIVE || this.#isOwned[channel] !== true) return false;
    const conn = this.#out[dstProcess * this.#channelCount + channel];
    if (conn === undefined || conn === null) return false;
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
    if (this.#flushWithMicrotask) queueMicrotask(this.#flushBound);
    else process.nextTick(flushAll, this);
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
    this._log.warn({ peer: process, code: err.code, reason: err.message }, 'peer lost');
    this._handlers.onPeerLost(process, err);
  }

  _socketClosed(): void {
    this.#liveSockets--;
    this.#checkClosed();
  }

  _accept(socket: net.Socket): void {
    if (this._isClosing) {
      socket.destroy();
      return;
    }
    this.#liveSockets++;
    this.#readBuffer ??= new Uint8Array(this._tuning.readBufferBytes);
    const conn = new InboundConnection(this, socket, this.#readBuffer);
    this.#inbound.add(conn);
    conn.resume(() => this.#inbound.delete(conn));
  }

  #openChannel(peer: number, channel: number): ChannelConnection | null {
    const name = this.#names[peer];
    if (name !== null && name !== undefined) {
      const conn = new ChannelConnection(this, peer, channel);
      this.#out[peer * this.#channelCount + channel] = conn;
      this.#liveSockets++;
      conn.connect(null, name);
      return conn;
    }
    const address = this.#addresses[peer];
    if (address === undefined || address === null) {
      process.nextTick(reportLost, this, peer, { code: 'TSMPI_ERR_CONNECT', message: `no valid address for process ${peer} (was start() called?)` });
      return null;
    }
    const conn = new ChannelConnection(this, peer, channel);
    this.#out[peer * this.#channelCount + channel] = conn;
    this.#liveSockets++;
    const sameHost = this._tuning.sameHostUnix && HAS_ABSTRACT_SOCKETS && isSameHost(this.#ownHost, address.host);
    conn.connect(address, sameHost ? sameHostSocketName(this._jobKey, formatAddress(address.host, address.port)) : null);
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

function flushAll(t: TcpTransport): void {
  t._flushAll();
}

function reportLost(t: TcpTransport, peer: number, err: TransportError): void {
  t._peerLost(peer, err);
}

function closeTimedOut(t: TcpTransport): void {
  t._closeTimedOut();
}

function serverOnConnection(this: OwnedServer, socket: net.Socket): void {
  this[kTransport]._accept(socket);
}

function serverOnError(this: OwnedServer, err: Error): void {
  this[kTransport]._log.error({ err: err.message }, 'listening server error');
}

/**
 * Listens on an abstract same-host name: resolves once listening, with the server accepting and
 * unref'd (the transport never holds the event loop); rejects when the name is taken.
 */
function listenOnSameHostName(server: OwnedServer, name: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(name, () => {
      server.removeListener('error', reject);
      server.on('error', serverOnError);
      server.on('connection', serverOnConnection);
      server.unref();
      resolve();
    });
  });
}
