/**
 * @tsmpi/transport-tcp: the multichannel TCP transport. Core loads it by name
 * (`await import('@tsmpi/transport-tcp')`) and calls createTransport(options);
 * the contract is @tsmpi/core/transport (interface.ts).
 */
import type { TransportFactory } from '@tsmpi/core/transport';
import { TcpTransport } from './tcp-transport.ts';
import { DEFAULT_TUNING } from './tuning.ts';

/** Creates a TCP transport instance with the default tuning (tuning.ts). */
export const createTransport: TransportFactory = (options) => new TcpTransport(options, DEFAULT_TUNING);

export { TcpTransport } from './tcp-transport.ts';
export { DEFAULT_TUNING } from './tuning.ts';
export type { TcpTuning } from './tuning.ts';
export { listenInRange } from './listen-port.ts';
/** Endpoint readers' same-host names (core's ReaderSocketName, docs/adr/0019); the launcher's clean-up of the job's same-host directory (docs/adr/0029). */
export { claimSameHostDirectory, readerSocketName, removeSameHostDirectory, removeSameHostSockets, sweepStaleSameHostDirectories } from './same-host.ts';
