/**
 * Creating topology communicators (API.md "Topologies and neighborhood
 * collectives"; MPI 4.0 sections 8.5.1-8.5.4): Comm's createCart,
 * createGraph, createDistGraphAdjacent and createDistGraph, and
 * MPI.computeDims.
 *
 * They are Comm methods, installed on Comm.prototype here (as
 * mpi4py-names.ts installs its aliases) because the classes they make extend
 * Comm, so comm.ts cannot import them. Each is a split-like creation
 * (Comm._createPlaced: one allgather of (color, key), one context id) whose
 * placement says who is in the new communicator, at which rank, with which
 * topology; ranks outside a Cartesian grid or graph get null
 * (MPI_COMM_NULL).
 *
 * reorder: true puts the ranks of one host next to each other
 * (comm/topology.ts reorderKeys), so that neighbours along the last Cartesian
 * dimension, or along a graph numbered with locality, share a host. It costs
 * one more allgather (of host names); with every rank on one host, or hosts
 * already holding consecutive ranks (mpiexec's placement), the order stays
 * the identity. A distributed graph keeps its ranks (its edges name ranks of
 * the old communicator; MPI allows reorder to be ignored).
 */
import os from 'node:os';
import {
  adjacencyOf, checkGraph, computeDims, gridSize, noticesOf, reorderKeys, type DistEdge, type EdgeNotice, type Topology,
} from '../comm/index.ts';
import { hostLabel } from '../config/index.ts';
import { ERR_ARG, ERR_DIMS, mpiError } from '../util/index.ts';
import { describe } from './buffer.ts';
import { Comm, type Placement } from './comm.ts';
import { CartComm, DistGraphComm, GraphComm, topologySpec } from './topology-comm.ts';

export { computeDims };

/** Options of the distributed graph creations (API.md). */
export interface DistGraphOptions {
  /** weights of the in-edges (createDistGraphAdjacent); omit both for an unweighted graph */
  sourceWeights?: number[];
  /** weights of the out-edges (createDistGraphAdjacent), or of each named edge (createDistGraph) */
  destWeights?: number[];
  /** accepted and ignored (MPI allows it) */
  info?: unknown;
  /** accepted; the ranks stay as they are (see the file comment) */
  reorder?: boolean;
}

declare module './comm.ts' {
  interface Comm {
    /**
     * A Cartesian communicator over the first product(dims) ranks (MPI_Cart_create); the other
     * ranks get null. Collective.
     * @param periods whether each dimension wraps (default: none)
     * @param reorder let the ranks be renumbered so that neighbours share a host (default false)
     * @throws MPIError(ERR_DIMS) for a dimension that is not a positive integer; ERR_ARG when the grid
     *   is larger than the communicator or periods does not match dims
     * @example const cart = await MPI.COMM_WORLD.createCart(MPI.computeDims(size, 2), [true, true]);
     */
    createCart(dims: number[], periods?: boolean[], reorder?: boolean): Promise<CartComm | null>;
    /**
     * A graph communicator over the first index.length ranks (MPI_Graph_create); the other ranks
     * get null. Every rank passes the same graph. Collective.
     * @throws MPIError(ERR_ARG) for inconsistent index / edges or a graph larger than the communicator
     */
    createGraph(index: number[], edges: number[], reorder?: boolean): Promise<GraphComm | null>;
    /**
     * A distributed graph communicator in which the caller receives from `sources` and sends to
     * `destinations` (MPI_Dist_graph_create_adjacent); the lists are the neighbour order. Collective.
     * @throws MPIError(ERR_ARG) for a rank outside the communicator or weights of the wrong length
     */
    createDistGraphAdjacent(sources: number[], destinations: number[], opts?: DistGraphOptions): Promise<DistGraphComm>;
    /**
     * A distributed graph communicator from edges any rank may name (MPI_Dist_graph_create): the
     * caller names degrees[i] edges from sources[i], to the next degrees[i] entries of
     * destinations (weights in opts.destWeights, one per destination entry). Each rank's
     * neighbours come in the order of the naming ranks, then of their lists. Collective.
     * @throws MPIError(ERR_ARG) for inconsistent lists or a rank outside the communicator
     */
    createDistGraph(sources: number[], degrees: number[], destinations: number[], opts?: DistGraphOptions): Promise<DistGraphComm>;
  }
}

