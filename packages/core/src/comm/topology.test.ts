// Topology records, neighbour lists, graph checks, distributed-graph adjacency and reorder keys.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERR_ARG, MPIError, PROC_NULL } from '../util/index.ts';
import { adjacencyOf, checkGraph, graphNeighbors, noticesOf, type DistEdge } from './graph.ts';
import { decodeTopology, encodeTopology, neighborLists, reorderKeys, type Topology } from './topology.ts';

describe('topology record', () => {
  it('round-trips each kind through the blob', () => {
    const ts: Topology[] = [
      { kind: 'cart', dims: [2, 3], periods: [true, false] },
      { kind: 'cart', dims: [], periods: [] },
      { kind: 'graph', index: [2, 3, 4, 6], edges: [1, 3, 0, 3, 0, 2] },
      { kind: 'dist_graph', sources: [1, 2], destinations: [3], sourceWeights: [5, 6], destWeights: [7] },
      { kind: 'dist_graph', sources: [], destinations: [0, 0], sourceWeights: null, destWeights: null },
    ];
    for (const t of ts) expect(decodeTopology(encodeTopology(t))).toEqual(t);
    expect(decodeTopology(new Uint8Array(0))).toBeNull();
  });
});

describe('graph (MPI_Graph_create)', () => {
  // The standard's example (MPI 4.0 section 8.5.3): 4 nodes, edges 0-1, 0-3, 1-0, 2-3, 3-0, 3-2.
  const index = [2, 3, 4, 6];
  const edges = [1, 3, 0, 3, 0, 2];

  it('gives each node its neighbours in edge order', () => {
    expect([0, 1, 2, 3].map((n) => graphNeighbors(index, edges, n))).toEqual([[1, 3], [0], [3], [0, 2]]);
    expect(neighborLists({ kind: 'graph', index, edges }, 3)).toEqual({ sources: [0, 2], destinations: [0, 2], sendOrder: [0, 1] });
  });

  it('rejects inconsistent arrays with ERR_ARG', () => {
    const bad: [number[], number[], number][] = [
      [[2, 1], [0, 1], 4], // decreasing
      [[1, 3], [0, 1], 4], // index ends past edges
      [[1, 2], [0, 2], 4], // edge outside 0..1
      [[1, 2, 3, 4, 5], [0, 1, 2, 3, 4], 4], // more nodes than ranks
      [[-1], [], 4],
    ];
    for (const [i, e, size] of bad) {
      let caught: unknown = null;
      try {
        checkGraph(i, e, size, 'createGraph');
      } catch (err) {
        caught = err;
      }
      expect(caught instanceof MPIError && caught.errorClass === ERR_ARG && caught.call === 'createGraph', `${JSON.stringify([i, e])}`).toBe(true);
    }
    expect(() => checkGraph(index, edges, 4, 'createGraph')).not.toThrow();
    expect(() => checkGraph([], [], 4, 'createGraph')).not.toThrow();
  });
});

describe('distributed graph (MPI_Dist_graph_create)', () => {
  it('gives every rank each edge that touches it, whoever named it, in the namer\'s rank order', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 }).chain((size) => fc.tuple(fc.constant(size),
      fc.array(fc.array(fc.record({ source: fc.nat(size - 1), dest: fc.nat(size - 1), weight: fc.nat(9) }), { maxLength: 4 }), { minLength: size, maxLength: size }))),
    ([size, named]) => {
      const sent = named.map((edges) => noticesOf(edges as DistEdge[], size));
      const all = named.flat();
      for (let r = 0; r < size; r++) {
        const adj = adjacencyOf(sent.map((notices) => notices[r]!));
        expect(adj.sources).toEqual(all.filter((e) => e.dest === r).map((e) => e.source));
        expect(adj.sourceWeights).toEqual(all.filter((e) => e.dest === r).map((e) => e.weight));
        expect(adj.destinations).toEqual(all.filter((e) => e.source === r).map((e) => e.dest));
        expect(adj.destWeights).toEqual(all.filter((e) => e.source === r).map((e) => e.weight));
      }
    }));
  });

  it('keeps the adjacent form\'s lists as given', () => {
    const t: Topology = { kind: 'dist_graph', sources: [2, 0, 2], destinations: [1], sourceWeights: null, destWeights: null };
    expect(neighborLists(t, 0)).toEqual({ sources: [2, 0, 2], destinations: [1], sendOrder: [0] });
  });
});

describe('neighbour lists of a Cartesian topology', () => {
  it('are shift(d, 1) per dimension, PROC_NULL off the edges', () => {
    expect(neighborLists({ kind: 'cart', dims: [2, 3], periods: [false, true] }, 1)).toEqual({
      sources: [PROC_NULL, 4, 0, 2], destinations: [PROC_NULL, 4, 0, 2], sendOrder: [1, 0, 3, 2],
    });
  });
});

describe('reorderKeys', () => {
  it('is the identity on one host or on contiguous hosts', () => {
    expect(reorderKeys(['a', 'a', 'a'])).toEqual([0, 1, 2]);
    expect(reorderKeys(['a', 'a', 'b', 'b'])).toEqual([0, 1, 2, 3]);
  });

  it('makes each host\'s ranks consecutive, hosts by first rank, ranks in old order', () => {
    expect(reorderKeys(['a', 'b', 'a', 'b'])).toEqual([0, 2, 1, 3]);
    fc.assert(fc.property(fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 12 }), (hosts) => {
      const keys = reorderKeys(hosts);
      expect([...keys].sort((a, b) => a - b)).toEqual(hosts.map((_, i) => i));
      const byNew = new Array<string>(hosts.length);
      keys.forEach((k, old) => (byNew[k] = hosts[old]!));
      const runs = byNew.filter((h, i) => i === 0 || h !== byNew[i - 1]);
      expect(new Set(runs).size).toBe(runs.length);
    }));
  });
});
