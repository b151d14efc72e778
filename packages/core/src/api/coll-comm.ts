/**
 * The buffer half of Comm's collectives (API.md "Comm: collectives" and
 * "All collectives, in every form"): every buffer collective of MPI 4.0 in
 * three forms over one checked body (coll-runs.ts): blocking (`Allreduce`,
 * resolves when done), nonblocking (`Iallreduce`, a Request; usable from any
 * thread, overlapping other collectives started in the same order on every
 * rank) and persistent (`AllreduceInit`, MPI 4.0: a Request that start()
 * runs again, as often as wanted, with the buffers' contents of that moment;
 * wait() after each start, free() at the end). The …Init call is collective
 * and ordered like any collective; starts of different persistent requests
 * need no order among themselves or with other collectives (each request
 * has its own tag).
 *
 * This layer checks arguments (coll-runs.ts) and delegates: the lean small
 * allreduce's start is coll/lean-allreduce.ts, its op check is here.
 */
import {
  LeanAllreduce, LEAN_ALLREDUCE_MAX_BYTES, allreduce as collAllreduce, planAllreduce, barrier as collBarrier, exscan as collExscan, scan as collScan, type BlockingWait,
  type ByteOp,
} from '../coll/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { datatypeOfView } from './datatype.ts';
import { IN_PLACE } from './constants.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { ObjectCollComm, type CollRun } from './coll-object-comm.ts';
import {
  allgatherRun, allgathervRun, alltoallRun, alltoallvRun, alltoallwRun, bcastRun, gatherRun, gathervRun, reduceRun, reduceScatterBlockRun,
  reduceScatterRun, scatterRun, scattervRun, vBase, vectorPlan, vectorRun, type VBufSpec,
} from './coll-runs.ts';
import { byteOpOf, Op } from './op.ts';
import type { Request } from './request.ts';
import type { BufSpec, WBufSpec } from './buffer.ts';

export type { VBufSpec } from './coll-runs.ts';

type InPlace = typeof IN_PLACE;

/**
 * The lean small allreduce's op check (docs/adr/0022-small-collectives-lean.md): the
 * byte ops of the predefined ops already checked on a plain typed array, by the array's
 * constructor and the op's code, so that a repeated call skips resolveBuf and byteOpOf.
 */
const LEAN_BYTE_OPS = new Map<Function, (ByteOp | undefined)[]>();

/**
 * The lean Allreduce's wait (coll/lean-allreduce.ts BlockingWait): what _collBlocking records around
 * a blocking collective (the roll-call, and the poll loop it starts), without its async frame. Null
 * runtime only in a program that finalized while the call was in flight: nothing to record then.
 */
class LeanAllreduceWait implements BlockingWait {
  readonly #comm: CollComm;

  constructor(comm: CollComm) {
    this.#comm = comm;
  }

  enter(): void {
    const comm = this.#comm;
    runtimeOrNull()?.blocked.enter('Allreduce', comm.name, null, null, comm._ctx);
  }

  leave(): void {
    runtimeOrNull()?.blocked.leave();
  }
}