/** A list of ranks of a communicator of `size` (ERR_ARG naming the argument otherwise). */
function rankList(x: unknown, size: number, call: string, arg: string): number[] {
  if (!Array.isArray(x)) throw mpiError(ERR_ARG, call, `${arg} is ${describe(x)}: expected an array of ranks 0..${size - 1}`);
  x.forEach((r, i) => {
    if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0 || r >= size) {
      throw mpiError(ERR_ARG, call, `${arg}[${i}] is ${String(r)}: expected a rank 0..${size - 1}`);
    }
  });
  return x.slice() as number[];
}

/** Weights: absent, or one non-negative integer per entry of the list they weigh. */
function weights(x: unknown, n: number, call: string, arg: string): number[] | null {
  if (x === undefined) return null;
  if (!Array.isArray(x) || x.length !== n || !x.every((w) => typeof w === 'number' && Number.isSafeInteger(w) && w >= 0 && w <= 0x7fffffff)) {
    throw mpiError(ERR_ARG, call, `${arg} is ${describe(x)}: expected ${n} integers 0..2147483647 (one per edge)`);
  }
  return x.slice() as number[];
}

function options(opts: unknown, call: string): DistGraphOptions {
  if (opts === undefined) return {};
  if (opts === null || typeof opts !== 'object') throw mpiError(ERR_ARG, call, `opts is ${describe(opts)}: expected an object { sourceWeights?, destWeights?, info?, reorder? }`);
  return opts as DistGraphOptions;
}

/**
 * The placement of the caller in a topology over the first `nnodes` positions: its position is
 * its rank, or with reorder its host-grouped rank from an allgather started now (so that it is
 * ordered before the creation's own collective, at every rank).
 */
function place(comm: Comm, nnodes: number, reorder: boolean, topology: Topology): Promise<Placement> | Placement {
  const spec = topologySpec(topology);
  const at = (key: number): Placement => ({ color: key < nnodes ? 'topology' : null, key, topology: spec });
  if (!reorder) return at(comm.rank);
  return comm.allgather(hostLabel(os.hostname())).then((hosts) => at(reorderKeys(hosts)[comm.rank]!));
}

function createCart(this: Comm, dims: number[], periods?: boolean[], reorder = false): Promise<CartComm | null> {
  const call = 'Comm.createCart';
  this._me(call);
  if (!Array.isArray(dims)) throw mpiError(ERR_DIMS, call, `dims is ${describe(dims)}: expected an array of positive integers`);
  dims.forEach((d, i) => {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 1) throw mpiError(ERR_DIMS, call, `dims[${i}] is ${String(d)}: expected an integer >= 1`);
  });
  const p = periods ?? dims.map(() => false);
  if (!Array.isArray(p) || p.length !== dims.length || !p.every((b) => typeof b === 'boolean')) {
    throw mpiError(ERR_ARG, call, `periods is ${describe(periods)}: expected ${dims.length} booleans (one per dimension)`);
  }
  const nnodes = gridSize(dims);
  if (nnodes > this.size) throw mpiError(ERR_ARG, call, `the grid ${dims.join('x')} has ${nnodes} points but ${this.name} has ${this.size} ranks: expected at most ${this.size}`);
  const placement = place(this, nnodes, reorder === true, { kind: 'cart', dims: dims.slice(), periods: p.slice() });
  return this._createPlaced(call, placement, `${this.name}.cart`) as Promise<CartComm | null>;
}

