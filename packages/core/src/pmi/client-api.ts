/**
 * What an MPI process needs from the launcher's wire-up service (a PMI, in
 * MPICH words). The implementation (client.ts) speaks the protocol of
 * protocol.ts over WebSocket to packages/launcher.
 *
 * Threads: created and used only by the process's main thread.
 */
import type { DynOp } from './protocol.ts';

/** Where a rank is blocked, for the launcher's --timeout roll-call. null: not in MPI. */
export interface BlockedIn {
  readonly call: string;
  readonly comm: string;
  readonly peer: number | null;
  readonly tag: number | null;
  /**
   * How many blocking calls the thread has entered so far (wrapping at 2^31): two roll-calls that find
   * the same call with the same count saw no call return in between (mpiexec's deadlock hint).
   */
  readonly calls?: number;
  /** in a multithreaded process: the other MPI threads that are blocked */
  readonly threads?: readonly { readonly thread: number; readonly call: string; readonly comm: string; readonly peer: number | null; readonly tag: number | null; readonly calls?: number }[];
}

/** Per-rank counts reported at finalize, for --report-json. */
export interface FinalizeReport {
  readonly messagesSent: number;
  readonly messagesReceived: number;
  readonly bytesSent: number;
  readonly bytesReceived: number;
}

/** A process's counters for mpiexec --dashboard's samples: its totals (MPI.stats()) and COMM_WORLD's collectives. */
export interface RankCounters extends FinalizeReport {
  /** collective calls the main thread started on COMM_WORLD (comm.stats().collectives) */
  readonly collectives: number;
  /** frames sent and received per channel (MPI.stats().perChannel), when this thread hosts the channels */
  readonly channels?: readonly { readonly sent: number; readonly received: number }[];
  /**
   * Bytes the main thread's transport wrote to each process so far, as [process, bytes] pairs (the
   * traffic matrix's row): in a sample only the pairs that changed since the previous sample
   * (counter-deltas.ts); mpiexec keeps the others.
   */
  readonly peerBytes?: readonly (readonly [number, number])[];
}

/** What the runtime reads for a sample: RankCounters with the whole per-process vector (null: no transport here). */
export interface LocalCounters extends Omit<RankCounters, 'peerBytes'> {
  readonly bytesToProcess: readonly number[] | null;
}

export interface PmiClient {
  readonly rank: number;
  readonly size: number;
  /** Publishes a value (visible to others after the next fence). */
  put(key: string, value: string): void;
  /** Collective over the job: resolves once every rank has called fence. */
  fence(): Promise<void>;
  /** A value some rank put before the last fence. Rejects if absent. */
  get(key: string): Promise<string>;
  /** Tells the launcher that MPI.init completed on this rank. */
  reportInitialized(): void;
  /** Tells the launcher that MPI.finalize completed (exiting afterwards is normal). */
  reportFinalized(report: FinalizeReport): Promise<void>;
  /** Asks the launcher to end the whole job with `code`; the launcher prints `message`. Resolves once sent. */
  abort(code: number, message: string): Promise<void>;
  /**
   * Tells the launcher that this process lost its connection to process `process`, so that a
   * failure here is reported as the consequence it is. Resolves once acknowledged.
   */
  reportPeerLost(process: number): Promise<void>;
  /**
   * mpiexec --trace: the offset (ms) to add to this process's clock (performance.timeOrigin +
   * performance.now()) for mpiexec's, from `pings` round trips (clock-offset.ts).
   */
  measureClockOffset(pings: number): Promise<number>;
  /** mpiexec --trace: hands this process's trace (trace-format.ts) to mpiexec; resolves once acknowledged. */
  sendTrace(data: Uint8Array): Promise<void>;
  /**
   * Dynamic processes (protocol.ts DYN_OPS, docs/adr/0040-dynamic-processes.md): one request to
   * mpiexec; resolves to its answer. Absent under a launcher that cannot start processes (PMI direct).
   * @throws MPIError of the class mpiexec names (ERR_SPAWN, ERR_PORT, ERR_NAME, ...), `call` in its message
   */
  dynamic?(call: string, op: DynOp, args: Readonly<Record<string, unknown>>): Promise<unknown>;
  /** The launcher's roll-call asks this on --timeout. */
  setRollCallHandler(handler: () => BlockedIn | null): void;
  /**
   * mpiexec --dashboard: what a roll-call that asks for counters gets (null: none yet, before the
   * runtime is up). Absent under a launcher that has no dashboard (PMI direct).
   */
  setCountersHandler?(handler: (() => LocalCounters | null) | null): void;
  /**
   * mpiexec says another job's process coupled at a port failed (wire-up peerFailed, docs/adr/0043):
   * `process` is this job's number for it, `why` mpiexec's sentence naming it. Absent under PMI direct.
   */
  setPeerFailedHandler?(handler: (process: number, why: string) => void): void;
  /** Called when the connection to the launcher is lost (the launcher is gone: the process should exit). */
  setLostHandler(handler: (err: Error) => void): void;
  /** Closes the connection; does not keep the event loop alive afterwards. */
  close(): Promise<void>;
}
