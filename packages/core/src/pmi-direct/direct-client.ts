/**
 * The wire-up client (pmi/client-api.ts PmiClient) of a process that a
 * foreign launcher started directly: MPICH's Hydra or Flux through PMI-1
 * (pmi1-client.ts), `srun --mpi=pmi2` through PMI-2 (pmi2-client.ts). The
 * launcher's key/value space replaces tsmpi's wire-up service: put() buffers,
 * fence() sends the buffered pairs and then the launcher's barrier, get()
 * asks the launcher (and remembers the answer).
 *
 * What tsmpi's own mpiexec offers beyond PMI is absent: no roll-call
 * (--timeout is the launcher's), no message counts at finalize, no
 * peer-lost acknowledgement (the launcher sees the failed process exit and
 * ends the job itself). Keys are prefixed `tsmpi.`; values are made wire-safe
 * by kvs-value.ts.
 */
import { writeSync } from 'node:fs';
import { ERR_OTHER, mpiError } from '../util/index.ts';
import type { BlockedIn, FinalizeReport, PmiClient } from '../pmi/index.ts';
import type { PmiConnection } from './pmi-connection.ts';
import { decodeKvsValue, encodeKvsValue } from './kvs-value.ts';

/** How long an abort's line on stderr is given to reach the launcher before the abort itself (abort()). */
const ABORT_OUTPUT_GRACE_MS = 200;

/** What init learns from the launcher. */
export interface PmiIdentity {
  readonly rank: number;
  readonly size: number;
  /** PMI_process_mapping as the launcher gives it; null when it does not. */
  readonly mapping: string | null;
}

/** The commands of one PMI version, on its connection. */
export interface PmiDialect {
  readonly version: 1 | 2;
  readonly connection: PmiConnection;
  /** Longest value the server stores. */
  readonly maxValueBytes: number;
  put(key: string, value: string): Promise<void>;
  barrier(): Promise<void>;
  /** The raw value, or null when no process put `key`. */
  get(key: string): Promise<string | null>;
  finalize(): Promise<void>;
  abort(code: number, message: string): Promise<void>;
}

/** Prefix of every key tsmpi puts, apart from any other library's in the same space. */
const KEY_PREFIX = 'tsmpi.';

export class DirectPmiClient implements PmiClient {
  #puts: [string, string][] = [];
  readonly #kv = new Map<string, string>();
  #isFencing = false;

  readonly rank: number;
  readonly size: number;
  readonly dialect: PmiDialect;

  constructor(rank: number, size: number, dialect: PmiDialect) {
    this.rank = rank;
    this.size = size;
    this.dialect = dialect;
  }

  put(key: string, value: string): void {
    this.#puts.push([key, value]);
  }

  async fence(): Promise<void> {
    if (this.#isFencing) throw mpiError(ERR_OTHER, 'pmi.fence', 'a fence is already in progress');
    this.#isFencing = true;
    try {
      const puts = this.#puts;
      this.#puts = [];
      for (const [key, value] of puts) {
        const encoded = encodeKvsValue(value);
        if (encoded.length > this.dialect.maxValueBytes) {
          throw mpiError(ERR_OTHER, 'pmi.fence', `the value of ${key} takes ${encoded.length} bytes, more than the ${this.dialect.maxValueBytes} the PMI-${this.dialect.version} server stores`);
        }
        await this.dialect.put(KEY_PREFIX + key, encoded);
      }
      await this.dialect.barrier();
    } finally {
      this.#isFencing = false;
    }
  }

  async get(key: string): Promise<string> {
    const local = this.#kv.get(key);
    if (local !== undefined) return local;
    const raw = await this.dialect.get(KEY_PREFIX + key);
    if (raw === null) throw mpiError(ERR_OTHER, 'pmi.get', `no value was put for key "${key}" before the last fence`);
    const value = decodeKvsValue(raw);
    if (value === null) throw mpiError(ERR_OTHER, 'pmi.get', `the PMI server returned a value for "${key}" that tsmpi did not write`);
    this.#kv.set(key, value);
    return value;
  }

  reportInitialized(): void {
    // PMI has no such notice: the launcher learns nothing until finalize.
  }

  async reportFinalized(_report: FinalizeReport): Promise<void> {
    await this.dialect.finalize();
  }

  /**
   * The message goes to stderr first, synchronously: the launcher kills every process as soon
   * as the abort arrives, this one included, and PMI-1 carries no message. Then the thread
   * waits ABORT_OUTPUT_GRACE_MS before the abort goes: the line is only in the pipe to the
   * launcher's proxy, and Hydra, once it has the abort, kills the job and exits without
   * forwarding what its proxy has not yet read (CI saw the line lost once). MPI.abort ends the
   * process right after, so nothing else waits on this thread.
   */
  abort(code: number, message: string): Promise<void> {
    try {
      writeSync(2, `tsmpi: rank ${this.rank}: ${message}: the launcher ends the job (exit code ${code})\n`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ABORT_OUTPUT_GRACE_MS);
    } catch {
      // stderr closed: the abort still goes
    }
    return this.dialect.abort(code, message);
  }

  reportPeerLost(_process: number): Promise<void> {
    // The launcher sees the lost process end and ends the job: nothing to acknowledge.
    return Promise.resolve();
  }

  setRollCallHandler(_handler: () => BlockedIn | null): void {
    // No roll-call under a foreign launcher.
  }

  /** No --trace under a foreign launcher (it is mpiexec's option): the clocks are taken as they are. */
  measureClockOffset(_pings: number): Promise<number> {
    return Promise.resolve(0);
  }

  /** No --trace under a foreign launcher: nothing to hand the trace to. */
  sendTrace(_data: Uint8Array): Promise<void> {
    return Promise.resolve();
  }

  setLostHandler(handler: (err: Error) => void): void {
    this.dialect.connection.setLostHandler(handler);
  }

  close(): Promise<void> {
    return this.dialect.connection.close();
  }
}