function createGraph(this: Comm, index: number[], edges: number[], reorder = false): Promise<GraphComm | null> {
  const call = 'Comm.createGraph';
  this._me(call);
  if (!Array.isArray(index)) throw mpiError(ERR_ARG, call, `index is ${describe(index)}: expected an array of integers`);
  if (!Array.isArray(edges)) throw mpiError(ERR_ARG, call, `edges is ${describe(edges)}: expected an array of integers`);
  checkGraph(index, edges, this.size, call);
  const placement = place(this, index.length, reorder === true, { kind: 'graph', index: index.slice(), edges: edges.slice() });
  return this._createPlaced(call, placement, `${this.name}.graph`) as Promise<GraphComm | null>;
}

function createDistGraphAdjacent(this: Comm, sources: number[], destinations: number[], opts?: DistGraphOptions): Promise<DistGraphComm> {
  const call = 'Comm.createDistGraphAdjacent';
  this._me(call);
  const o = options(opts, call);
  const s = rankList(sources, this.size, call, 'sources');
  const d = rankList(destinations, this.size, call, 'destinations');
  const sw = weights(o.sourceWeights, s.length, call, 'sourceWeights');
  const dw = weights(o.destWeights, d.length, call, 'destWeights');
  if ((sw === null) !== (dw === null)) throw mpiError(ERR_ARG, call, 'give both sourceWeights and destWeights, or neither (an unweighted graph)');
  const topology: Topology = { kind: 'dist_graph', sources: s, destinations: d, sourceWeights: sw, destWeights: dw };
  return this._createPlaced(call, { color: 'topology', key: this.rank, topology: topologySpec(topology) }, `${this.name}.distGraph`) as Promise<DistGraphComm>;
}

function createDistGraph(this: Comm, sources: number[], degrees: number[], destinations: number[], opts?: DistGraphOptions): Promise<DistGraphComm> {
  const call = 'Comm.createDistGraph';
  this._me(call);
  const o = options(opts, call);
  const size = this.size;
  const s = rankList(sources, size, call, 'sources');
  const d = rankList(destinations, size, call, 'destinations');
  if (!Array.isArray(degrees) || degrees.length !== s.length || !degrees.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0)) {
    throw mpiError(ERR_ARG, call, `degrees is ${describe(degrees)}: expected ${s.length} integers >= 0 (one per source)`);
  }
  const total = degrees.reduce((a, b) => a + b, 0);
  if (total !== d.length) throw mpiError(ERR_ARG, call, `degrees add up to ${total} but destinations has ${d.length} entries: they must agree`);
  if (o.sourceWeights !== undefined) throw mpiError(ERR_ARG, call, 'sourceWeights is for createDistGraphAdjacent: give the weight of each named edge in destWeights');
  const w = weights(o.destWeights, d.length, call, 'destWeights');
  const edges: DistEdge[] = [];
  let k = 0;
  s.forEach((source, i) => {
    for (let j = 0; j < degrees[i]!; j++, k++) edges.push({ source, dest: d[k]!, weight: w?.[k] ?? 0 });
  });
  // The exchange is started now, before the creation's collective, so that both keep call order.
  const placement = this.alltoall(noticesOf(edges, size)).then((received: EdgeNotice[]): Placement => {
    const adj = adjacencyOf(received);
    const topology: Topology = {
      kind: 'dist_graph', sources: adj.sources, destinations: adj.destinations,
      sourceWeights: w === null ? null : adj.sourceWeights, destWeights: w === null ? null : adj.destWeights,
    };
    return { color: 'topology', key: this.rank, topology: topologySpec(topology) };
  });
  return this._createPlaced(call, placement, `${this.name}.distGraph`) as Promise<DistGraphComm>;
}

for (const [name, fn] of Object.entries({ createCart, createGraph, createDistGraphAdjacent, createDistGraph })) {
  Object.defineProperty(Comm.prototype, name, { value: fn, writable: true, configurable: true, enumerable: false });
}
