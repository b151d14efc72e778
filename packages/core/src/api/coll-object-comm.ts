/**
 * The object half of Comm's collectives (API.md "Comm"): every collective in
 * the object form (any msgpack value; numbers, bigints or typed arrays for
 * reductions), and the machinery every collective form shares.
 *
 * Each call checks its arguments here, once, before anything changes
 * (STYLE.md rule 19), then takes a fresh tag on the communicator's
 * collective context (CommCollPt2pt: collective traffic never matches user
 * point-to-point) and runs one coll/ algorithm. The blocking form awaits that
 * promise; the nonblocking form wraps the same promise in a Request (STYLE.md
 * rule 40); the persistent form (MPI 4.0 …Init) takes its tag at init and runs
 * the same checked body again at every start(). coll-comm.ts (buffer forms)
 * and neighbor-comm.ts (neighborhood collectives) use the same three.
 */
import {
  allgatherBytes, allreduceObjects, alltoallBytes, barrier as collBarrier, bcastBytes, exscanObjects, gatherBytes, reduceObjects,
  promisePlan, scanObjects, scatterBytes, signatureOf, type CollPlan, type Codec, type ObjectOp,
} from '../coll/index.ts';
import { applyUserOpValues, reduceValues } from '../datatype/index.ts';
import { ERR_ARG, ERR_OTHER, ERR_ROOT, MPIError, callSite, collTag, decodeObject, encodeObject, mpiError } from '../util/index.ts';
import { IN_PLACE } from './constants.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { checkOpArg, type Op } from './op.ts';
import { Pt2ptModesComm } from './pt2pt-modes.ts';
import { Request } from './request.ts';
import { runtime, runtimeOrNull } from '../runtime/index.ts';
import { describe, typeHandleOf } from './buffer.ts';

/** The body of one collective call, once its arguments are checked: runs on a point-to-point view with a tag. */
export type CollRun<T = void> = (pt: CommCollPt2pt, tag: number) => Promise<T>;

/** A persistent collective's plan maker (coll/plan.ts): called once, at init, with the request's view and tag. */
export type CommPlanner = (pt: CommCollPt2pt, tag: number) => CollPlan;

/** The codec of each object collective, by call: its decoder's error names the call. */
const CODECS = new Map<string, Codec<any>>();

/**
 * How the object collective `call` moves values. A message of a different collective call is
 * refused before it gets here, by the signature in its tag (coll/signature.ts); one that still
 * does not decode came from a call the signature cannot tell apart (a communicator constructor's
 * messages, kind 0), so the error says that instead of msgpackr's decoder message.
 */
export function codecOf(call: string): Codec<any> {
  let codec = CODECS.get(call);
  if (codec === undefined) {
    codec = {
      encode: (v) => encodeObject(v, call).slice(),
      decode: (b) => {
        try {
          return decodeObject(b, call);
        } catch (e) {
          // A value the codec refused (a class this rank did not register) says so itself.
          if (e instanceof MPIError) throw e;
          // msgpackr's own message ("Unexpected end of MessagePack data") would only mislead.
          throw mpiError(ERR_OTHER, call, `a message of this ${call} is not one of its values: the ranks made different collective calls (every rank must make the same ones, in the same order)`);
        }
      },
    };
    CODECS.set(call, codec);
  }
  return codec;
}

/** An Op as the object collectives see it (intracommunicators' and intercommunicators'). */
export function objectOp(op: Op, call: string): ObjectOp<any> {
  checkOpArg(op, call);
  const fn = op._fn;
  if (fn !== null) return { combine: (a, b) => applyUserOpValues(fn, a, b, call), commute: op._commute };
  const code = op._code;
  return { combine: (a, b) => reduceValues(code, a, b, call), commute: true };
}

export class ObjectCollComm extends Pt2ptModesComm {
  /** @internal Checks the caller and a root argument. @throws MPIError(ERR_ROOT) outside 0..size-1 */
  _root(root: number, call: string): void {
    this._me(call);
    if (!Number.isInteger(root) || root < 0 || root >= this.size) {
      throw mpiError(ERR_ROOT, call, `root ${String(root)} is out of range for ${this.name} (size ${this.size}): expected 0..${this.size - 1}`);
    }
  }

