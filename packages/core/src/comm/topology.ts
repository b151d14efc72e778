/**
 * A communicator's virtual topology (pure): what it is, how it is stored in
 * the communicator's object-table record (so that another thread, or a dup,
 * sees the same topology), its neighbour lists for the neighborhood
 * collectives, and reorder's rank keys.
 *
 * Source: MPI 4.0 chapter 8 (section 8.6 for the neighbour order).
 *
 * Record blob (little-endian int32s; the record belongs to one endpoint, so a
 * distributed graph's lists are the caller's own adjacency):
 * ```
 *   cart        1, ndims, dims[ndims], periods[ndims] (0/1)
 *   graph       2, nnodes, nedges, index[nnodes], edges[nedges]
 *   dist_graph  3, indegree, outdegree, weighted (0/1),
 *               sources[in], sourceWeights[in], destinations[out], destWeights[out]
 * ```
 */
import { cartNeighbors, cartSendOrder } from './cart.ts';
import { graphNeighbors } from './graph.ts';

export interface CartTopology {
  readonly kind: 'cart';
  readonly dims: readonly number[];
  readonly periods: readonly boolean[];
}
export interface GraphTopology {
  readonly kind: 'graph';
  readonly index: readonly number[];
  readonly edges: readonly number[];
}
export interface DistGraphTopology {
  readonly kind: 'dist_graph';
  readonly sources: readonly number[];
  readonly destinations: readonly number[];
  /** null: unweighted (MPI_UNWEIGHTED) */
  readonly sourceWeights: readonly number[] | null;
  readonly destWeights: readonly number[] | null;
}
export type Topology = CartTopology | GraphTopology | DistGraphTopology;
export type TopologyKind = Topology['kind'];

const KIND_CODE = { cart: 1, graph: 2, dist_graph: 3 } as const;

/** The record blob of a topology. */
export function encodeTopology(t: Topology): Uint8Array {
  let words: number[];
  if (t.kind === 'cart') {
    words = [KIND_CODE.cart, t.dims.length, ...t.dims, ...t.periods.map((p) => (p ? 1 : 0))];
  } else if (t.kind === 'graph') {
    words = [KIND_CODE.graph, t.index.length, t.edges.length, ...t.index, ...t.edges];
  } else {
    const weighted = t.sourceWeights !== null;
    words = [KIND_CODE.dist_graph, t.sources.length, t.destinations.length, weighted ? 1 : 0, ...t.sources,
      ...(t.sourceWeights ?? []), ...t.destinations, ...(t.destWeights ?? [])];
  }
  const a = Int32Array.from(words);
  return new Uint8Array(a.buffer);
}

/** The topology of a record blob (a copy: the blob may be reused once the record goes); null for an empty blob. */
export function decodeTopology(blob: Uint8Array): Topology | null {
  if (blob.length === 0) return null;
  const w = Array.from(new Int32Array(blob.slice().buffer));
  let at = 1;
  const take = (n: number): number[] => {
    const out = w.slice(at, at + n);
    at += n;
    return out;
  };
  if (w[0] === KIND_CODE.cart) {
    const n = w[at++]!;
    return { kind: 'cart', dims: take(n), periods: take(n).map((p) => p !== 0) };
  }
  if (w[0] === KIND_CODE.graph) {
    const nnodes = w[at++]!;
    const nedges = w[at++]!;
    return { kind: 'graph', index: take(nnodes), edges: take(nedges) };
  }
  const indegree = w[at++]!;
  const outdegree = w[at++]!;
  const weighted = w[at++] === 1;
  const sources = take(indegree);
  const sourceWeights = weighted ? take(indegree) : null;
  const destinations = take(outdegree);
  const destWeights = weighted ? take(outdegree) : null;
  return { kind: 'dist_graph', sources, destinations, sourceWeights, destWeights };
}

/**
 * Who a rank exchanges with in a neighborhood collective: block i of the receive side comes from
 * sources[i], block j of the send side goes to destinations[j] (PROC_NULL: nothing moves, the
 * receive block is left as it was), and the sends are posted in sendOrder (indices into
 * destinations) so that, with one tag, repeated neighbours pair up as MPI defines.
 */
export interface NeighborLists {
  readonly sources: readonly number[];
  readonly destinations: readonly number[];
  readonly sendOrder: readonly number[];
}

/** The neighbour lists of `rank` (its rank in the topology communicator). */
export function neighborLists(t: Topology, rank: number): NeighborLists {
  if (t.kind === 'cart') {
    const n = cartNeighbors(t.dims, t.periods, rank);
    return { sources: n, destinations: n, sendOrder: cartSendOrder(t.dims.length) };
  }
  if (t.kind === 'graph') {
    const n = graphNeighbors(t.index, t.edges, rank);
    return { sources: n, destinations: n, sendOrder: n.map((_, i) => i) };
  }
  return { sources: t.sources, destinations: t.destinations, sendOrder: t.destinations.map((_, i) => i) };
}

/**
 * reorder = true: the new rank of each old rank, so that the ranks of one host are consecutive
 * (hosts in the order of their first rank, ranks of one host in their old order). Consecutive
 * ranks are neighbours along the last Cartesian dimension and, for a graph numbered with
 * locality, along its edges, so more neighbours share a host. Identity when every rank is on one
 * host, or when the hosts' ranks are already contiguous (mpiexec's block placement).
 * @param hosts the host label of each old rank
 */
export function reorderKeys(hosts: readonly string[]): number[] {
  const firstSeen = new Map<string, number>();
  hosts.forEach((h, i) => {
    if (!firstSeen.has(h)) firstSeen.set(h, i);
  });
  const order = hosts.map((_, i) => i).sort((a, b) => firstSeen.get(hosts[a]!)! - firstSeen.get(hosts[b]!)! || a - b);
  const keys = new Array<number>(hosts.length);
  order.forEach((old, newRank) => (keys[old] = newRank));
  return keys;
}
