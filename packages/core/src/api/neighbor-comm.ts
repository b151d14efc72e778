/**
 * TopoComm: what every topology communicator (CartComm, GraphComm,
 * DistGraphComm in topology-comm.ts) adds to Comm: its topology and the
 * neighborhood collectives (API.md "Topologies and neighborhood collectives";
 * MPI 4.0 sections 8.6-8.8), as mpi4py's Topocomm.
 *
 * Each buffer collective checks its arguments once, here, and builds a `run`
 * that packs, calls coll/neighbor.ts and unpacks. The blocking form runs it
 * once and awaits it, the I… form wraps the same promise in a Request (as
 * coll-comm.ts does), and the …Init form (MPI 4.0 persistent collective) takes
 * its collective sequence number at init and runs it again at every start():
 * a persistent request cannot start again before it completes, and one tag
 * per pair keeps the runs apart by MPI's non-overtaking order.
 *
 * Neighbour order (comm/topology.ts): Cartesian, per dimension the negative
 * then the positive neighbour (PROC_NULL off a non-periodic edge: that receive
 * block is left as it was); graph, the node's edges in order; distributed
 * graph, the lists as given. Counts: a block per neighbour, the receive
 * buffer holding indegree blocks and Alltoall's send buffer outdegree blocks.
 * No IN_PLACE (MPI has none for neighborhood collectives).
 *
 * NeighborAlltoall and NeighborAllgather (blocking and I…) on plain typed arrays whose blocks take
 * the per-peer algorithm skip the checked `run`: the communicator keeps a LeanNeighbor
 * (coll/neighbor-peers.ts) whose step machines run the exchange on byte views of the arrays, the
 * same messages, tag and errors, and a blocking call whose messages were there returns LEAN_DONE
 * without entering the blocking wait (as the lean Allreduce, docs/adr/0053); one that must wait
 * tells its LeanNeighborWait itself, with no async frame around it. Their …Init forms on
 * contiguous buffers plan that machine at init (NeighborExchangePlan).
 */
import {
  LeanNeighbor, NeighborExchangePlan, neighborAlltoall, neighborAlltoallBytes, neighborAlltoallv, neighborPerPeer, signatureOf, type BlockingWait, type NeighborPlan,
  type VBuffer,
} from '../coll/index.ts';
import { neighborLists, type Topology } from '../comm/index.ts';
import { runtimeOrNull } from '../runtime/index.ts';
import { ERR_ARG, ERR_COUNT, collTag, decodeObject, encodeObject, mpiError } from '../util/index.ts';
import { Comm } from './comm.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import {
  describe, packedOf, packV, resolveBuf, resolveV, resolveW, stageW, unpackArea, unpackV, unstageW, type BufSpec, type ResolvedBuf, type WBufSpec,
} from './buffer.ts';
import { Request } from './request.ts';
import { MAX_MESSAGE_BYTES } from '../device/index.ts';
import { vBase, type VBufSpec } from './coll-runs.ts';

export type { WBufSpec } from './buffer.ts';

type Run = (pt: CommCollPt2pt, tag: number) => Promise<void>;

/** `n` blocks of `bytes` bytes at 0, bytes, 2 * bytes, ... (or all at 0: the allgather's one send block). */
function uniform(buf: Uint8Array, n: number, bytes: number, sameBlock = false): VBuffer {
  return { buf, counts: new Array<number>(n).fill(bytes), displs: Array.from({ length: n }, (_, i) => (sameBlock ? 0 : i * bytes)) };
}

/**
 * A lean blocking neighbourhood call's wait (coll/lean-allreduce.ts BlockingWait): what _collBlocking
 * records around a blocking collective (the roll-call, and the poll loop it starts), without its
 * async frame; coll-comm.ts's LeanAllreduceWait for these calls (a class of their own keeps each
 * path's V8 feedback to itself). Null runtime only in a program that finalized while the call was in
 * flight: nothing to record then.
 */
class LeanNeighborWait implements BlockingWait {
  readonly #comm: TopoComm;
  readonly #call: string;

  constructor(comm: TopoComm, call: string) {
    this.#comm = comm;
    this.#call = call;
  }