  /**
   * @internal Starts one collective: a fresh tag on the collective context, then `body` (the coll/
   * algorithm). The tag carries the call's signature (kind, form, `root`: coll/signature.ts), so a
   * rank that receives another collective's message names both calls (issue 39).
   */
  _collStart<T>(call: string, body: CollRun<T>, root = -1): Promise<T> {
    const pt = new CommCollPt2pt(this, call, root);
    const tag = collTag(this._collSeq++, signatureOf(call, root));
    return body(pt, tag);
  }

  /** @internal The blocking form: awaits the collective, recorded for the roll-call. */
  async _collBlocking<T>(call: string, started: Promise<T>): Promise<T> {
    // Null only in a program that finalized while this call was in flight: nothing to record then.
    const blocked = runtimeOrNull()?.blocked ?? null;
    blocked?.enter(call, this.name, null, null, this._ctx);
    try {
      return await started;
    } catch (e) {
      // An error made by a stage that a message resumed names no frame of the user's: this await's does.
      callSite(e, this._collBlocking);
      throw e;
    } finally {
      blocked?.leave();
    }
  }

  /**
   * @internal The nonblocking form: a request over the started collective. It references this communicator,
   * the datatype of `buf` (a checked BufSpec; IN_PLACE or null: none) and `op` until it completes.
   */
  _collNonblocking(call: string, started: Promise<void>, buf: unknown = null, op: Op | null = null): Request<void> {
    const lt = runtime(call).device.lifetime;
    const type = buf === null || buf === IN_PLACE || !(lt.countsPredefined || Array.isArray(buf)) ? 0 : typeHandleOf(buf, lt.countsPredefined);
    return Request._fromPromise(started, this, call, type, op === null ? 0 : op._handle);
  }

  /**
   * @internal The persistent form (MPI 4.0 …Init) of a checked collective body: the request's
   * every start() runs `run` again with the point-to-point view and the tag taken here
   * (_collPersistentPlan with coll/'s promisePlan).
   */
  _collPersistent(call: string, run: CollRun, buf: unknown, op: Op | null = null, root = -1): Request<void> {
    return this._collPersistentPlan(call, (pt, tag) => promisePlan(() => run(pt, tag)), buf, op, root);
  }

  /**
   * @internal The persistent form of a collective planned at init (coll/plan.ts): `planner` makes
   * the plan once, on the point-to-point view and the tag taken here, and every start() runs it.
   * Init is collective and ordered like any collective, so its sequence number is the same on
   * every rank; a persistent request cannot start again before it completes, and one tag per pair
   * keeps the runs apart by MPI's non-overtaking order.
   */
  _collPersistentPlan(call: string, planner: CommPlanner, buf: unknown, op: Op | null = null, root = -1): Request<void> {
    const pt = new CommCollPt2pt(this, call, root);
    const tag = collTag(this._collSeq++, signatureOf(call, root));
    return Request._persistentFromPlan(this, call, buf, planner(pt, tag), op === null ? 0 : op._handle);
  }

  // --- object form -----------------------------------------------------------

  /** Blocks until every rank has called barrier. */
  barrier(): Promise<void> {
    return this._collBlocking('barrier', this._collStart('barrier', (pt, tag) => collBarrier(pt, tag)));
  }

  /** Nonblocking barrier. @example const r = comm.ibarrier(); while (!r.test()) await work(); */
  ibarrier(): Request<void> {
    return this._collNonblocking('ibarrier', this._collStart('ibarrier', (pt, tag) => collBarrier(pt, tag)));
  }

  /** Broadcasts root's value; every rank resolves to it. @throws MPIError(ERR_ROOT) for a bad root. */
  bcast<T>(value: T, root = 0): Promise<T> {
    this._root(root, 'bcast');
    return this._collBlocking('bcast', this._collStart('bcast', async (pt, tag) => {
      const mine = pt.rank === root ? codecOf('bcast').encode(value) : null;
      const bytes = await bcastBytes(pt, tag, mine, root);
      return pt.rank === root ? value : (codecOf('bcast').decode(bytes) as T);
    }, root));
  }