/** A plain typed array (not a DataView): its bytes are the packed vector of a predefined datatype. */
function isTypedArray(x: unknown): x is ArrayBufferView {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

/** The buffer a request references for its datatype: sendbuf, or recvbuf when sendbuf is IN_PLACE. */
function sendOr(sendbuf: unknown, recvbuf: unknown): unknown {
  return sendbuf === IN_PLACE ? recvbuf : sendbuf;
}

export class CollComm extends ObjectCollComm {
  /** `root`: the collective's root (-1: none), which its tag's signature carries (coll/signature.ts). */
  #blocking(call: string, run: CollRun, root = -1): Promise<void> {
    return this._collBlocking(call, this._collStart(call, run, root));
  }
  #nonblocking(call: string, run: CollRun, buf: unknown, op: Op | null = null, root = -1): Request<void> {
    return this._collNonblocking(call, this._collStart(call, run, root), buf, op);
  }

  /** Nonblocking barrier (the buffer-form spelling of ibarrier). */
  Ibarrier(): Request<void> {
    return this._collNonblocking('Ibarrier', this._collStart('Ibarrier', (pt, tag) => collBarrier(pt, tag)));
  }
  /** Persistent barrier (MPI 4.0): start(), then wait(), as often as wanted. @example const b = comm.BarrierInit(); b.start(); await b.wait(); */
  BarrierInit(): Request<void> {
    this._me('BarrierInit');
    return this._collPersistent('BarrierInit', (pt, tag) => collBarrier(pt, tag), null);
  }

  /**
   * Broadcasts root's buffer into every rank's buffer (same size everywhere).
   * @throws MPIError(ERR_ROOT) for a bad root; ERR_BUFFER / ERR_TYPE / ERR_COUNT for a bad buffer.
   * @example await comm.Bcast(params, 0);
   */
  Bcast(buf: BufSpec, root = 0): Promise<void> {
    return this.#blocking('Bcast', bcastRun(this, buf, root, 'Bcast'), root);
  }
  /** Nonblocking Bcast. */
  Ibcast(buf: BufSpec, root = 0): Request<void> {
    return this.#nonblocking('Ibcast', bcastRun(this, buf, root, 'Ibcast'), buf, null, root);
  }
  /** Persistent Bcast. */
  BcastInit(buf: BufSpec, root = 0): Request<void> {
    return this._collPersistent('BcastInit', bcastRun(this, buf, root, 'BcastInit'), buf, null, root);
  }

  /**
   * Reduces every rank's sendbuf into root's recvbuf (null elsewhere). IN_PLACE at the root: its input is in recvbuf.
   * @throws MPIError(ERR_OP) when op is not defined on the datatype; ERR_ROOT, ERR_COUNT, ERR_BUFFER, ERR_TYPE for bad arguments.
   * @example await comm.Reduce(local, comm.rank === 0 ? total : null, MPI.SUM, 0);
   */
  Reduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Promise<void> {
    return this.#blocking('Reduce', reduceRun(this, sendbuf, recvbuf, op, root, 'Reduce'), root);
  }
  /** Nonblocking Reduce. */
  Ireduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Request<void> {
    return this.#nonblocking('Ireduce', reduceRun(this, sendbuf, recvbuf, op, root, 'Ireduce'), sendOr(sendbuf, recvbuf), op, root);
  }
  /** Persistent Reduce. */
  ReduceInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Request<void> {
    return this._collPersistent('ReduceInit', reduceRun(this, sendbuf, recvbuf, op, root, 'ReduceInit'), sendOr(sendbuf, recvbuf), op, root);
  }

  /**
   * Reduces every rank's sendbuf; the result lands in every rank's recvbuf. IN_PLACE: the input is in recvbuf.
   * Non-commutative ops are applied in rank order.
   * @throws MPIError(ERR_OP) when op is not defined on the datatype; ERR_COUNT when the buffers differ in size.
   * @example await comm.Allreduce(MPI.IN_PLACE, grad, MPI.SUM);
   */
  Allreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    const lean = this.#leanAllreduce(sendbuf, recvbuf, op, 'Allreduce');
    // LEAN_DONE (finished within the call: nothing to wait for), or the call's own promise, whose wait
    // the lean path records itself (LeanAllreduceWait): no async frame of _collBlocking around it.
    if (lean !== null) return lean;
    return this._collBlocking('Allreduce', this._collStart('Allreduce', vectorRun(this, sendbuf, recvbuf, op, 'Allreduce', collAllreduce, false)));
  }
  /** Nonblocking Allreduce. */
  Iallreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    const lean = this.#leanAllreduce(sendbuf, recvbuf, op, 'Iallreduce');
    return this._collNonblocking('Iallreduce', lean ?? this._collStart('Iallreduce', vectorRun(this, sendbuf, recvbuf, op, 'Iallreduce', collAllreduce, false)), recvbuf, op);
  }
  /**
   * Persistent Allreduce: the buffers, the op on their datatype and the point-to-point view are
   * resolved once here; each start() runs the algorithm on the buffers' current contents.
   * @example const r = comm.AllreduceInit(x, sum, MPI.SUM); for (...) { r.start(); await r.wait(); } r.free();
   */
  AllreduceInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    // Contiguous buffers (what a persistent request starts again and again): coll/ plans the run once, here.
    return this._collPersistentPlan('AllreduceInit', vectorPlan(this, sendbuf, recvbuf, op, 'AllreduceInit', collAllreduce, planAllreduce), recvbuf, op);
  }

  #lean: LeanAllreduce | null = null;

  /**
   * The lean small allreduce (docs/adr/0022-small-collectives-lean.md):
   * on a predefined communicator, a predefined op on plain typed arrays of one kind and length
   * (or IN_PLACE) of at most LEAN_ALLREDUCE_MAX_BYTES starts the same algorithm as vectorRun with the same
   * checks, but from the state of the communicator's previous call (its point-to-point view, its
   * sequence cell) and an op checked once per array kind: no resolveBuf, byteOpOf or per-call
   * objects. Null, having done nothing, for anything else: the caller takes vectorRun, which also
   * throws the MPIError of a bad argument.
   */
  #leanAllreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: 'Allreduce' | 'Iallreduce'): Promise<void> | null {
    if (!this._predefined || !(op instanceof Op) || op._fn !== null || !isTypedArray(recvbuf)) return null;
    const bytes = recvbuf.byteLength;
    if (bytes > LEAN_ALLREDUCE_MAX_BYTES) return null;
    const sendIsView = sendbuf !== IN_PLACE;
    if (sendIsView && !(isTypedArray(sendbuf) && sendbuf.constructor === recvbuf.constructor && sendbuf.byteLength === bytes)) return null;
    let lean = this.#lean;
    if (lean === null) {
      this._me(call);
      const seq = this._collSeqCell();
      lean = new LeanAllreduce(new CommCollPt2pt(this, 'Allreduce'), new CommCollPt2pt(this, 'Iallreduce'), seq.cells, seq.index, new LeanAllreduceWait(this));
      this.#lean = lean;
    }
    // The checks of vectorRun, in its order: the communicator and the caller, then the op on the datatype.
    this._me(call);
    let ops = LEAN_BYTE_OPS.get(recvbuf.constructor);
    if (ops === undefined) {
      ops = [];
      LEAN_BYTE_OPS.set(recvbuf.constructor, ops);
    }
    let bop = ops[op._code];
    if (bop === undefined) {
      bop = byteOpOf(op, datatypeOfView(recvbuf), bytes, call);
      ops[op._code] = bop;
    }
    // MINLOC and MAXLOC take whole (value, index) pairs: byteOpOf throws for an odd count.
    if (bytes % bop.itemBytes !== 0) return null;
    return lean.start(call === 'Allreduce', sendIsView ? sendbuf : null, recvbuf, bytes, bop);
  }

  /** Inclusive prefix reduction: rank r's recvbuf = x0 op ... op xr. IN_PLACE: the input is in recvbuf. */
  Scan(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('Scan', vectorRun(this, sendbuf, recvbuf, op, 'Scan', collScan, false));
  }
  /** Nonblocking Scan. */
  Iscan(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#nonblocking('Iscan', vectorRun(this, sendbuf, recvbuf, op, 'Iscan', collScan, false), recvbuf, op);
  }
  /** Persistent Scan. */
  ScanInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this._collPersistent('ScanInit', vectorRun(this, sendbuf, recvbuf, op, 'ScanInit', collScan, false), recvbuf, op);
  }

  /** Exclusive prefix reduction: rank r > 0 gets x0 op ... op x(r-1); rank 0's recvbuf is left as it was. IN_PLACE allowed. */
  Exscan(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('Exscan', vectorRun(this, sendbuf, recvbuf, op, 'Exscan', collExscan, true));
  }
  /** Nonblocking Exscan. */
  Iexscan(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#nonblocking('Iexscan', vectorRun(this, sendbuf, recvbuf, op, 'Iexscan', collExscan, true), recvbuf, op);
  }
  /** Persistent Exscan. */
  ExscanInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this._collPersistent('ExscanInit', vectorRun(this, sendbuf, recvbuf, op, 'ExscanInit', collExscan, true), recvbuf, op);
  }

  /**
   * Reduces the blocks of every rank's sendbuf; rank i gets block i (recvcounts[i] items, the blocks
   * back to back in rank order) in its recvbuf. IN_PLACE: recvbuf holds every block and gets the
   * result in its first recvcounts[rank] items. recvcounts is the same on every rank.
   * @throws MPIError(ERR_COUNT) for bad recvcounts or buffers too small for them; ERR_OP for a bad (op, datatype) pair.
   * @example await comm.ReduceScatter(grads, myShard, counts, MPI.SUM);
   */
  ReduceScatter(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op): Promise<void> {
    return this.#blocking('ReduceScatter', reduceScatterRun(this, sendbuf, recvbuf, recvcounts, op, 'ReduceScatter'));
  }
  /** Nonblocking ReduceScatter. */
  IreduceScatter(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op): Request<void> {
    return this.#nonblocking('IreduceScatter', reduceScatterRun(this, sendbuf, recvbuf, recvcounts, op, 'IreduceScatter'), recvbuf, op);
  }
  /** Persistent ReduceScatter. */
  ReduceScatterInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, recvcounts: number[], op: Op): Request<void> {
    return this._collPersistent('ReduceScatterInit', reduceScatterRun(this, sendbuf, recvbuf, recvcounts, op, 'ReduceScatterInit'), recvbuf, op);
  }

  /**
   * Reduces `size` blocks element-wise over all ranks; rank i gets block i in recvbuf.
   * sendbuf holds size blocks of recvbuf's size; IN_PLACE: recvbuf holds the size blocks and gets the result in its first block.
   * @throws MPIError(ERR_COUNT) when the sizes do not fit; ERR_OP for a bad (op, datatype) pair.
   */
  ReduceScatterBlock(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('ReduceScatterBlock', reduceScatterBlockRun(this, sendbuf, recvbuf, op, 'ReduceScatterBlock'));
  }
  /** Nonblocking ReduceScatterBlock. */
  IreduceScatterBlock(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this.#nonblocking('IreduceScatterBlock', reduceScatterBlockRun(this, sendbuf, recvbuf, op, 'IreduceScatterBlock'), recvbuf, op);
  }
  /** Persistent ReduceScatterBlock. */
  ReduceScatterBlockInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    return this._collPersistent('ReduceScatterBlockInit', reduceScatterBlockRun(this, sendbuf, recvbuf, op, 'ReduceScatterBlockInit'), recvbuf, op);
  }

  /**
   * Gathers equal blocks to root: block i of root's recvbuf (size blocks) is rank i's sendbuf. IN_PLACE at the root.
   * @example await comm.Gather(mine, comm.rank === 0 ? all : null, 0);
   */
  Gather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Promise<void> {
    return this.#blocking('Gather', gatherRun(this, sendbuf, recvbuf, root, 'Gather'), root);
  }
  /** Nonblocking Gather. */
  Igather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Request<void> {
    return this.#nonblocking('Igather', gatherRun(this, sendbuf, recvbuf, root, 'Igather'), sendOr(sendbuf, recvbuf), null, root);
  }
  /** Persistent Gather. */
  GatherInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Request<void> {
    return this._collPersistent('GatherInit', gatherRun(this, sendbuf, recvbuf, root, 'GatherInit'), sendOr(sendbuf, recvbuf), null, root);
  }

  /**
   * Gathers blocks of varying size to root: rank i's sendbuf lands at displs[i] (items) with counts[i] items.
   * IN_PLACE at the root (its block is already in place).
   */
  Gatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Promise<void> {
    return this.#blocking('Gatherv', gathervRun(this, sendbuf, recvbuf, root, 'Gatherv'), root);
  }
  /** Nonblocking Gatherv. */
  Igatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Request<void> {
    return this.#nonblocking('Igatherv', gathervRun(this, sendbuf, recvbuf, root, 'Igatherv'), sendOr(sendbuf, vBase(recvbuf)), null, root);
  }
  /** Persistent Gatherv. */
  GathervInit(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Request<void> {
    return this._collPersistent('GathervInit', gathervRun(this, sendbuf, recvbuf, root, 'GathervInit'), sendOr(sendbuf, vBase(recvbuf)), null, root);
  }

  /**
   * Scatters equal blocks from root: rank i's recvbuf gets block i of root's sendbuf (size blocks). IN_PLACE at the root.
   * @example await comm.Scatter(comm.rank === 0 ? all : null, mine, 0);
   */
  Scatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Promise<void> {
    return this.#blocking('Scatter', scatterRun(this, sendbuf, recvbuf, root, 'Scatter'), root);
  }
  /** Nonblocking Scatter. */
  Iscatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#nonblocking('Iscatter', scatterRun(this, sendbuf, recvbuf, root, 'Iscatter'), sendOr(recvbuf, sendbuf), null, root);
  }
  /** Persistent Scatter. */
  ScatterInit(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this._collPersistent('ScatterInit', scatterRun(this, sendbuf, recvbuf, root, 'ScatterInit'), sendOr(recvbuf, sendbuf), null, root);
  }

  /** Scatters blocks of varying size from root: rank i gets counts[i] items at displs[i]. IN_PLACE at the root. */
  Scatterv(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Promise<void> {
    return this.#blocking('Scatterv', scattervRun(this, sendbuf, recvbuf, root, 'Scatterv'), root);
  }
  /** Nonblocking Scatterv. */
  Iscatterv(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#nonblocking('Iscatterv', scattervRun(this, sendbuf, recvbuf, root, 'Iscatterv'), sendOr(recvbuf, vBase(sendbuf)), null, root);
  }
  /** Persistent Scatterv. */
  ScattervInit(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this._collPersistent('ScattervInit', scattervRun(this, sendbuf, recvbuf, root, 'ScattervInit'), sendOr(recvbuf, vBase(sendbuf)), null, root);
  }

  /**
   * Every rank's recvbuf (size blocks) gets every rank's sendbuf, by rank. IN_PLACE: the own block is already in recvbuf.
   * @example await comm.Allgather(mine, all);
   */
  Allgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('Allgather', allgatherRun(this, sendbuf, recvbuf, 'Allgather'));
  }
  /** Nonblocking Allgather. */
  Iallgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('Iallgather', allgatherRun(this, sendbuf, recvbuf, 'Iallgather'), recvbuf);
  }
  /** Persistent Allgather. */
  AllgatherInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this._collPersistent('AllgatherInit', allgatherRun(this, sendbuf, recvbuf, 'AllgatherInit'), recvbuf);
  }

  /** Allgather with blocks of varying size (counts and displs in items). IN_PLACE: the own block is already in place. */
  Allgatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Promise<void> {
    return this.#blocking('Allgatherv', allgathervRun(this, sendbuf, recvbuf, 'Allgatherv'));
  }
  /** Nonblocking Allgatherv. */
  Iallgatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this.#nonblocking('Iallgatherv', allgathervRun(this, sendbuf, recvbuf, 'Iallgatherv'), vBase(recvbuf));
  }
  /** Persistent Allgatherv. */
  AllgathervInit(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this._collPersistent('AllgathervInit', allgathervRun(this, sendbuf, recvbuf, 'AllgathervInit'), vBase(recvbuf));
  }

  /**
   * Block j of sendbuf goes to rank j; block i of recvbuf comes from rank i (size blocks each). IN_PLACE: sent from recvbuf.
   * @example await comm.Alltoall(out, inb);
   */
  Alltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('Alltoall', alltoallRun(this, sendbuf, recvbuf, 'Alltoall'));
  }
  /** Nonblocking Alltoall. */
  Ialltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('Ialltoall', alltoallRun(this, sendbuf, recvbuf, 'Ialltoall'), recvbuf);
  }
  /** Persistent Alltoall. */
  AlltoallInit(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this._collPersistent('AlltoallInit', alltoallRun(this, sendbuf, recvbuf, 'AlltoallInit'), recvbuf);
  }

  /** Alltoall with blocks of varying size (counts and displs in items). IN_PLACE: sent from recvbuf with its counts and displs. */
  Alltoallv(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Promise<void> {
    return this.#blocking('Alltoallv', alltoallvRun(this, sendbuf, recvbuf, 'Alltoallv'));
  }
  /** Nonblocking Alltoallv. */
  Ialltoallv(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this.#nonblocking('Ialltoallv', alltoallvRun(this, sendbuf, recvbuf, 'Ialltoallv'), vBase(recvbuf));
  }
  /** Persistent Alltoallv. */
  AlltoallvInit(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Request<void> {
    return this._collPersistent('AlltoallvInit', alltoallvRun(this, sendbuf, recvbuf, 'AlltoallvInit'), vBase(recvbuf));
  }

  /**
   * Alltoall with a datatype per block and displacements in bytes: `[buf, counts, byteDispls, types]`,
   * one entry per rank (MPI_Alltoallw). IN_PLACE: sent from recvbuf with its counts, displacements and types.
   * @throws MPIError(ERR_BUFFER) for a malformed spec; ERR_COUNT, ERR_TYPE, ERR_ARG for a bad block
   * @example await comm.Alltoallw([out, counts, byteDispls, types], [inb, counts, byteDispls, types]);
   */
  Alltoallw(sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec): Promise<void> {
    return this.#blocking('Alltoallw', alltoallwRun(this, sendbuf, recvbuf, 'Alltoallw'));
  }
  /** Nonblocking Alltoallw. */
  Ialltoallw(sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec): Request<void> {
    return this.#nonblocking('Ialltoallw', alltoallwRun(this, sendbuf, recvbuf, 'Ialltoallw'), null);
  }
  /** Persistent Alltoallw. */
  AlltoallwInit(sendbuf: WBufSpec | InPlace, recvbuf: WBufSpec): Request<void> {
    return this._collPersistent('AlltoallwInit', alltoallwRun(this, sendbuf, recvbuf, 'AlltoallwInit'), vBase(recvbuf));
  }
}
