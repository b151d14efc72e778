/**
 * The TLS layer of a transport's TCP connections under mpiexec --secure (TransportOptions.secure,
 * docs/adr/0034-secure-option-tls-psk.md): a dialled socket is a tls.connect() socket, an
 * accepted one is wrapped in a server-side TLSSocket before the connection takes it. Both are
 * keyed by the job (core's util/job-tls.ts); the connection handshake (handshake.ts) then runs
 * inside TLS as it runs on a plain socket. Same-host sockets in the job's 0700 directory stay
 * plain: no one else can reach them (same-host.ts).
 *
 * A failed TLS handshake is what a wrong key (or a peer without --secure) looks like here, so it
 * is made to say so: on the dialling side the socket's error names the peer and carries the code
 * TSMPI_ERR_TLS (not a transient errno: no retry), and a listener that hangs up during the TLS
 * handshake (what a wrong PSK gets) ends the socket with that error instead of a bare 'end'
 * (the connection would take that for a peer closing its handshake); on the accepting side it is
 * logged, like a failed connection handshake, with the listener and the remote address.
 *
 * Another job's processes coupled at a port (docs/adr/0043-connect-two-jobs.md, "--secure") hold the
 * pair key, not this job's: a connection to one is keyed by the pair key (its client options, made
 * once per key), and the listener takes an identity of a pair key this process was given (addPair).
 */
import { createRequire } from 'node:module';
import net from 'node:net';
import type * as Tls from 'node:tls';
import { couplingTls, couplingTlsClientOptions, jobTlsClientOptions, jobTlsFailure, jobTlsServerOptions, type TransportLog } from '@tsmpi/core/transport';

/** The code of a dialled socket's error when its TLS handshake failed. */
export const TLS_FAILURE_CODE = 'TSMPI_ERR_TLS';

const kPeer = Symbol('tsmpi.tlsPeer');
const kState = Symbol('tsmpi.tlsState');
const kLog = Symbol('tsmpi.tlsLog');
/** An accepted socket's remote address and port, read at the accept (a failed TLS socket no longer has them). */
const kRemote = Symbol('tsmpi.tlsRemote');
const CONNECTING = 0;
const HANDSHAKING = 1;
const SECURE = 2;
/**
 * Node's tls module, loaded by the first JobTlsSockets (a --secure job): a job without --secure never
 * loads it (1.2 MB of an idle rank's resident memory, issue 38). Every use below follows a construction.
 */
let tls: typeof Tls;
type TlsSock = Tls.TLSSocket & { [kPeer]: string; [kState]: number; [kLog]: TransportLog | null; [kRemote]?: readonly [string | undefined, number | undefined] };

/** One job's TLS for one transport. */
export class JobTlsSockets {
  readonly #client: Tls.ConnectionOptions;
  readonly #server: Tls.TlsOptions & { isServer: true };
  /** Coupled jobs' pair keys: the client options by key, the PSK by identity (a listener's lookup). */
  readonly #pairClients = new Map<string, Tls.ConnectionOptions>();
  readonly #pairPsks = new Map<string, Buffer>();

  constructor(jobKey: string) {
    tls ??= createRequire(import.meta.url)('node:tls') as typeof Tls;
    this.#client = jobTlsClientOptions(jobKey);
    this.#server = jobTlsServerOptions(jobKey, (identity) => this.#pairPsks.get(identity) ?? null);
  }

  /** A coupled job's pair key: connections to its processes use it, and this process's listener takes it. */
  addPair(key: string): void {
    if (this.#pairClients.has(key)) return;
    this.#pairClients.set(key, couplingTlsClientOptions('pair', key));
    const { identity, psk } = couplingTls('pair', key);
    this.#pairPsks.set(identity, psk);
  }

  /**
   * Dials `host`:`port` (wireSocket turns Nagle off); the connection handshake may be written at once (TLS buffers it).
   * @param pairKey - the pair key of a coupled job's process (addPair first), or null: this job's key
   */
  connect(host: string, port: number, pairKey: string | null = null): net.Socket {
    const options = pairKey === null ? this.#client : (this.#pairClients.get(pairKey) ?? this.#client);
    const socket = tls.connect({ host, port, ...options }) as TlsSock;
    socket[kPeer] = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    socket[kState] = CONNECTING;
    socket[kLog] = null;
    socket.once('connect', onTcpConnect);
    socket.once('secureConnect', onSecure);
    // First, so that the connection's own listener sees the error as rewritten.
    socket.prependListener('error', onDialError);
    socket.emit = emitDialled;
    return socket;
  }

  /** Wraps an accepted (paused) socket of the TCP listener `listener`; refusals are logged on `log`. */
  accept(socket: net.Socket, listener: string, log: TransportLog): net.Socket {
    const wrapped = new tls.TLSSocket(socket, this.#server) as TlsSock;
    wrapped[kPeer] = listener;
    wrapped[kState] = HANDSHAKING;
    wrapped[kLog] = log;
    wrapped[kRemote] = [socket.remoteAddress, socket.remotePort];
    wrapped.once('secure', onSecure);
    wrapped.once('error', onAcceptError);
    return wrapped;
  }
}

function onTcpConnect(this: TlsSock): void {
  if (this[kState] === CONNECTING) this[kState] = HANDSHAKING;
}

function onSecure(this: TlsSock): void {
  this[kState] = SECURE;
}

/** A dialled socket's emit: an 'end' before TLS is up becomes the TLS failure (see the header). */
function emitDialled(this: TlsSock, event: string | symbol, ...args: unknown[]): boolean {
  if (event === 'end' && this[kState] === HANDSHAKING) {
    const err: NodeJS.ErrnoException = new Error('the listener closed the connection');
    this.destroy(err);
    return false;
  }
  return (tls.TLSSocket.prototype.emit as (this: Tls.TLSSocket, event: string | symbol, ...a: unknown[]) => boolean).call(this, event, ...args);
}

function onDialError(this: TlsSock, err: NodeJS.ErrnoException): void {
  // Before TCP connected the errno stays (a refused connect is retried); after TLS is up it is the connection's.
  if (this[kState] !== HANDSHAKING) return;
  err.message = jobTlsFailure(this[kPeer], err);
  err.code = TLS_FAILURE_CODE;
}

function onAcceptError(this: TlsSock, err: Error): void {
  if (this[kState] !== HANDSHAKING) return;
  this[kLog]?.warn(
    { listener: this[kPeer], remoteAddress: this[kRemote]?.[0], remotePort: this[kRemote]?.[1], reason: err.message.split('\n')[0] },
    'refused a connection that failed the TLS handshake (not this job\'s key nor a coupled job\'s pair key, or not --secure)',
  );
}
