/**
 * The collective layer of Comm (API.md "Comm"): every collective of MPI in
 * the object form (any msgpack value) and the buffer form (BufSpec, with
 * IN_PLACE wherever MPI allows it), blocking and nonblocking.
 *
 * Each call checks its arguments here, once, before anything changes
 * (STYLE.md rule 19), then takes a fresh tag on the communicator's
 * collective context (CommCollPt2pt: collective traffic never matches user
 * point-to-point) and runs one coll/ algorithm, chosen there by message size
 * (coll/select.ts). The blocking form awaits that promise; the nonblocking
 * form wraps the same promise in a Request (STYLE.md rule 40), so it
 * progresses while the caller does other work and completes through
 * test/wait.
 *
 * Buffers travel packed (buffer.ts): a contiguous layout is used in place,
 * any other is packed into a staging buffer before and unpacked after.
 * Counts (API.md, as mpi4py): the per-process count of Gather, Scatter,
 * Allgather, Alltoall and ReduceScatterBlock is the length of the
 * per-process buffer; the root's (or every rank's) buffer holds `size` blocks.
 */
import {
  DEFAULT_COLL_TUNING, allgather as collAllgather, allgatherBytes, allgatherv as collAllgatherv, allreduce as collAllreduce, allreduceObjects,
  alltoall as collAlltoall, alltoallBytes, alltoallv as collAlltoallv, barrier as collBarrier, bcast as collBcast, bcastBytes,
  exscan as collExscan, exscanObjects, gather as collGather, gatherBytes, gatherv as collGatherv, reduce as collReduce,
  reduceObjects, reduceScatterBlock as collReduceScatterBlock, scan as collScan, scanObjects, scatter as collScatter,
  scatterBytes, scatterv as collScatterv, type ByteOp, type Codec, type ObjectOp,
} from '../coll/index.ts';
import { applyUserOpValues, reduceValues } from '../datatype/index.ts';
import { datatypeOfView } from './datatype.ts';
import { ERR_ARG, ERR_BUFFER, ERR_COUNT, ERR_ROOT, mpiError } from '../util/index.ts';
import { decodeObject, encodeObject } from '../util/index.ts';
import { IN_PLACE } from './constants.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import { byteOpOf, checkOpArg, Op } from './op.ts';
import { Pt2ptComm } from './pt2pt-comm.ts';
import { Request } from './request.ts';
import { runtime, runtimeOrNull } from '../runtime/index.ts';
import {
  describe, packedOf, packV, recvAreaOf, resolveBuf, resolveV, typeHandleOf, unpackArea, unpackV, type BufSpec, type ResolvedBuf,
} from './buffer.ts';

type InPlace = typeof IN_PLACE;

/**
 * The lean small allreduce (setting lean, docs/adr/0022-small-collectives-lean.md): the byte ops
 * of the predefined ops already checked on a plain typed array, by the array's constructor and
 * the op's code, so that a repeated call skips resolveBuf and byteOpOf.
 */
const LEAN_BYTE_OPS = new Map<Function, (ByteOp | undefined)[]>();
/** The lean path takes vectors up to this many bytes: the short messages of the selection (coll/select.ts). */
const LEAN_MAX_BYTES = DEFAULT_COLL_TUNING.allreduceShortBytes;

/** A communicator's state for the lean small allreduce, made on its first use by the calling thread. */
interface LeanColl {
  /** the collective context's point-to-point for Allreduce, and for Iallreduce (their errors name the call) */
  readonly blocking: CommCollPt2pt;
  readonly nonblocking: CommCollPt2pt;
  /** where the communicator's collective sequence number lives (Pt2ptComm._collSeq) */
  readonly seqCells: Int32Array;
  readonly seqIndex: number;
}

/** A plain typed array (not a DataView): its bytes are the packed vector of a predefined datatype. */
function isTypedArray(x: unknown): x is ArrayBufferView {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}
/** A `[buf, counts, displs]` argument of the v-collectives. */
export type VBufSpec = [BufSpec, number[], number[]];

