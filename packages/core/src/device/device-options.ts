/**
 * What a device is built from (device.ts): its options, the direct routes a thread sends on, and
 * what probe() reports. Types only, shared by the device, its engines and the API layer.
 */
import type { ReaderSocketName, TransportFactory } from '../transport/index.ts';
import type { Logger } from '../log/index.ts';
import type { RefcountStrategy } from './lifetime.ts';

/** Processes first..end-1 of the universe. */
export interface KnownProcesses {
  readonly first: number;
  readonly end: number;
}

export interface DeviceOptions {
  readonly process: number;
  readonly processCount: number;
  /**
   * Dynamic processes: the processes whose addresses this one has from init (its own world); every
   * other process of processCount (the job's universe: earlier worlds, worlds spawned since or at the
   * same time) is learned when met (addPeers). Absent: all of processCount.
   */
  readonly knownProcesses?: KnownProcesses;
  readonly endpointsPerProcess: number;
  readonly eagerLimit: number;
  readonly channels: number;
  readonly jobKey: string;
  readonly listenHost: string;
  /** Ports the transport may listen on (mpiexec --port-range). */
  readonly listenPorts?: { readonly lo: number; readonly hi: number };
  readonly transportFactory: TransportFactory | null;
  readonly log: Logger;
  /** owner id of this thread's requests (0 = main thread) */
  readonly threadId: number;
  /** channels whose transport this thread runs */
  readonly hosted: readonly number[];
  /** row of this thread in the shared statistics */
  readonly statsRow: number;
  /** how requests reference the objects they use (lifetime.ts) */
  readonly refcount: RefcountStrategy;
  /**
   * Receive lanes (docs/adr/0020-lean-common-path.md): only for the one MPI
   * thread of a process that hosts every channel, one endpoint, no other thread matching.
   */
  readonly lanes?: boolean;
  /**
   * The transport module's reader names (docs/adr/0019), given to the devices of the threads that
   * send (main and workers) in a process with a route table (endpointReceive `thread` where it
   * applies): such a device follows the routes of remote readers. Absent: it never does.
   */
  readonly readerSocketName?: ReaderSocketName;
  /** This thread may read an endpoint (readEndpoint): a worker thread's device with readerSocketName; never the main thread's. */
  readonly readsEndpoints?: boolean;
}

/** Channels a thread sends on directly, and every process's listening address for them. */
export interface DirectRoute {
  readonly channels: readonly number[];
  readonly addresses: readonly string[];
}

/** What probe() reports about a pending message. */
export interface ProbeInfo {
  sourceEndpoint: number;
  tag: number;
  count: number;
}
