/**
 * The collective layer of Comm: every collective goes through coll/ over the
 * communicator's collective context (CommCollPt2pt), with a fresh tag per call.
 * Point-to-point lives in Pt2ptComm below; management (dup, split, ...) in Comm above.
 */
import { packr } from '../device/index.ts';
import { allreduceObjects, barrier as collBarrier, bcastBytes, reduceObjects, type Codec, type ObjectOp } from '../coll/index.ts';
import { reduceValues, applyUserOpValues } from '../datatype/index.ts';
import { ERR_OP, ERR_ROOT, mpiError } from '../util/index.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { Op } from './op.ts';
import { Pt2ptComm } from './pt2pt-comm.ts';
import { Request } from './request.ts';
import { enterBlocking, leaveBlocking } from './blocked.ts';
import { describe } from './buffer.ts';

const valueCodec: Codec<any> = {
  encode: (v) => packr.pack(v).slice(),
  decode: (b) => packr.unpack(b),
};

/** An Op as the object collectives see it. */
function objectOp(op: Op, call: string): ObjectOp<any> {
  if (!(op instanceof Op)) throw mpiError(ERR_OP, call, `op is ${describe(op)}: expected an MPI.Op such as MPI.SUM`);
  if (op._freed) throw mpiError(ERR_OP, call, `op ${op.name} has been freed`);
  const fn = op._fn;
  if (fn !== null) return { combine: (a, b) => applyUserOpValues(fn, a, b, call), commute: op._commute };
  const code = op._code;
  return { combine: (a, b) => reduceValues(code, a, b, call), commute: true };
}

export class CollComm extends Pt2ptComm {
  #root(root: number, call: string): void {
    if (!Number.isInteger(root) || root < 0 || root >= this.size) {
      throw mpiError(ERR_ROOT, call, `root ${String(root)} is out of range for ${this.name} (size ${this.size}): expected 0..${this.size - 1}`);
    }
  }

  /** Runs one collective: a fresh tag, the roll-call record, the coll/ algorithm. */
  async #collective<T>(call: string, body: (pt: CommCollPt2pt, tag: number) => Promise<T>): Promise<T> {
    const pt = new CommCollPt2pt(this, call);
    const tag = this._collSeq++ & 0x3fffffff;
    enterBlocking(call, this.name, null, null);
    try {
      return await body(pt, tag);
    } finally {
      leaveBlocking();
    }
  }

  /** Blocks until every rank has called barrier. */
  barrier(): Promise<void> {
    return this.#collective('barrier', (pt, tag) => collBarrier(pt, tag));
  }

  /** Nonblocking barrier. */
  ibarrier(): Request<void> {
    const pt = new CommCollPt2pt(this, 'ibarrier');
    const tag = this._collSeq++ & 0x3fffffff;
    return Request._fromPromise(collBarrier(pt, tag), this, 'ibarrier');
  }

  /** Broadcasts root's value; every rank resolves to it. */
  bcast<T>(value: T, root = 0): Promise<T> {
    this.#root(root, 'bcast');
    return this.#collective('bcast', async (pt, tag) => {
      const mine = pt.rank === root ? valueCodec.encode(value) : null;
      const bytes = await bcastBytes(pt, tag, mine, root);
      return pt.rank === root ? value : (valueCodec.decode(bytes) as T);
    });
  }

  /** Reduces values (numbers, bigints, typed arrays element-wise) to root; undefined elsewhere. */
  reduce<T>(value: T, op: Op, root = 0): Promise<T | undefined> {
    this.#root(root, 'reduce');
    const o = objectOp(op, 'reduce');
    return this.#collective('reduce', (pt, tag) => reduceObjects(pt, tag, value, o, valueCodec, root));
  }

  /** Reduces values; every rank resolves to the result. */
  allreduce<T>(value: T, op: Op): Promise<T> {
    const o = objectOp(op, 'allreduce');
    return this.#collective('allreduce', (pt, tag) => allreduceObjects(pt, tag, value, o, valueCodec));
  }
}