const valueCodec: Codec<any> = {
  encode: (v) => encodeObject(v, 'collective').slice(),
  decode: (b) => decodeObject(b, 'collective'),
};

/** An Op as the object collectives see it. */
function objectOp(op: Op, call: string): ObjectOp<any> {
  checkOpArg(op, call);
  const fn = op._fn;
  if (fn !== null) return { combine: (a, b) => applyUserOpValues(fn, a, b, call), commute: op._commute };
  const code = op._code;
  return { combine: (a, b) => reduceValues(code, a, b, call), commute: true };
}

function sameBytes(a: ResolvedBuf, b: ResolvedBuf, call: string): void {
  if (a.packedBytes !== b.packedBytes) {
    throw mpiError(ERR_COUNT, call, `sendbuf holds ${a.count} ${a.datatype.name} (${a.packedBytes} bytes) but recvbuf holds ${b.count} ${b.datatype.name} (${b.packedBytes} bytes): they must match`);
  }
}

function blocks(rb: ResolvedBuf, size: number, call: string, arg: string): number {
  if (rb.count % size !== 0) {
    throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.count} items of ${rb.datatype.name}, not a multiple of the communicator size ${size} (one block per rank)`);
  }
  return rb.packedBytes / size;
}

function blockIs(rb: ResolvedBuf, bb: number, call: string, arg: string): void {
  if (rb.packedBytes !== bb) {
    throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.packedBytes} bytes but one block of the other buffer is ${bb} bytes: they must match`);
  }
}

function noInPlace(x: unknown, call: string, arg: string, where: string): void {
  if (x === IN_PLACE) throw mpiError(ERR_BUFFER, call, `${arg} is IN_PLACE, which MPI allows only ${where}`);
}

