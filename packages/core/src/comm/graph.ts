/**
 * Graph and distributed-graph topology logic (pure): validation of
 * MPI_Graph_create's (index, edges), a node's neighbours, and the adjacency
 * each rank gets from MPI_Dist_graph_create's scattered edge lists.
 *
 * Source: MPI 4.0 sections 8.5.3 (MPI_GRAPH_CREATE: index[i] is the total
 * degree of nodes 0..i, edges holds the neighbours of node 0, then node 1, ...;
 * self-loops and multiple edges are allowed), 8.5.4 (MPI_DIST_GRAPH_CREATE:
 * every process may name any edges; each edge is known to both ends) and 8.5.5
 * (neighbour order: as given for the adjacent form; for the general form
 * unspecified, here: by the rank that named the edge, then in its order).
 */
import { ERR_ARG, mpiError } from '../util/index.ts';

/**
 * Checks MPI_Graph_create's arrays for a communicator of `commSize` ranks.
 * @throws MPIError(ERR_ARG) naming `call` when index is not a non-decreasing
 *   list of non-negative integers ending at edges.length, an edge is outside 0..nnodes-1, or
 *   nnodes exceeds commSize
 */
export function checkGraph(index: readonly number[], edges: readonly number[], commSize: number, call: string): void {
  const nnodes = index.length;
  if (nnodes > commSize) throw mpiError(ERR_ARG, call, `index has ${nnodes} nodes but the communicator has ${commSize} ranks: expected at most ${commSize}`);
  let prev = 0;
  for (let i = 0; i < nnodes; i++) {
    const v = index[i];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < prev) {
      throw mpiError(ERR_ARG, call, `index[${i}] is ${String(v)}: expected a non-decreasing integer >= ${prev} (index[i] counts the edges of nodes 0..i)`);
    }
    prev = v;
  }
  if (prev !== edges.length) throw mpiError(ERR_ARG, call, `index ends at ${prev} but edges has ${edges.length} entries: they must agree`);
  for (let i = 0; i < edges.length; i++) {
    const e = edges[i];
    if (typeof e !== 'number' || !Number.isSafeInteger(e) || e < 0 || e >= nnodes) {
      throw mpiError(ERR_ARG, call, `edges[${i}] is ${String(e)}: expected a node 0..${nnodes - 1}`);
    }
  }
}

/** The neighbours of `node` in a checked graph, in edge order. */
export function graphNeighbors(index: readonly number[], edges: readonly number[], node: number): number[] {
  const from = node === 0 ? 0 : index[node - 1]!;
  return edges.slice(from, index[node]!);
}

/** One edge a rank names in MPI_Dist_graph_create, and the weight it gives it (0 when unweighted). */
export interface DistEdge {
  readonly source: number;
  readonly dest: number;
  readonly weight: number;
}

/** What rank r tells rank q about q's adjacency: edges into q (q is dest) and out of q (q is source). */
export interface EdgeNotice {
  readonly into: [source: number, weight: number][];
  readonly outOf: [dest: number, weight: number][];
}

/** Sorts the edges a rank names into one notice per rank of a communicator of `size` ranks. */
export function noticesOf(edges: readonly DistEdge[], size: number): EdgeNotice[] {
  const out = Array.from({ length: size }, (): EdgeNotice => ({ into: [], outOf: [] }));
  for (const e of edges) {
    out[e.dest]!.into.push([e.source, e.weight]);
    out[e.source]!.outOf.push([e.dest, e.weight]);
  }
  return out;
}

/** A rank's adjacency from the notices every rank sent it (indexed by sender): in sender order. */
export function adjacencyOf(received: readonly EdgeNotice[]): { sources: number[]; sourceWeights: number[]; destinations: number[]; destWeights: number[] } {
  const sources: number[] = [];
  const sourceWeights: number[] = [];
  const destinations: number[] = [];
  const destWeights: number[] = [];
  for (const n of received) {
    for (const [s, w] of n.into) {
      sources.push(s);
      sourceWeights.push(w);
    }
    for (const [d, w] of n.outOf) {
      destinations.push(d);
      destWeights.push(w);
    }
  }
  return { sources, sourceWeights, destinations, destWeights };
}
