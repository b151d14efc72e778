/**
 * The topology communicators (API.md "Topologies and neighborhood
 * collectives"; MPI 4.0 chapter 8): CartComm, GraphComm and DistGraphComm,
 * each a TopoComm (neighbor-comm.ts) over the topology its object-table
 * record keeps (comm/topology.ts), so that dup (Comm._topologySpec) and a
 * revived copy in another thread (revive.ts, topologyCommOf) are of the same
 * class with the same topology.
 *
 * The arithmetic is comm/cart.ts and comm/graph.ts; this file checks the
 * arguments (STYLE.md rule 19) and answers from the record. Local queries
 * (coords, shift, neighbors, ...) are not collective; sub is.
 */
import { cartCoords, cartRank, cartShift, cartSub, graphNeighbors, wrapCoords, type CartTopology, type DistGraphTopology, type GraphTopology, type Topology } from '../comm/index.ts';
import { ERR_ARG, ERR_RANK, mpiError } from '../util/index.ts';
import { describe } from './buffer.ts';
import type { Comm, TopologySpec } from './comm.ts';
import { TopoComm } from './neighbor-comm.ts';

/** The spec that makes a topology communicator of `topology` (Comm's creations and dup take it). */
export function topologySpec(topology: Topology): TopologySpec {
  return { topology, make: (name, ctx, endpoints) => topologyCommOf(topology, name, ctx, endpoints) };
}

/** The wrapper class of a topology (revive.ts calls it for a record with a topology). */
export function topologyCommOf(topology: Topology, name: string, ctx: number, endpoints: Int32Array): Comm {
  if (topology.kind === 'cart') return new CartComm(name, ctx, endpoints, topology);
  if (topology.kind === 'graph') return new GraphComm(name, ctx, endpoints, topology);
  return new DistGraphComm(name, ctx, endpoints, topology);
}

function intArg(x: unknown, call: string, arg: string): number {
  if (typeof x !== 'number' || !Number.isSafeInteger(x)) throw mpiError(ERR_ARG, call, `${arg} is ${describe(x)}: expected an integer`);
  return x;
}

/** A Cartesian communicator (MPI_Cart_create). Ranks are row-major over `dims`. */
export class CartComm extends TopoComm {
  declare readonly _topo: CartTopology;

  override get topology(): 'cart' {
    return 'cart';
  }
  /** @internal */
  override _topologySpec(): TopologySpec {
    return topologySpec(this._topo);
  }
  /** The number of dimensions. */
  get ndims(): number {
    return this._topo.dims.length;
  }
  /** The size of each dimension (a copy). */
  get dims(): number[] {
    return this._topo.dims.slice();
  }
  /** Whether each dimension wraps around (a copy). */
  get periods(): boolean[] {
    return this._topo.periods.slice();
  }
  /** The caller's coordinates. @throws MPIError(ERR_COMM) on a freed communicator */
  get coords(): number[] {
    this._me('CartComm.coords');
    return cartCoords(this._topo.dims, this.rank);
  }

  /**
   * The rank at `coords` (MPI_Cart_rank); coordinates of a periodic dimension wrap.
   * @throws MPIError(ERR_ARG) when coords has not ndims integers, or one is outside a non-periodic dimension
   * @example const east = cart.getCartRank([cart.coords[0], cart.coords[1] + 1]);
   */
  getCartRank(coords: number[]): number {
    const call = 'CartComm.getCartRank';
    this._checkNotFreed(call);
    const { dims, periods } = this._topo;
    if (!Array.isArray(coords) || coords.length !== dims.length) {
      throw mpiError(ERR_ARG, call, `coords is ${describe(coords)}: expected ${dims.length} integers (one per dimension)`);
    }
    coords.forEach((c, i) => intArg(c, call, `coords[${i}]`));
    const wrapped = wrapCoords(dims, periods, coords);
    if (typeof wrapped === 'number') {
      const i = -1 - wrapped;
      throw mpiError(ERR_ARG, call, `coords[${i}] is ${coords[i]}: expected 0..${dims[i]! - 1} (dimension ${i} is not periodic)`);
    }
    return cartRank(dims, wrapped);
  }

  /**
   * The coordinates of `rank` (MPI_Cart_coords).
   * @throws MPIError(ERR_RANK) when rank is not 0..size-1
   */
  getCoords(rank: number): number[] {
    const call = 'CartComm.getCoords';
    this._checkNotFreed(call);
    if (!Number.isSafeInteger(rank) || rank < 0 || rank >= this.size) {
      throw mpiError(ERR_RANK, call, `rank ${String(rank)} is out of range for ${this.name} (size ${this.size}): expected 0..${this.size - 1}`);
    }
    return cartCoords(this._topo.dims, rank);
  }

