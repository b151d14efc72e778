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
 */
import { neighborAlltoall, neighborAlltoallBytes, neighborAlltoallv, type NeighborPlan, type VBuffer } from '../coll/index.ts';
import { neighborLists, type Topology } from '../comm/index.ts';
import { ERR_ARG, ERR_COUNT, decodeObject, encodeObject, mpiError } from '../util/index.ts';
import { Comm } from './comm.ts';
import { CommCollPt2pt } from './coll-pt2pt.ts';
import {
  describe, packedOf, packV, resolveBuf, resolveV, resolveW, stageW, unpackArea, unpackV, unstageW, type BufSpec, type ResolvedBuf, type WBufSpec,
} from './buffer.ts';
import { Request } from './request.ts';
import { vBase, type VBufSpec } from './coll-runs.ts';

export type { WBufSpec } from './buffer.ts';

type Run = (pt: CommCollPt2pt, tag: number) => Promise<void>;

/** `n` blocks of `bytes` bytes at 0, bytes, 2 * bytes, ... (or all at 0: the allgather's one send block). */
function uniform(buf: Uint8Array, n: number, bytes: number, sameBlock = false): VBuffer {
  return { buf, counts: new Array<number>(n).fill(bytes), displs: Array.from({ length: n }, (_, i) => (sameBlock ? 0 : i * bytes)) };
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

  #allgather(sendbuf: BufSpec, recvbuf: BufSpec, call: string): Run {
    const plan = this._neighbors(call);
    const send = resolveBuf(sendbuf, call, 'sendbuf');
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const bb = send.packedBytes;
    const indegree = plan.sources.length;
    if (recv.packedBytes !== indegree * bb) {
      throw mpiError(ERR_COUNT, call, `recvbuf holds ${recv.packedBytes} bytes: expected ${indegree} blocks (one per in-neighbour) of sendbuf's ${bb} bytes`);
    }
    return async (pt, tag) => {
      // packedOf: a non-contiguous recvbuf's current contents, so PROC_NULL blocks stay as they were
      const area = packedOf(recv);
      await neighborAlltoall(pt, tag, plan, packedOf(send), 0, area, bb, call);
      unpackArea(recv, area);
    };
  }

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

  #alltoall(sendbuf: BufSpec, recvbuf: BufSpec, call: string): Run {
    const plan = this._neighbors(call);
    const send = resolveBuf(sendbuf, call, 'sendbuf');
    const recv = resolveBuf(recvbuf, call, 'recvbuf');
    const indegree = plan.sources.length;
    const outdegree = plan.destinations.length;
    const bb = blockBytes(send, recv, outdegree, indegree, call);
    return async (pt, tag) => {
      const area = packedOf(recv);
      await neighborAlltoall(pt, tag, plan, packedOf(send), bb, area, bb, call);
      unpackArea(recv, area);
    };
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

  // --- buffer form -------------------------------------------------------------

  /**
   * Sends sendbuf to every out-neighbour; block i of recvbuf (indegree blocks of sendbuf's size)
   * gets in-neighbour i's.
   * @throws MPIError(ERR_COUNT) when recvbuf does not hold indegree blocks; ERR_BUFFER, ERR_TYPE for bad buffers
   * @example await cart.NeighborAllgather(mine, new Float64Array(2 * cart.ndims * mine.length));
   */
  NeighborAllgather(sendbuf: BufSpec, recvbuf: BufSpec): Promise<void> {
    return this.#blocking('NeighborAllgather', this.#allgather(sendbuf, recvbuf, 'NeighborAllgather'));
  }
  /** Nonblocking NeighborAllgather. */
  IneighborAllgather(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('IneighborAllgather', this.#allgather(sendbuf, recvbuf, 'IneighborAllgather'), recvbuf);
  }
  /** Persistent NeighborAllgather (MPI 4.0): start(), then wait(), as often as wanted. */
  NeighborAllgatherInit(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#persistent('NeighborAllgatherInit', this.#allgather(sendbuf, recvbuf, 'NeighborAllgatherInit'), recvbuf);
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
    return this.#blocking('NeighborAlltoall', this.#alltoall(sendbuf, recvbuf, 'NeighborAlltoall'));
  }
  /** Nonblocking NeighborAlltoall. */
  IneighborAlltoall(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#nonblocking('IneighborAlltoall', this.#alltoall(sendbuf, recvbuf, 'IneighborAlltoall'), recvbuf);
  }
  /** Persistent NeighborAlltoall. */
  NeighborAlltoallInit(sendbuf: BufSpec, recvbuf: BufSpec): Request<void> {
    return this.#persistent('NeighborAlltoallInit', this.#alltoall(sendbuf, recvbuf, 'NeighborAlltoallInit'), recvbuf);
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
