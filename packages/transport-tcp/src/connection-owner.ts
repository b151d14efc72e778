/**
 * What a connection (outbound ChannelConnection, accepted InboundConnection)
 * needs from the TcpTransport that owns it. Fields prefixed with `_` are hot
 * and read directly by the connections in this folder (STYLE rule 11).
 */
import type net from 'node:net';
import type { TransportError, TransportHandlers, TransportLog } from '@tsmpi/core/transport';
import type { HostPort } from './address.ts';
import type { TcpTuning } from './tuning.ts';

export interface ConnectionOwner {
  readonly _handlers: TransportHandlers;
  readonly _log: TransportLog;
  readonly _tuning: TcpTuning;
  readonly _jobKey: string;
  /** This process's index. */
  readonly _process: number;
  readonly _processCount: number;
  /** Frames received per channel (index = channel). */
  readonly _received: number[];
  /** Outbound connections are a user thread's own (TransportOptions.threadConnections): they say so in the handshake. */
  readonly _threadConnections: boolean;
  /** TransportOptions.onHoldChange: a thread connection starts (true) or stops (false) holding frames the kernel has not taken. */
  readonly _onHoldChange: ((holding: boolean) => void) | null;
  /** Largest payload a peer may send unasked (TransportOptions.maxUnsolicitedPayloadBytes). */
  readonly _maxUnsolicitedBytes: number;
  /** True once close() or destroy() was called: connections ending now are expected. */
  readonly _isClosing: boolean;
  /** The key a HELLO claiming `process` must prove: the job key, or a coupled job's pair key (docs/adr/0043). */
  _keyOf(process: number): string;
  /** The number this process says it is in a HELLO to `peer`: its own, or its number in a coupled job. */
  _helloProcess(peer: number): number;
  /** True when `process` is a coupled job's: its frames name endpoints in that job's numbering. */
  _isForeign(process: number): boolean;
  /** Endpoints per process (J). */
  readonly _endpointsPerProcess: number;
  /** True when this instance owns `channel` (accepts connections for it). */
  _isChannelOwned(channel: number): boolean;
  /** Adds `flushable` to this turn's flush list (one flush per turn for all channels). */
  _scheduleFlush(flushable: { flush(): void }): void;
  /** The peer sent GOODBYE: it is closing gracefully. */
  _peerDeparted(process: number): void;
  /** A connection to or from `process` failed or ended unexpectedly (reported once per peer). */
  _peerLost(process: number, err: TransportError): void;
  /** A new socket to `peer`'s TCP listener: plain, or TLS keyed by the job or a coupled job's pair key (TransportOptions.secure, job-tls-socket.ts). */
  _dialTcp(address: HostPort, peer: number): net.Socket;
  /** A socket this transport made or accepted has closed (close() waits for all of them). */
  _socketClosed(): void;
}