  enter(): void {
    const comm = this.#comm;
    runtimeOrNull()?.blocked.enter(this.#call, comm.name, null, null, comm._ctx);
  }

  leave(): void {
    runtimeOrNull()?.blocked.leave();
  }
}

/** The blocking lean calls (their waits are told to the roll-call); the I… forms return a Request. */
function isBlockingLeanCall(call: string): boolean {
  return call === 'NeighborAlltoall' || call === 'NeighborAllgather';
}

export class TopoComm extends Comm {
  /** @internal */
  readonly _topo: Topology;
  #plan: NeighborPlan | null = null;
  #planRank = -1;

  /** @internal */
  constructor(name: string, ctx: number, endpoints: Int32Array, topo: Topology) {
    super(name, ctx, endpoints, false);
    this._topo = topo;
  }

  /** The caller's neighbour lists (checked: a usable communicator the caller belongs to). */
  _neighbors(call: string): NeighborPlan {
    this._me(call);
    const rank = this.rank;
    if (this.#plan === null || this.#planRank !== rank) {
      this.#plan = neighborLists(this._topo, rank);
      this.#planRank = rank;
    }
    return this.#plan;
  }

  // --- object form -----------------------------------------------------------

  /**
   * Sends `value` to every out-neighbour; resolves what each in-neighbour sent, in neighbour
   * order (API.md's `T[]`; the entry of a PROC_NULL neighbour is undefined, as mpi4py's None).
   * @example const [below, above, left, right] = await cart.neighborAllgather(myEdge);
   */
  neighborAllgather<T>(value: T): Promise<T[]> {
    const call = 'neighborAllgather';
    const plan = this._neighbors(call);
    const bytes = encode(value, call);
    return this._collBlocking(call, this._collStart(call, async (pt, tag) => {
      const got = await neighborAlltoallBytes(pt, tag, plan, plan.destinations.map(() => bytes));
      return got.map((b) => (b === undefined ? undefined : decodeObject(b, call)) as T);
    }));
  }

  /**
   * Sends values[j] to out-neighbour j; resolves what each in-neighbour sent, in neighbour order.
   * @throws MPIError(ERR_ARG) unless values has one entry per out-neighbour
   */
  neighborAlltoall<T>(values: T[]): Promise<T[]> {
    const call = 'neighborAlltoall';
    const plan = this._neighbors(call);
    if (!Array.isArray(values) || values.length !== plan.destinations.length) {
      throw mpiError(ERR_ARG, call, `values is ${describe(values)}: expected an array of ${plan.destinations.length} values (one per out-neighbour)`);
    }
    const datas = values.map((v) => encode(v, call));
    return this._collBlocking(call, this._collStart(call, async (pt, tag) => {
      const got = await neighborAlltoallBytes(pt, tag, plan, datas);
      return got.map((b) => (b === undefined ? undefined : decodeObject(b, call)) as T);
    }));
  }

  // --- buffer form: argument checks and the run each form shares ------------

  #allgatherv(sendbuf: BufSpec, recvbuf: VBufSpec, call: string): Run {
    const plan = this._neighbors(call);
    const send = resolveBuf(sendbuf, call, 'sendbuf');
    const recv = resolveV(recvbuf, plan.sources.length, call, 'recvbuf');
    return async (pt, tag) => {
      packV(recv);
      await neighborAlltoallv(pt, tag, plan, uniform(packedOf(send), plan.destinations.length, send.packedBytes, true), recv.v, call);
      unpackV(recv);
    };
  }

