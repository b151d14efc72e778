import { UNDEFINED } from './constants.ts';
import type { Datatype } from './datatype.ts';

/**
 * The status of a completed receive or probe. `new MPI.Status()` makes an
 * empty one to pass as an out-argument.
 */
export class Status {
  source = -1;
  tag = -1;
  error = 0;
  cancelled = false;
  /** received bytes */
  _count = 0;

  /**
   * Elements received: bytes when no datatype is given, else whole items of
   * `datatype`, or UNDEFINED if the byte count is not a whole number of items.
   * @example status.getCount(MPI.FLOAT64)
   */
  getCount(datatype?: Datatype): number {
    if (datatype === undefined) return this._count;
    return datatype._countOf(this._count, UNDEFINED);
  }

  /** @internal */
  _set(source: number, tag: number, count: number, error: number, cancelled: boolean): this {
    this.source = source;
    this.tag = tag;
    this._count = count;
    this.error = error;
    this.cancelled = cancelled;
    return this;
  }
}