  /**
   * The ranks `disp` steps back (source) and forward (dest) along `direction` from the caller
   * (MPI_Cart_shift); PROC_NULL off the edge of a non-periodic dimension.
   * @param disp any integer (default 1)
   * @throws MPIError(ERR_ARG) when direction is not 0..ndims-1 or disp is not an integer
   * @example const [left, right] = cart.shift(1); await cart.Sendrecv(edge, right, 0, halo, left, 0);
   */
  shift(direction: number, disp = 1): [source: number, dest: number] {
    const call = 'CartComm.shift';
    this._me(call);
    const n = this._topo.dims.length;
    if (!Number.isSafeInteger(direction) || direction < 0 || direction >= n) {
      throw mpiError(ERR_ARG, call, `direction ${String(direction)} is invalid: expected 0..${n - 1} (ndims ${n})`);
    }
    intArg(disp, call, 'disp');
    return cartShift(this._topo.dims, this._topo.periods, this.rank, direction, disp);
  }

  /**
   * Splits the grid into sub-grids that keep the dimensions marked true (MPI_Cart_sub); the
   * caller's sub-grid is a CartComm of those dimensions (of none: size 1). Collective.
   * @throws MPIError(ERR_ARG) unless remainDims has ndims booleans
   * @example const row = await cart.sub([false, true]);
   */
  sub(remainDims: boolean[]): Promise<CartComm> {
    const call = 'CartComm.sub';
    this._me(call);
    const { dims, periods } = this._topo;
    if (!Array.isArray(remainDims) || remainDims.length !== dims.length || !remainDims.every((b) => typeof b === 'boolean')) {
      throw mpiError(ERR_ARG, call, `remainDims is ${describe(remainDims)}: expected ${dims.length} booleans (one per dimension)`);
    }
    const s = cartSub(dims, periods, this.rank, remainDims);
    const spec = topologySpec({ kind: 'cart', dims: s.dims, periods: s.periods });
    return this._createPlaced(call, { color: String(s.color), key: s.key, topology: spec }, `${this.name}.sub`) as Promise<CartComm>;
  }
}

/** A graph communicator (MPI_Graph_create): every rank knows the whole graph. */
export class GraphComm extends TopoComm {
  declare readonly _topo: GraphTopology;

  override get topology(): 'graph' {
    return 'graph';
  }
  /** @internal */
  override _topologySpec(): TopologySpec {
    return topologySpec(this._topo);
  }
  /** index[i]: the number of edges of nodes 0..i (a copy). */
  get index(): number[] {
    return this._topo.index.slice();
  }
  /** The neighbours of node 0, then node 1, ... (a copy). */
  get edges(): number[] {
    return this._topo.edges.slice();
  }
  /**
   * The neighbours of `rank`, in edge order (MPI_Graph_neighbors).
   * @throws MPIError(ERR_RANK) when rank is not 0..size-1
   */
  neighbors(rank: number): number[] {
    const call = 'GraphComm.neighbors';
    this._checkNotFreed(call);
    if (!Number.isSafeInteger(rank) || rank < 0 || rank >= this.size) {
      throw mpiError(ERR_RANK, call, `rank ${String(rank)} is out of range for ${this.name} (size ${this.size}): expected 0..${this.size - 1}`);
    }
    return graphNeighbors(this._topo.index, this._topo.edges, rank);
  }
}

/** A distributed graph communicator (MPI_Dist_graph_create(_adjacent)): each rank knows its own edges. */
export class DistGraphComm extends TopoComm {
  declare readonly _topo: DistGraphTopology;

  override get topology(): 'dist_graph' {
    return 'dist_graph';
  }
  /** @internal */
  override _topologySpec(): TopologySpec {
    return topologySpec(this._topo);
  }
  /** The ranks that send to the caller, in neighbour order (MPI_Dist_graph_neighbors). */
  inNeighbors(): number[] {
    this._checkNotFreed('DistGraphComm.inNeighbors');
    return this._topo.sources.slice();
  }
  /** The ranks the caller sends to, in neighbour order. */
  outNeighbors(): number[] {
    this._checkNotFreed('DistGraphComm.outNeighbors');
    return this._topo.destinations.slice();
  }
  /** The weights of the in-edges, or null when the graph was created without weights. */
  get inWeights(): number[] | null {
    return this._topo.sourceWeights?.slice() ?? null;
  }
  /** The weights of the out-edges, or null when the graph was created without weights. */
  get outWeights(): number[] | null {
    return this._topo.destWeights?.slice() ?? null;
  }
}
