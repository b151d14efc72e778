/**
 * Split collective data access (MPI 4.0 14.4.5): `ReadAllBegin` starts the
 * collective read that `ReadAllEnd` finishes, and likewise for the
 * explicit-offset (`*AtAllBegin`) and ordered (`*OrderedBegin`) forms. The
 * begin starts the same collective access as the blocking call (in the
 * File's chain of collective accesses, so the communicator's collectives come
 * in the same order on every process); the end waits for it and returns its
 * status, so the data is exactly the blocking form's.
 *
 * MPI's rules, as MPICH (ROMIO) checks them: one split collective
 * outstanding per file handle (a second begin is ERR_IO, as ROMIO's
 * "Only one active split collective I/O operation is allowed per file
 * handle"), an end with no begin, or the end of another routine, is ERR_IO;
 * the end is given the buffer of its begin (ERR_ARG otherwise, which ROMIO
 * does not check: the data lands in the begin's buffer either way).
 */
import { ERR_ARG, ERR_IO, mpiError } from '../util/index.ts';
import { resolveBuf } from './buffer.ts';
import type { Status } from './status.ts';

/** The one split collective a File may have outstanding. */
interface Outstanding {
  readonly begin: string;
  readonly end: string;
  readonly memory: Uint8Array;
  readonly done: Promise<Status>;
}

/** The split collective state of one File (per process). */
export class SplitCollective {
  #outstanding: Outstanding | null = null;
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
  }

  /** Fails unless a begin may start now. @throws MPIError(ERR_IO) while another split collective is outstanding */
  checkBegin(call: string): void {
    const o = this.#outstanding;
    if (o !== null) {
      throw mpiError(ERR_IO, call, `${o.begin} is still outstanding on ${this.#path}: only one split collective access per file handle at a time (call ${o.end} first)`);
    }
  }

  /** Records the begun access (`start` runs the collective access; its buffer was checked by the caller). */
  begin(call: string, end: string, buf: unknown, start: () => Promise<Status>): void {
    this.checkBegin(call);
    const memory = resolveBuf(buf, call, 'buf').user;
    const done = start();
    // The end reports a failure; until then it must not count as unhandled.
    done.catch(() => undefined);
    this.#outstanding = { begin: call, end, memory, done };
  }

  /**
   * Finishes the outstanding access with `buf`, the begin's buffer; its status.
   * @throws MPIError(ERR_IO) when no split collective is outstanding or it is another routine's; ERR_ARG for another buffer
   */
  async end(call: string, buf: unknown): Promise<Status> {
    const o = this.#outstanding;
    if (o === null) throw mpiError(ERR_IO, call, `no split collective access is outstanding on ${this.#path}: call the matching Begin first`);
    if (o.end !== call) throw mpiError(ERR_IO, call, `the outstanding split collective on ${this.#path} is ${o.begin}: end it with ${o.end}`);
    const memory = resolveBuf(buf, call, 'buf').user;
    if (memory.buffer !== o.memory.buffer || memory.byteOffset !== o.memory.byteOffset) {
      throw mpiError(ERR_ARG, call, `buf is not the buffer given to ${o.begin}: the end of a split collective takes the begin's buffer`);
    }
    this.#outstanding = null;
    return o.done;
  }
}