export class CollComm extends Pt2ptComm {
  #root(root: number, call: string): void {
    this._me(call);
    if (!Number.isInteger(root) || root < 0 || root >= this.size) {
      throw mpiError(ERR_ROOT, call, `root ${String(root)} is out of range for ${this.name} (size ${this.size}): expected 0..${this.size - 1}`);
    }
  }

  /** Starts one collective: a fresh tag on the collective context, the coll/ algorithm. */
  #start<T>(call: string, body: (pt: CommCollPt2pt, tag: number) => Promise<T>): Promise<T> {
    const pt = new CommCollPt2pt(this, call);
    const tag = this._collSeq++ & 0x3fffffff;
    return body(pt, tag);
  }

  /** The blocking form: awaits the collective, recorded for the roll-call. */
  async #blocking<T>(call: string, started: Promise<T>): Promise<T> {
    // Null only in a program that finalized while this call was in flight: nothing to record then.
    const blocked = runtimeOrNull()?.blocked ?? null;
    blocked?.enter(call, this.name, null, null);
    try {
      return await started;
    } finally {
      blocked?.leave();
    }
  }

  /**
   * The nonblocking form: a request over the started collective. It references this communicator,
   * the datatype of `buf` (a checked BufSpec; IN_PLACE or null: none) and `op` until it completes.
   */
  #nonblocking(call: string, started: Promise<void>, buf: unknown = null, op: Op | null = null): Request<void> {
    const lt = runtime(call).device.lifetime;
    const type = buf === null || buf === IN_PLACE || !(lt.countsPredefined || Array.isArray(buf)) ? 0 : typeHandleOf(buf, lt.countsPredefined);
    return Request._fromPromise(started, this, call, type, op === null ? 0 : op._handle);
  }

  /** @internal #start for a subclass's collectives (api/neighbor-comm.ts): a fresh tag, then `body`. */
  _collStart<T>(call: string, body: (pt: CommCollPt2pt, tag: number) => Promise<T>): Promise<T> {
    return this.#start(call, body);
  }
  /** @internal #blocking for a subclass's collectives. */
  _collBlocking<T>(call: string, started: Promise<T>): Promise<T> {
    return this.#blocking(call, started);
  }
  /** @internal #nonblocking for a subclass's collectives. */
  _collNonblocking(call: string, started: Promise<void>, buf: unknown): Request<void> {
    return this.#nonblocking(call, started, buf);
  }

  // --- object form -----------------------------------------------------------

  /** Blocks until every rank has called barrier. */
  barrier(): Promise<void> {
    return this.#blocking('barrier', this.#start('barrier', (pt, tag) => collBarrier(pt, tag)));
  }

  /** Nonblocking barrier. @example const r = comm.ibarrier(); while (!r.test()) await work(); */
  ibarrier(): Request<void> {
    return this.#nonblocking('ibarrier', this.#start('ibarrier', (pt, tag) => collBarrier(pt, tag)));
  }

  /** Broadcasts root's value; every rank resolves to it. @throws MPIError(ERR_ROOT) for a bad root. */
  bcast<T>(value: T, root = 0): Promise<T> {
    this.#root(root, 'bcast');
    return this.#blocking('bcast', this.#start('bcast', async (pt, tag) => {
      const mine = pt.rank === root ? valueCodec.encode(value) : null;
      const bytes = await bcastBytes(pt, tag, mine, root);
      return pt.rank === root ? value : (valueCodec.decode(bytes) as T);
    }));
  }

  /** Reduces values (numbers, bigints, typed arrays element-wise) to root; undefined elsewhere. */
  reduce<T>(value: T, op: Op, root = 0): Promise<T | undefined> {
    this.#root(root, 'reduce');
    const o = objectOp(op, 'reduce');
    return this.#blocking('reduce', this.#start('reduce', (pt, tag) => reduceObjects(pt, tag, value, o, valueCodec, root)));
  }

  /** Reduces values; every rank resolves to the result. */
  allreduce<T>(value: T, op: Op): Promise<T> {
    const o = objectOp(op, 'allreduce');
    return this.#blocking('allreduce', this.#start('allreduce', (pt, tag) => allreduceObjects(pt, tag, value, o, valueCodec)));
  }

  /** Inclusive prefix reduction: rank r resolves to v0 op ... op vr. */
  scan<T>(value: T, op: Op): Promise<T> {
    const o = objectOp(op, 'scan');
    return this.#blocking('scan', this.#start('scan', (pt, tag) => scanObjects(pt, tag, value, o, valueCodec)));
  }

  /** Exclusive prefix reduction: rank r > 0 resolves to v0 op ... op v(r-1); rank 0 to undefined. */
  exscan<T>(value: T, op: Op): Promise<T | undefined> {
    const o = objectOp(op, 'exscan');
    return this.#blocking('exscan', this.#start('exscan', (pt, tag) => exscanObjects(pt, tag, value, o, valueCodec)));
  }

  /** Gathers every rank's value to root, by rank; undefined elsewhere. */
  gather<T>(value: T, root = 0): Promise<T[] | undefined> {
    this.#root(root, 'gather');
    return this.#blocking('gather', this.#start('gather', async (pt, tag) => {
      const all = await gatherBytes(pt, tag, valueCodec.encode(value), root);
      if (all === undefined) return undefined;
      return all.map((b, i) => (i === pt.rank ? value : (valueCodec.decode(b) as T)));
    }));
  }

  /** Scatters values[i] from root to rank i. @throws MPIError(ERR_ARG) at the root when values is not an array of `size` entries. */
  scatter<T>(values: T[] | undefined, root = 0): Promise<T> {
    this.#root(root, 'scatter');
    const isRoot = this.rank === root;
    if (isRoot && (!Array.isArray(values) || values.length !== this.size)) {
      throw mpiError(ERR_ARG, 'scatter', `values is ${describe(values)}: expected an array of ${this.size} values (one per rank) at the root`);
    }
    return this.#blocking('scatter', this.#start('scatter', async (pt, tag) => {
      const datas = isRoot ? values!.map((v) => valueCodec.encode(v)) : undefined;
      const mine = await scatterBytes(pt, tag, datas, root);
      return isRoot ? values![root]! : (valueCodec.decode(mine) as T);
    }));
  }

  /** Every rank resolves to every rank's value, by rank. */
  allgather<T>(value: T): Promise<T[]> {
    return this.#blocking('allgather', this.#start('allgather', async (pt, tag) => {
      const all = await allgatherBytes(pt, tag, valueCodec.encode(value));
      return all.map((b, i) => (i === pt.rank ? value : (valueCodec.decode(b) as T)));
    }));
  }

  /** Sends values[j] to rank j; resolves what each rank sent to this one, by rank. @throws MPIError(ERR_ARG) unless values has `size` entries. */
  alltoall<T>(values: T[]): Promise<T[]> {
    if (!Array.isArray(values) || values.length !== this.size) {
      throw mpiError(ERR_ARG, 'alltoall', `values is ${describe(values)}: expected an array of ${this.size} values (one per rank)`);
    }
    return this.#blocking('alltoall', this.#start('alltoall', async (pt, tag) => {
      const got = await alltoallBytes(pt, tag, values.map((v) => valueCodec.encode(v)));
      return got.map((b, i) => (i === pt.rank ? values[i]! : (valueCodec.decode(b) as T)));
    }));
  }

  // --- buffer form -----------------------------------------------------------

  /** Nonblocking barrier (the buffer-form spelling of ibarrier). */
  Ibarrier(): Request<void> {
    return this.#nonblocking('Ibarrier', this.#start('Ibarrier', (pt, tag) => collBarrier(pt, tag)));
  }

  #bcast(buf: BufSpec, root: number, call: string): Promise<void> {
    this.#root(root, call);
    const rb = resolveBuf(buf, call, 'buf');
    return this.#start(call, async (pt, tag) => {
      const isRoot = pt.rank === root;
      const area = isRoot ? packedOf(rb) : recvAreaOf(rb);
      await collBcast(pt, tag, area, root);
      if (!isRoot) unpackArea(rb, area);
    });
  }

  /**
   * Broadcasts root's buffer into every rank's buffer (same size everywhere).
   * @throws MPIError(ERR_ROOT) for a bad root; ERR_BUFFER / ERR_TYPE / ERR_COUNT for a bad buffer.
   * @example await comm.Bcast(params, 0);
   */
  Bcast(buf: BufSpec, root = 0): Promise<void> {
    return this.#blocking('Bcast', this.#bcast(buf, root, 'Bcast'));
  }
  /** Nonblocking Bcast. */
  Ibcast(buf: BufSpec, root = 0): Request<void> {
    return this.#nonblocking('Ibcast', this.#bcast(buf, root, 'Ibcast'), buf);
  }

  #reduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root: number, call: string): Promise<void> {
    this.#root(root, call);
    const isRoot = this.rank === root;
    let send: ResolvedBuf | null = null;
    let recv: ResolvedBuf | null = null;
    if (isRoot) {
      recv = resolveBuf(recvbuf, call, 'recvbuf');
      if (sendbuf !== IN_PLACE) {
        send = resolveBuf(sendbuf, call, 'sendbuf');
        sameBytes(send, recv, call);
      }
    } else {
      noInPlace(sendbuf, call, 'sendbuf', 'at the root');
      send = resolveBuf(sendbuf, call, 'sendbuf');
    }
    const dt = (send ?? recv)!;
    const bop = byteOpOf(op, dt.datatype, dt.packedBytes, call);
    return this.#start(call, async (pt, tag) => {
      const area = recv === null ? null : send === null ? packedOf(recv) : recvAreaOf(recv);
      await collReduce(pt, tag, send === null ? null : packedOf(send), area, bop, root);
      if (recv !== null) unpackArea(recv, area!);
    });
  }

  /**
   * Reduces every rank's sendbuf into root's recvbuf (null elsewhere). IN_PLACE at the root: its input is in recvbuf.
   * @throws MPIError(ERR_OP) when op is not defined on the datatype; ERR_ROOT, ERR_COUNT, ERR_BUFFER, ERR_TYPE for bad arguments.
   * @example await comm.Reduce(local, comm.rank === 0 ? total : null, MPI.SUM, 0);
   */
  Reduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Promise<void> {
    return this.#blocking('Reduce', this.#reduce(sendbuf, recvbuf, op, root, 'Reduce'));
  }
  /** Nonblocking Reduce. */
  Ireduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, op: Op, root = 0): Request<void> {
    return this.#nonblocking('Ireduce', this.#reduce(sendbuf, recvbuf, op, root, 'Ireduce'), sendbuf === IN_PLACE ? recvbuf : sendbuf, op);
  }

  /** The shared shape of Allreduce, Scan and Exscan: IN_PLACE or a sendbuf the size of recvbuf. */
  #vectorOp(
    sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: string,
    algorithm: (pt: CommCollPt2pt, tag: number, send: Uint8Array | null, recv: Uint8Array, op: ByteOp) => Promise<void>,
    isExclusive: boolean,
  ): Promise<void> {
    this._me(call);
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
    if (send !== null) sameBytes(send, recv, call);
    const bop = byteOpOf(op, recv.datatype, recv.packedBytes, call);
    return this.#start(call, async (pt, tag) => {
      const area = send === null ? packedOf(recv) : recvAreaOf(recv);
      await algorithm(pt, tag, send === null ? null : packedOf(send), area, bop);
      // Exscan leaves rank 0's recvbuf untouched.
      if (!(isExclusive && pt.rank === 0)) unpackArea(recv, area);
    });
  }

  /**
   * Reduces every rank's sendbuf; the result lands in every rank's recvbuf. IN_PLACE: the input is in recvbuf.
   * Non-commutative ops are applied in rank order.
   * @throws MPIError(ERR_OP) when op is not defined on the datatype; ERR_COUNT when the buffers differ in size.
   * @example await comm.Allreduce(MPI.IN_PLACE, grad, MPI.SUM);
   */
  Allreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    const lean = this.#leanAllreduce(sendbuf, recvbuf, op, 'Allreduce');
    return this.#blocking('Allreduce', lean ?? this.#vectorOp(sendbuf, recvbuf, op, 'Allreduce', collAllreduce, false));
  }
  /** Nonblocking Allreduce. */
  Iallreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Request<void> {
    const lean = this.#leanAllreduce(sendbuf, recvbuf, op, 'Iallreduce');
    return this.#nonblocking('Iallreduce', lean ?? this.#vectorOp(sendbuf, recvbuf, op, 'Iallreduce', collAllreduce, false), recvbuf, op);
  }

  #lean: LeanColl | null = null;

  /**
   * The lean small allreduce (setting lean=send or on, docs/adr/0022-small-collectives-lean.md):
   * on a predefined communicator, a predefined op on plain typed arrays of one kind and length
   * (or IN_PLACE) of at most LEAN_MAX_BYTES starts the same algorithm as #vectorOp with the same
   * checks, but from the state of the communicator's previous call (its point-to-point view, its
   * sequence cell) and an op checked once per array kind: no resolveBuf, byteOpOf or per-call
   * objects. Null, having done nothing, for anything else: the caller takes #vectorOp, which also
   * throws the MPIError of a bad argument.
   */
  #leanAllreduce(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op, call: 'Allreduce' | 'Iallreduce'): Promise<void> | null {
    if (!this._predefined || !(op instanceof Op) || op._fn !== null || !isTypedArray(recvbuf)) return null;
    const bytes = recvbuf.byteLength;
    if (bytes > LEAN_MAX_BYTES) return null;
    const sendIsView = sendbuf !== IN_PLACE;
    if (sendIsView && !(isTypedArray(sendbuf) && sendbuf.constructor === recvbuf.constructor && sendbuf.byteLength === bytes)) return null;
    let lean = this.#lean;
    if (lean === null) {
      const rt = runtime(call);
      if (rt.settings.lean === 'off') return null;
      this._me(call);
      const seq = this._collSeqCell();
      lean = { blocking: new CommCollPt2pt(this, 'Allreduce'), nonblocking: new CommCollPt2pt(this, 'Iallreduce'), seqCells: seq.cells, seqIndex: seq.index };
      this.#lean = lean;
    }
    // The checks of #vectorOp, in its order: the communicator and the caller, then the op on the datatype.
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
    const cells = lean.seqCells;
    const seq = Atomics.load(cells, lean.seqIndex);
    Atomics.store(cells, lean.seqIndex, (seq + 1) | 0);
    const recv = new Uint8Array(recvbuf.buffer, recvbuf.byteOffset, bytes);
    const send = sendIsView ? new Uint8Array(sendbuf.buffer, sendbuf.byteOffset, bytes) : null;
    return collAllreduce(call === 'Allreduce' ? lean.blocking : lean.nonblocking, seq & 0x3fffffff, send, recv, bop);
  }

  /** Inclusive prefix reduction: rank r's recvbuf = x0 op ... op xr. IN_PLACE: the input is in recvbuf. */
  Scan(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('Scan', this.#vectorOp(sendbuf, recvbuf, op, 'Scan', collScan, false));
  }

  /** Exclusive prefix reduction: rank r > 0 gets x0 op ... op x(r-1); rank 0's recvbuf is left as it was. IN_PLACE allowed. */
  Exscan(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    return this.#blocking('Exscan', this.#vectorOp(sendbuf, recvbuf, op, 'Exscan', collExscan, true));
  }

  /**
   * Reduces `size` blocks element-wise over all ranks; rank i gets block i in recvbuf.
   * sendbuf holds size blocks of recvbuf's size; IN_PLACE: recvbuf holds the size blocks and gets the result in its first block.
   * @throws MPIError(ERR_COUNT) when the sizes do not fit; ERR_OP for a bad (op, datatype) pair.
   */
  ReduceScatterBlock(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, op: Op): Promise<void> {
    const call = 'ReduceScatterBlock';
    this._me(call);
    const size = this.size;
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    let send: ResolvedBuf | null = null;
    let bb: number;
    if (sendbuf === IN_PLACE) {
      bb = blocks(recv, size, call, 'recvbuf');
    } else {
      send = resolveBuf(sendbuf, call, 'sendbuf');
      bb = recv.packedBytes;
      if (send.packedBytes !== size * bb) {
        throw mpiError(ERR_COUNT, call, `sendbuf holds ${send.packedBytes} bytes: expected ${size} blocks of recvbuf's ${bb} bytes`);
      }
    }
    const bop = byteOpOf(op, recv.datatype, size * bb, call);
    if (bb % bop.itemBytes !== 0) throw mpiError(ERR_COUNT, call, `a block of ${bb} bytes splits an item of ${bop.itemBytes} bytes`);
    return this.#blocking(call, this.#start(call, async (pt, tag) => {
      const area = send === null ? packedOf(recv) : recvAreaOf(recv);
      await collReduceScatterBlock(pt, tag, send === null ? null : packedOf(send), area, bb, bop);
      unpackArea(recv, area, bb);
    }));
  }

  #gather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root: number, call: string): Promise<void> {
    this.#root(root, call);
    const isRoot = this.rank === root;
    let send: ResolvedBuf | null = null;
    let recv: ResolvedBuf | null = null;
    let bb: number;
    if (isRoot) {
      recv = resolveBuf(recvbuf, call, 'recvbuf');
      bb = blocks(recv, this.size, call, 'recvbuf');
      if (sendbuf !== IN_PLACE) {
        send = resolveBuf(sendbuf, call, 'sendbuf');
        blockIs(send, bb, call, 'sendbuf');
      }
    } else {
      noInPlace(sendbuf, call, 'sendbuf', 'at the root');
      send = resolveBuf(sendbuf, call, 'sendbuf');
      bb = send.packedBytes;
    }
    return this.#start(call, async (pt, tag) => {
      const area = recv === null ? null : send === null ? packedOf(recv) : recvAreaOf(recv);
      await collGather(pt, tag, send === null ? null : packedOf(send), area, bb, root);
      if (recv !== null) unpackArea(recv, area!);
    });
  }

  /**
   * Gathers equal blocks to root: block i of root's recvbuf (size blocks) is rank i's sendbuf. IN_PLACE at the root.
   * @example await comm.Gather(mine, comm.rank === 0 ? all : null, 0);
   */
  Gather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Promise<void> {
    return this.#blocking('Gather', this.#gather(sendbuf, recvbuf, root, 'Gather'));
  }
  /** Nonblocking Gather. */
  Igather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec | null, root = 0): Request<void> {
    return this.#nonblocking('Igather', this.#gather(sendbuf, recvbuf, root, 'Igather'), sendbuf === IN_PLACE ? recvbuf : sendbuf);
  }

  /**
   * Gathers blocks of varying size to root: rank i's sendbuf lands at displs[i] (items) with counts[i] items.
   * IN_PLACE at the root (its block is already in place).
   */
  Gatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec | null, root = 0): Promise<void> {
    const call = 'Gatherv';
    this.#root(root, call);
    const isRoot = this.rank === root;
    const recv = isRoot ? resolveV(recvbuf, this.size, call, 'recvbuf') : null;
    if (!isRoot) noInPlace(sendbuf, call, 'sendbuf', 'at the root');
    const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
    return this.#blocking(call, this.#start(call, async (pt, tag) => {
      if (recv !== null && send === null) packV(recv, root);
      await collGatherv(pt, tag, send === null ? null : packedOf(send), recv === null ? null : recv.v, root);
      if (recv !== null) unpackV(recv);
    }));
  }

  #scatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root: number, call: string): Promise<void> {
    this.#root(root, call);
    const isRoot = this.rank === root;
    let send: ResolvedBuf | null = null;
    let recv: ResolvedBuf | null = null;
    let bb: number;
    if (isRoot) {
      send = resolveBuf(sendbuf, call, 'sendbuf');
      bb = blocks(send, this.size, call, 'sendbuf');
      if (recvbuf !== IN_PLACE) {
        recv = resolveBuf(recvbuf, call, 'recvbuf');
        blockIs(recv, bb, call, 'recvbuf');
      }
    } else {
      noInPlace(recvbuf, call, 'recvbuf', 'at the root');
      recv = resolveBuf(recvbuf, call, 'recvbuf');
      bb = recv.packedBytes;
    }
    return this.#start(call, async (pt, tag) => {
      const area = recv === null ? null : recvAreaOf(recv);
      await collScatter(pt, tag, send === null ? null : packedOf(send), area, bb, root);
      if (recv !== null) unpackArea(recv, area!);
    });
  }

  /**
   * Scatters equal blocks from root: rank i's recvbuf gets block i of root's sendbuf (size blocks). IN_PLACE at the root.
   * @example await comm.Scatter(comm.rank === 0 ? all : null, mine, 0);
   */
  Scatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Promise<void> {
    return this.#blocking('Scatter', this.#scatter(sendbuf, recvbuf, root, 'Scatter'));
  }
  /** Nonblocking Scatter. */
  Iscatter(sendbuf: BufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Request<void> {
    return this.#nonblocking('Iscatter', this.#scatter(sendbuf, recvbuf, root, 'Iscatter'), recvbuf === IN_PLACE ? sendbuf : recvbuf);
  }

  /** Scatters blocks of varying size from root: rank i gets counts[i] items at displs[i]. IN_PLACE at the root. */
  Scatterv(sendbuf: VBufSpec | null, recvbuf: BufSpec | InPlace, root = 0): Promise<void> {
    const call = 'Scatterv';
    this.#root(root, call);
    const isRoot = this.rank === root;
    const send = isRoot ? resolveV(sendbuf, this.size, call, 'sendbuf') : null;
    if (!isRoot) noInPlace(recvbuf, call, 'recvbuf', 'at the root');
    const recv = recvbuf === IN_PLACE ? null : resolveBuf(recvbuf, call, 'recvbuf');
    return this.#blocking(call, this.#start(call, async (pt, tag) => {
      if (send !== null) packV(send);
      const area = recv === null ? null : recvAreaOf(recv);
      await collScatterv(pt, tag, send === null ? null : send.v, area, root);
      if (recv !== null) unpackArea(recv, area!);
    }));
  }

  #allgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, call: string): Promise<void> {
    this._me(call);
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const bb = blocks(recv, this.size, call, 'recvbuf');
    const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
    if (send !== null) blockIs(send, bb, call, 'sendbuf');
    return this.#start(call, async (pt, tag) => {
      const area = send === null ? packedOf(recv) : recvAreaOf(recv);
      await collAllgather(pt, tag, send === null ? null : packedOf(send), area, bb);
      unpackArea(recv, area);
    });
  }

  /**
   * Every rank's recvbuf (size blocks) gets every rank's sendbuf, by rank. IN_PLACE: the own block is already in recvbuf.
   * @example await comm.Allgather(mine, all);
   */
  Allgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('Allgather', this.#allgather(sendbuf, recvbuf, 'Allgather'));
  }
  /** Nonblocking Allgather. */
  Iallgather(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('Iallgather', this.#allgather(sendbuf, recvbuf, 'Iallgather'), recvbuf);
  }

  /** Allgather with blocks of varying size (counts and displs in items). IN_PLACE: the own block is already in place. */
  Allgatherv(sendbuf: BufSpec | InPlace, recvbuf: VBufSpec): Promise<void> {
    const call = 'Allgatherv';
    this._me(call);
    const recv = resolveV(recvbuf, this.size, call, 'recvbuf');
    const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
    return this.#blocking(call, this.#start(call, async (pt, tag) => {
      if (send === null) packV(recv, pt.rank);
      await collAllgatherv(pt, tag, send === null ? null : packedOf(send), recv.v);
      unpackV(recv);
    }));
  }

  #alltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec, call: string): Promise<void> {
    this._me(call);
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const bb = blocks(recv, this.size, call, 'recvbuf');
    const send = sendbuf === IN_PLACE ? null : resolveBuf(sendbuf, call, 'sendbuf');
    if (send !== null) sameBytes(send, recv, call);
    return this.#start(call, async (pt, tag) => {
      const area = send === null ? packedOf(recv) : recvAreaOf(recv);
      await collAlltoall(pt, tag, send === null ? null : packedOf(send), area, bb);
      unpackArea(recv, area);
    });
  }

  /**
   * Block j of sendbuf goes to rank j; block i of recvbuf comes from rank i (size blocks each). IN_PLACE: sent from recvbuf.
   * @example await comm.Alltoall(out, inb);
   */
  Alltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('Alltoall', this.#alltoall(sendbuf, recvbuf, 'Alltoall'));
  }
  /** Nonblocking Alltoall. */
  Ialltoall(sendbuf: BufSpec | InPlace, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('Ialltoall', this.#alltoall(sendbuf, recvbuf, 'Ialltoall'), recvbuf);
  }

  /** Alltoall with blocks of varying size (counts and displs in items). IN_PLACE: sent from recvbuf with its counts and displs. */
  Alltoallv(sendbuf: VBufSpec | InPlace, recvbuf: VBufSpec): Promise<void> {
    const call = 'Alltoallv';
    this._me(call);
    const recv = resolveV(recvbuf, this.size, call, 'recvbuf');
    const send = sendbuf === IN_PLACE ? null : resolveV(sendbuf, this.size, call, 'sendbuf');
    return this.#blocking(call, this.#start(call, async (pt, tag) => {
      if (send !== null) packV(send);
      else packV(recv);
      await collAlltoallv(pt, tag, send === null ? null : send.v, recv.v);
      unpackV(recv);
    }));
  }
}