  /** Reduces values (numbers, bigints, typed arrays element-wise) to root; undefined elsewhere. */
  reduce<T>(value: T, op: Op, root = 0): Promise<T | undefined> {
    this._root(root, 'reduce');
    const o = objectOp(op, 'reduce');
    return this._collBlocking('reduce', this._collStart('reduce', (pt, tag) => reduceObjects(pt, tag, value, o, codecOf('reduce'), root), root));
  }

  /** Reduces values; every rank resolves to the result. */
  allreduce<T>(value: T, op: Op): Promise<T> {
    const o = objectOp(op, 'allreduce');
    return this._collBlocking('allreduce', this._collStart('allreduce', (pt, tag) => allreduceObjects(pt, tag, value, o, codecOf('allreduce'))));
  }

  /** Inclusive prefix reduction: rank r resolves to v0 op ... op vr. */
  scan<T>(value: T, op: Op): Promise<T> {
    const o = objectOp(op, 'scan');
    return this._collBlocking('scan', this._collStart('scan', (pt, tag) => scanObjects(pt, tag, value, o, codecOf('scan'))));
  }

  /** Exclusive prefix reduction: rank r > 0 resolves to v0 op ... op v(r-1); rank 0 to undefined. */
  exscan<T>(value: T, op: Op): Promise<T | undefined> {
    const o = objectOp(op, 'exscan');
    return this._collBlocking('exscan', this._collStart('exscan', (pt, tag) => exscanObjects(pt, tag, value, o, codecOf('exscan'))));
  }

  /** Gathers every rank's value to root, by rank; undefined elsewhere. */
  gather<T>(value: T, root = 0): Promise<T[] | undefined> {
    this._root(root, 'gather');
    return this._collBlocking('gather', this._collStart('gather', async (pt, tag) => {
      const all = await gatherBytes(pt, tag, codecOf('gather').encode(value), root);
      if (all === undefined) return undefined;
      return all.map((b, i) => (i === pt.rank ? value : (codecOf('gather').decode(b) as T)));
    }, root));
  }

  /** Scatters values[i] from root to rank i. @throws MPIError(ERR_ARG) at the root when values is not an array of `size` entries. */
  scatter<T>(values: T[] | undefined, root = 0): Promise<T> {
    this._root(root, 'scatter');
    const isRoot = this.rank === root;
    if (isRoot && (!Array.isArray(values) || values.length !== this.size)) {
      throw mpiError(ERR_ARG, 'scatter', `values is ${describe(values)}: expected an array of ${this.size} values (one per rank) at the root`);
    }
    return this._collBlocking('scatter', this._collStart('scatter', async (pt, tag) => {
      const datas = isRoot ? values!.map((v) => codecOf('scatter').encode(v)) : undefined;
      const mine = await scatterBytes(pt, tag, datas, root);
      return isRoot ? values![root]! : (codecOf('scatter').decode(mine) as T);
    }, root));
  }

  /** Every rank resolves to every rank's value, by rank. */
  allgather<T>(value: T): Promise<T[]> {
    return this._collBlocking('allgather', this._collStart('allgather', async (pt, tag) => {
      const all = await allgatherBytes(pt, tag, codecOf('allgather').encode(value));
      return all.map((b, i) => (i === pt.rank ? value : (codecOf('allgather').decode(b) as T)));
    }));
  }

  /** Sends values[j] to rank j; resolves what each rank sent to this one, by rank. @throws MPIError(ERR_ARG) unless values has `size` entries. */
  alltoall<T>(values: T[]): Promise<T[]> {
    if (!Array.isArray(values) || values.length !== this.size) {
      throw mpiError(ERR_ARG, 'alltoall', `values is ${describe(values)}: expected an array of ${this.size} values (one per rank)`);
    }
    return this._collBlocking('alltoall', this._collStart('alltoall', async (pt, tag) => {
      const got = await alltoallBytes(pt, tag, values.map((v) => codecOf('alltoall').encode(v)));
      return got.map((b, i) => (i === pt.rank ? values[i]! : (codecOf('alltoall').decode(b) as T)));
    }));
  }
}