  #alltoallArgs(sendbuf: BufSpec, recvbuf: BufSpec, call: string): ExchangeArgs {
    const plan = this._neighbors(call);
    const send = resolveBuf(sendbuf, call, 'sendbuf');
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const bb = blockBytes(send, recv, plan.destinations.length, plan.sources.length, call);
    return { plan, send, recv, sendStride: bb, bb };
  }

  #allgatherArgs(sendbuf: BufSpec, recvbuf: BufSpec, call: string): ExchangeArgs {
    const plan = this._neighbors(call);
    const send = resolveBuf(sendbuf, call, 'sendbuf');
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const bb = send.packedBytes;
    const indegree = plan.sources.length;
    if (recv.packedBytes !== indegree * bb) {
      throw mpiError(ERR_COUNT, call, `recvbuf holds ${recv.packedBytes} bytes: expected ${indegree} blocks (one per in-neighbour) of sendbuf's ${bb} bytes`);
    }
    return { plan, send, recv, sendStride: 0, bb };
  }

  #alltoallv(sendbuf: VBufSpec, recvbuf: VBufSpec, call: string): Run {
    const plan = this._neighbors(call);
    const send = resolveV(sendbuf, plan.destinations.length, call, 'sendbuf');
    const recv = resolveV(recvbuf, plan.sources.length, call, 'recvbuf');
    return async (pt, tag) => {
      packV(send);
      packV(recv);
      await neighborAlltoallv(pt, tag, plan, send.v, recv.v, call);
      unpackV(recv);
    };
  }

  #alltoallw(sendbuf: WBufSpec, recvbuf: WBufSpec, call: string): Run {
    const plan = this._neighbors(call);
    const send = resolveW(sendbuf, plan.destinations.length, call, 'sendbuf', 'out-neighbour');
    const recv = resolveW(recvbuf, plan.sources.length, call, 'recvbuf', 'in-neighbour');
    return async (pt, tag) => {
      stageW(send);
      stageW(recv);
      await neighborAlltoallv(pt, tag, plan, send.v, recv.v, call);
      unstageW(recv);
    };
  }

  /** The three forms of one collective over the same checked `run`. */
  #blocking(call: string, run: Run): Promise<void> {
    return this._collBlocking(call, this._collStart(call, run));
  }
  #nonblocking(call: string, run: Run, buf: unknown): Request<void> {
    return this._collNonblocking(call, this._collStart(call, run), buf);
  }
  #persistent(call: string, run: Run, buf: unknown): Request<void> {
    return this._collPersistent(call, run, buf);
  }

  /** The blocking NeighborAlltoall or NeighborAllgather: the lean path when it applies, else the checked run. */
  #exchangeBlocking(call: LeanCall, sendbuf: BufSpec, recvbuf: BufSpec, allgather: boolean): Promise<void> {
    const lean = this.#leanStart(call, sendbuf, recvbuf, allgather);
    // LEAN_DONE when its messages were there (no wait at all); else the run tells its LeanNeighborWait
    // when its wait begins and ends, so no async frame of _collBlocking goes around it.
    if (lean !== null) return lean;
    return this._collBlocking(call, this._collStart(call, exchangeRun(allgather ? this.#allgatherArgs(sendbuf, recvbuf, call) : this.#alltoallArgs(sendbuf, recvbuf, call))));
  }

  /** The nonblocking form of the same. */
  #exchangeNonblocking(call: LeanCall, sendbuf: BufSpec, recvbuf: BufSpec, allgather: boolean): Request<void> {
    const lean = this.#leanStart(call, sendbuf, recvbuf, allgather);
    return this._collNonblocking(call, lean ?? this._collStart(call, exchangeRun(allgather ? this.#allgatherArgs(sendbuf, recvbuf, call) : this.#alltoallArgs(sendbuf, recvbuf, call))), recvbuf);
  }

  /** The persistent form: contiguous buffers of per-peer blocks plan the step machine at init; others run the checked body per start. */
  #exchangePersistent(call: string, a: ExchangeArgs, buf: unknown): Request<void> {
    const send = a.send.contiguous;
    const recv = a.recv.contiguous;
    if (send !== null && recv !== null && neighborPerPeer(this.size, a.bb)) {
      return this._collPersistentPlan(call, (pt, tag) => new NeighborExchangePlan(pt, a.plan, tag, send, a.sendStride, recv, a.bb, call), buf);
    }
    return this._collPersistent(call, exchangeRun(a), buf);
  }

  #lean: LeanNeighbor | null = null;
  #seq: { readonly cells: Int32Array; readonly index: number } | null = null;
  /** The previous lean call's arrays and their byte views (kept while the arrays' buffers are small: see keepView). */
  #sendArray: ArrayBufferView | null = null;
  #sendBytes: Uint8Array = NO_BYTES;
  #recvArray: ArrayBufferView | null = null;
  #recvBytes: Uint8Array = NO_BYTES;

  /**
   * The lean path: plain typed arrays (no DataView, no datatype) that pass every check of the
   * checked path (whole blocks of whole items, one per neighbour, of one size) with blocks that take
   * the per-peer algorithm, on a communicator with in- and out-neighbours. Starts the exchange on
   * the communicator's LeanNeighbor; null, having done nothing, for anything else: the caller takes
   * the checked path, which also throws the MPIError of a bad argument.
   */
  #leanStart(call: LeanCall, sendbuf: BufSpec, recvbuf: BufSpec, allgather: boolean): Promise<void> | null {
    if (!isTypedArray(sendbuf) || !isTypedArray(recvbuf)) return null;
    const plan = this._neighbors(call);
    const outdegree = plan.destinations.length;
    const indegree = plan.sources.length;
    const sendLength = sendbuf.byteLength;
    const recvLength = recvbuf.byteLength;
    if (outdegree === 0 || indegree === 0 || sendLength === 0 || sendLength > MAX_MESSAGE_BYTES || recvLength > MAX_MESSAGE_BYTES) return null;
    const bb = allgather ? sendLength : sendLength / outdegree;
    if (recvLength !== indegree * bb) return null;
    if (!allgather && (!Number.isInteger(bb) || bb % itemBytesOf(sendbuf) !== 0 || bb % itemBytesOf(recvbuf) !== 0)) return null;
    if (!neighborPerPeer(this.size, bb)) return null;
    let lean = this.#lean;
    if (lean === null || !lean.serves(plan)) {
      // Made again when the caller's rank changes (another endpoint): its views and its sequence cell are the endpoint's.
      lean = new LeanNeighbor(plan, (name) => new CommCollPt2pt(this, name), (name) => (isBlockingLeanCall(name) ? new LeanNeighborWait(this, name) : null));
      this.#lean = lean;
      this.#seq = this._collSeqCell();
    }
    let sendBytes = this.#sendBytes;
    if (sendbuf !== this.#sendArray || sendBytes.length !== sendLength) {
      sendBytes = new Uint8Array(sendbuf.buffer, sendbuf.byteOffset, sendLength);
      const keep = keepView(sendbuf);
      this.#sendArray = keep ? sendbuf : null;
      this.#sendBytes = keep ? sendBytes : NO_BYTES;
    }
    let recvBytes = this.#recvBytes;
    if (recvbuf !== this.#recvArray || recvBytes.length !== recvLength) {
      recvBytes = new Uint8Array(recvbuf.buffer, recvbuf.byteOffset, recvLength);
      const keep = keepView(recvbuf);
      this.#recvArray = keep ? recvbuf : null;
      this.#recvBytes = keep ? recvBytes : NO_BYTES;
    }
    const seq = this.#seq!;
    const n = Atomics.load(seq.cells, seq.index);
    Atomics.store(seq.cells, seq.index, (n + 1) | 0);
    return lean.start(call, collTag(n, LEAN_SIGNATURES[call]), sendBytes, allgather ? 0 : bb, recvBytes, bb);
  }

  // --- buffer form -------------------------------------------------------------

  /**
   * Sends sendbuf to every out-neighbour; block i of recvbuf (indegree blocks of sendbuf's size)
   * gets in-neighbour i's.
   * @throws MPIError(ERR_COUNT) when recvbuf does not hold indegree blocks; ERR_BUFFER, ERR_TYPE for bad buffers
   * @example await cart.NeighborAllgather(mine, new Float64Array(2 * cart.ndims * mine.length));
   */
  NeighborAllgather(sendbuf: BufSpec, recvbuf: BufSpec): Promise<void> {
    return this.#exchangeBlocking('NeighborAllgather', sendbuf, recvbuf, true);
  }
  /** Nonblocking NeighborAllgather. */
  IneighborAllgather(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#exchangeNonblocking('IneighborAllgather', sendbuf, recvbuf, true);
  }
  /** Persistent NeighborAllgather (MPI 4.0): start(), then wait(), as often as wanted. */
  NeighborAllgatherInit(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#exchangePersistent('NeighborAllgatherInit', this.#allgatherArgs(sendbuf, recvbuf, 'NeighborAllgatherInit'), recvbuf);
  }

  /** NeighborAllgather with blocks of varying size: in-neighbour i's block lands at displs[i] with counts[i] items. */
  NeighborAllgatherv(sendbuf: BufSpec, recvbuf: VBufSpec): Promise<void> {
    return this.#blocking('NeighborAllgatherv', this.#allgatherv(sendbuf, recvbuf, 'NeighborAllgatherv'));
  }
  /** Nonblocking NeighborAllgatherv. */
  IneighborAllgatherv(sendbuf: BufSpec, recvbuf: VBufSpec): Request<void> {
    return this.#nonblocking('IneighborAllgatherv', this.#allgatherv(sendbuf, recvbuf, 'IneighborAllgatherv'), vBase(recvbuf));
  }
  /** Persistent NeighborAllgatherv. */
  NeighborAllgathervInit(sendbuf: BufSpec, recvbuf: VBufSpec): Request<void> {
    return this.#persistent('NeighborAllgathervInit', this.#allgatherv(sendbuf, recvbuf, 'NeighborAllgathervInit'), vBase(recvbuf));
  }

  /**
   * Block j of sendbuf (outdegree blocks) goes to out-neighbour j; block i of recvbuf (indegree
   * blocks of the same size) comes from in-neighbour i.
   * @throws MPIError(ERR_COUNT) when the buffers do not hold whole blocks of one size
   * @example await cart.NeighborAlltoall(halosOut, halosIn); // a halo exchange
   */
  NeighborAlltoall(sendbuf: BufSpec, recvbuf: BufSpec): Promise<void> {
    return this.#exchangeBlocking('NeighborAlltoall', sendbuf, recvbuf, false);
  }
  /** Nonblocking NeighborAlltoall. */
  IneighborAlltoall(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#exchangeNonblocking('IneighborAlltoall', sendbuf, recvbuf, false);
  }
  /** Persistent NeighborAlltoall. */
  NeighborAlltoallInit(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#exchangePersistent('NeighborAlltoallInit', this.#alltoallArgs(sendbuf, recvbuf, 'NeighborAlltoallInit'), recvbuf);
  }

  /** NeighborAlltoall with blocks of varying size (counts and displs in items, one per neighbour). */
  NeighborAlltoallv(sendbuf: VBufSpec, recvbuf: VBufSpec): Promise<void> {
    return this.#blocking('NeighborAlltoallv', this.#alltoallv(sendbuf, recvbuf, 'NeighborAlltoallv'));
  }
  /** Nonblocking NeighborAlltoallv. */
  IneighborAlltoallv(sendbuf: VBufSpec, recvbuf: VBufSpec): Request<void> {
    return this.#nonblocking('IneighborAlltoallv', this.#alltoallv(sendbuf, recvbuf, 'IneighborAlltoallv'), vBase(recvbuf));
  }
  /** Persistent NeighborAlltoallv. */
  NeighborAlltoallvInit(sendbuf: VBufSpec, recvbuf: VBufSpec): Request<void> {
    return this.#persistent('NeighborAlltoallvInit', this.#alltoallv(sendbuf, recvbuf, 'NeighborAlltoallvInit'), vBase(recvbuf));
  }

  /**
   * NeighborAlltoall with a datatype per block and displacements in bytes:
   * `[buf, counts, byteDispls, types]`, one entry per neighbour.
   * @throws MPIError(ERR_BUFFER) for a malformed spec; ERR_COUNT, ERR_TYPE for a bad block
   */
  NeighborAlltoallw(sendbuf: WBufSpec, recvbuf: WBufSpec): Promise<void> {
    return this.#blocking('NeighborAlltoallw', this.#alltoallw(sendbuf, recvbuf, 'NeighborAlltoallw'));
  }
  /** Nonblocking NeighborAlltoallw. */
  IneighborAlltoallw(sendbuf: WBufSpec, recvbuf: WBufSpec): Request<void> {
    return this.#nonblocking('IneighborAlltoallw', this.#alltoallw(sendbuf, recvbuf, 'IneighborAlltoallw'), null);
  }
  /** Persistent NeighborAlltoallw. */
  NeighborAlltoallwInit(sendbuf: WBufSpec, recvbuf: WBufSpec): Request<void> {
    const run = this.#alltoallw(sendbuf, recvbuf, 'NeighborAlltoallwInit');
    return this.#persistent('NeighborAlltoallwInit', run, recvbuf[0]);
  }
}

/** NeighborAlltoall's or NeighborAllgather's checked arguments: block j of the send side at j * sendStride, blocks of bb bytes. */
interface ExchangeArgs {
  readonly plan: NeighborPlan;
  readonly send: ResolvedBuf;
  readonly recv: ResolvedBuf;
  readonly sendStride: number;
  readonly bb: number;
}

/** The checked body of NeighborAlltoall or NeighborAllgather (every form but the lean path and a planned …Init). */
function exchangeRun(a: ExchangeArgs): Run {
  const { plan, send, recv, sendStride, bb } = a;
  return async (pt, tag) => {
    // packedOf: a non-contiguous recvbuf's current contents, so PROC_NULL blocks stay as they were
    const area = packedOf(recv);
    await neighborAlltoall(pt, tag, plan, packedOf(send), sendStride, area, bb, pt.call);
    unpackArea(recv, area);
  };
}

/** The calls with a lean path, and the signatures their tags carry (coll/signature.ts), as _collStart gives them. */
type LeanCall = 'NeighborAlltoall' | 'IneighborAlltoall' | 'NeighborAllgather' | 'IneighborAllgather';
const LEAN_SIGNATURES: Readonly<Record<LeanCall, number>> = {
  NeighborAlltoall: signatureOf('NeighborAlltoall'),
  IneighborAlltoall: signatureOf('IneighborAlltoall'),
  NeighborAllgather: signatureOf('NeighborAllgather'),
  IneighborAllgather: signatureOf('IneighborAllgather'),
};

/** A plain typed array (not a DataView): its bytes are the packed items of a predefined datatype. */
function isTypedArray(x: unknown): x is ArrayBufferView & { readonly BYTES_PER_ELEMENT: number } {
  return ArrayBuffer.isView(x) && !(x instanceof DataView);
}

/** Bytes of one item of a plain typed array (its predefined datatype's size). */
function itemBytesOf(x: ArrayBufferView & { readonly BYTES_PER_ELEMENT: number }): number {
  return x.BYTES_PER_ELEMENT;
}

/**
 * Whether the lean path may keep a byte view of `x` for the next call: keeping it keeps x's whole
 * buffer alive until then, which for small arrays cut from a large buffer could be much more.
 */
function keepView(x: ArrayBufferView): boolean {
  return x.buffer.byteLength <= KEEP_VIEW_BYTES;
}
const KEEP_VIEW_BYTES = 1 << 20;
const NO_BYTES = new Uint8Array(0);

function encode(value: unknown, call: string): Uint8Array {
  return encodeObject(value, call).slice();
}

/** The one block size of NeighborAlltoall: recvbuf's indegree blocks and sendbuf's outdegree blocks must agree. */
function blockBytes(send: ResolvedBuf, recv: ResolvedBuf, outdegree: number, indegree: number, call: string): number {
  const of = (rb: ResolvedBuf, n: number, arg: string): number | null => {
    if (n === 0) {
      if (rb.packedBytes !== 0) throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.packedBytes} bytes but there are no ${arg === 'sendbuf' ? 'out' : 'in'}-neighbours: expected 0`);
      return null;
    }
    if (rb.packedBytes % n !== 0 || (rb.packedBytes / n) % rb.datatype.size !== 0) {
      throw mpiError(ERR_COUNT, call, `${arg} holds ${rb.count} items of ${rb.datatype.name}, not a multiple of ${n} (one block per ${arg === 'sendbuf' ? 'out' : 'in'}-neighbour)`);
    }
    return rb.packedBytes / n;
  };
  const sb = of(send, outdegree, 'sendbuf');
  const rbb = of(recv, indegree, 'recvbuf');
  if (sb !== null && rbb !== null && sb !== rbb) {
    throw mpiError(ERR_COUNT, call, `sendbuf's blocks are ${sb} bytes but recvbuf's are ${rbb} bytes: they must match`);
  }
  return sb ?? rbb ?? 0;
}
