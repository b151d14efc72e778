// Topologies and neighborhood collectives over real processes (issue 36): Cartesian grids
// (periodic and not) with a halo exchange by NeighborAlltoall checked against Sendrecv, shift at
// the edges, sub, coords, graph and distributed graph neighbours and weights, the object forms,
// the I... and ...Init forms, dup keeping the topology, the errors, and the mpi4py spellings of the
// neighborhood collectives (Neighbor_alltoall, ...: the same methods). Run with 4 or 6 processes.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size === 4 || size === 6, 'run with -n 4 or -n 6');
const N = 5; // doubles per halo block

equal(MPI.computeDims(size, 2), size === 4 ? [2, 2] : [3, 2], 'computeDims');
await throwsMPI(() => MPI.computeDims(size, [5, 0]), MPI.ERR_DIMS, 'computeDims', 'computeDims of a non-divisor');
equal(world.topology, null, 'COMM_WORLD has no topology');

/** Halo exchange on `cart` by NeighborAlltoall, against the same exchange by Sendrecv along shift(). */
async function haloMatchesSendrecv(cart: MPI.CartComm): Promise<void> {
  const n = cart.ndims;
  const out = new Float64Array(2 * n * N);
  for (let j = 0; j < 2 * n; j++) for (let k = 0; k < N; k++) out[j * N + k] = cart.rank * 1000 + j * 10 + k;
  const got = new Float64Array(2 * n * N).fill(-1);
  await cart.NeighborAlltoall(out, got);
  const ref = new Float64Array(2 * n * N).fill(-1);
  for (let d = 0; d < n; d++) {
    const [lo, hi] = cart.shift(d, 1);
    // send my negative block to lo, receive from hi into my positive slot; and the other way
    await cart.Sendrecv(out.subarray(2 * d * N, 2 * d * N + N), lo, 7, ref.subarray((2 * d + 1) * N, (2 * d + 2) * N), hi, 7);
    await cart.Sendrecv(out.subarray((2 * d + 1) * N, (2 * d + 2) * N), hi, 8, ref.subarray(2 * d * N, 2 * d * N + N), lo, 8);
  }
  equal(Array.from(got), Array.from(ref), `${cart.name} halo by NeighborAlltoall vs Sendrecv (dims ${cart.dims}, periods ${cart.periods})`);
  // The nonblocking and persistent forms give the same
  const viaI = new Float64Array(2 * n * N).fill(-1);
  await cart.IneighborAlltoall(out, viaI).wait();
  equal(Array.from(viaI), Array.from(ref), `${cart.name} IneighborAlltoall`);
  // Persistent: every start sends the buffer's contents of that moment
  const viaInit = new Float64Array(2 * n * N).fill(-1);
  const req = cart.NeighborAlltoallInit(out, viaInit);
  for (let round = 1; round <= 3; round++) {
    for (let k = 0; k < out.length; k++) out[k] = cart.rank * 1000 + k + round * 0.25;
    const expected = new Float64Array(2 * n * N).fill(-1);
    await cart.NeighborAlltoall(out, expected);
    viaInit.fill(-1);
    req.start();
    await req.wait();
    equal(Array.from(viaInit), Array.from(expected), `${cart.name} NeighborAlltoallInit round ${round}`);
  }
  req.free();
}

// 1. Cartesian grids: 2-D periodic, 2-D non-periodic, mixed, and a periodic dimension of size 1 and 2.
const dims2 = MPI.computeDims(size, 2);
const grids: [number[], boolean[]][] = [
  [dims2, [true, true]],
  [dims2, [false, false]],
  [dims2, [true, false]],
  [[1, size], [true, true]],
  [[2, size / 2], [true, false]],
];
for (const [dims, periods] of grids) {
  const cart = await world.createCart(dims, periods);
  check(cart !== null && cart instanceof MPI.CartComm, 'a CartComm for every rank');
  equal(cart.topology, 'cart', 'topology');
  equal([cart.ndims, cart.dims, cart.periods], [dims.length, dims, periods], 'shape');
  equal(cart.getCoords(cart.rank), cart.coords, 'coords');
  equal(cart.getCartRank(cart.coords), cart.rank, 'getCartRank(coords)');
  await haloMatchesSendrecv(cart);
  cart.free();
}

// 2. Shift at the edges, getCartRank wrapping, errors
{
  const cart = (await world.createCart([size], [false]))!;
  equal(cart.shift(0, 1), [rank === 0 ? MPI.PROC_NULL : rank - 1, rank === size - 1 ? MPI.PROC_NULL : rank + 1], 'shift on a line');
  equal(cart.shift(0, size), [MPI.PROC_NULL, MPI.PROC_NULL], 'shift by size off both edges');
  await throwsMPI(() => cart.getCartRank([size]), MPI.ERR_ARG, 'CartComm.getCartRank', 'coords off a non-periodic dimension');
  await throwsMPI(() => cart.shift(1), MPI.ERR_ARG, 'CartComm.shift', 'direction beyond ndims');
  await throwsMPI(() => cart.getCoords(size), MPI.ERR_RANK, 'CartComm.getCoords', 'rank out of range');
  // object forms: PROC_NULL neighbours give undefined
  const all = await cart.neighborAllgather({ r: rank });
  equal(all, [rank === 0 ? undefined : { r: rank - 1 }, rank === size - 1 ? undefined : { r: rank + 1 }], 'neighborAllgather on a line');
  const a2a = await cart.neighborAlltoall([`to left from ${rank}`, `to right from ${rank}`]);
  equal(a2a, [rank === 0 ? undefined : `to right from ${rank - 1}`, rank === size - 1 ? undefined : `to left from ${rank + 1}`], 'neighborAlltoall on a line');
  await throwsMPI(() => cart.neighborAlltoall([1]), MPI.ERR_ARG, 'neighborAlltoall', 'one value per out-neighbour');
  // NeighborAllgather with PROC_NULL: the slot stays untouched
  const ag = new Int32Array(2).fill(-7);
  await cart.NeighborAllgather(Int32Array.of(rank), ag);
  equal(Array.from(ag), [rank === 0 ? -7 : rank - 1, rank === size - 1 ? -7 : rank + 1], 'NeighborAllgather, PROC_NULL slots untouched');
  await throwsMPI(() => cart.NeighborAllgather(Int32Array.of(rank), new Int32Array(3)), MPI.ERR_COUNT, 'NeighborAllgather', 'recvbuf not indegree blocks');
  await throwsMPI(() => cart.NeighborAlltoall(new Int32Array(3), new Int32Array(2)), MPI.ERR_COUNT, 'NeighborAlltoall', 'sendbuf not outdegree blocks');
  cart.free();
  const wrap = (await world.createCart([size], [true]))!;
  equal(wrap.getCartRank([-1]), size - 1, 'getCartRank wraps a periodic dimension');
  equal(wrap.getCartRank([size + 1]), 1, 'getCartRank wraps past the end');
  wrap.free();
}

// 3. Ranks outside the grid get null; creation errors
{
  const small = await world.createCart([size - 1]);
  check((rank === size - 1) === (small === null), 'the last rank is outside a grid of size-1');
  small?.free();
  await throwsMPI(() => world.createCart([size + 1]), MPI.ERR_ARG, 'Comm.createCart', 'grid larger than the communicator');
  await throwsMPI(() => world.createCart([0, 2]), MPI.ERR_DIMS, 'Comm.createCart', 'a zero dimension');
  await throwsMPI(() => world.createCart([size], [true, true]), MPI.ERR_ARG, 'Comm.createCart', 'periods of another length');
}

// 4. sub: rows and columns of a 2-D grid; dup keeps the topology
{
  const cart = (await world.createCart(dims2, [true, false]))!;
  const [r0, c0] = cart.coords as [number, number];
  const row = await cart.sub([false, true]);
  check(row instanceof MPI.CartComm, 'sub is a CartComm');
  equal([row.dims, row.periods, row.rank, row.coords], [[dims2[1]], [false], c0, [c0]], 'row sub-grid');
  const rowMembers = await row.allgather(rank);
  equal(rowMembers, Array.from({ length: dims2[1]! }, (_, c) => cart.getCartRank([r0, c])), 'row members in world ranks');
  const col = await cart.sub([true, false]);
  equal([col.dims, col.periods, col.rank], [[dims2[0]], [true], r0], 'column sub-grid');
  const none = await cart.sub([false, false]);
  equal([none.size, none.ndims], [1, 0], 'sub of no dimension: size 1');
  const copy = await cart.dup();
  check(copy instanceof MPI.CartComm, 'dup of a CartComm is a CartComm');
  equal([copy.dims, copy.periods, copy.coords], [cart.dims, cart.periods, cart.coords], 'dup keeps the topology');
  await haloMatchesSendrecv(copy as MPI.CartComm);
  for (const c of [row, col, none, copy, cart]) c.free();
}

// 5. Graph topology: a ring with a chord from 0 to 2 (symmetric)
{
  const adj: number[][] = Array.from({ length: size }, (_, i) => [(i + size - 1) % size, (i + 1) % size]);
  adj[0]!.push(2);
  adj[2]!.push(0);
  const index: number[] = [];
  const edges: number[] = [];
  for (const list of adj) {
    edges.push(...list);
    index.push(edges.length);
  }
  const g = (await world.createGraph(index, edges))!;
  check(g instanceof MPI.GraphComm, 'a GraphComm');
  equal([g.topology, g.index, g.edges], ['graph', index, edges], 'graph record');
  equal(g.neighbors(rank), adj[rank], 'neighbors');
  const got = await g.neighborAllgather(rank);
  equal(got, adj[rank], 'neighborAllgather over a graph: each neighbour\'s rank');
  const recv = new Int32Array(adj[rank]!.length);
  await g.NeighborAlltoall(Int32Array.from(adj[rank]!, (to) => rank * 100 + to), recv);
  equal(Array.from(recv), adj[rank]!.map((from) => from * 100 + rank), 'NeighborAlltoall over a graph');
  await throwsMPI(() => world.createGraph([2, 1], [0, 1]), MPI.ERR_ARG, 'Comm.createGraph', 'decreasing index');
  await throwsMPI(() => g.neighbors(-1), MPI.ERR_RANK, 'GraphComm.neighbors', 'bad rank');
  g.free();
  const partial = await world.createGraph([1, 2], [1, 0]);
  check((rank >= 2) === (partial === null), 'ranks outside a 2-node graph get null');
  partial?.free();
}

// 6. Distributed graphs: adjacent (weighted) and general (edges named by other ranks), varying blocks
{
  const next = (rank + 1) % size;
  const prev = (rank + size - 1) % size;
  // receive from prev and from prev again (a multi-edge), send to next twice
  const dg = await world.createDistGraphAdjacent([prev, prev], [next, next], { sourceWeights: [1, 2], destWeights: [3, 4] });
  check(dg instanceof MPI.DistGraphComm, 'a DistGraphComm');
  equal([dg.topology, dg.inNeighbors(), dg.outNeighbors(), dg.inWeights, dg.outWeights], ['dist_graph', [prev, prev], [next, next], [1, 2], [3, 4]], 'adjacent lists and weights');
  const recv = new Float64Array(2);
  await dg.NeighborAlltoall(Float64Array.of(rank + 0.1, rank + 0.2), recv);
  equal(Array.from(recv), [prev + 0.1, prev + 0.2], 'multi-edges pair in list order');
  // Alltoallv: block sizes 1 and 2
  const vr = new Int16Array(3).fill(-1);
  await dg.NeighborAlltoallv([Int16Array.of(rank, rank, rank), [1, 2], [0, 1]], [vr, [1, 2], [0, 1]]);
  equal(Array.from(vr), [prev, prev, prev], 'NeighborAlltoallv');
  // Allgatherv
  const gv = new Int32Array(4).fill(-1);
  await dg.NeighborAllgatherv(Int32Array.of(rank), [gv, [1, 1], [3, 0]]);
  equal(Array.from(gv), [prev, -1, -1, prev], 'NeighborAllgatherv lands at the displacements');
  // Alltoallw: an INT32 block then a FLOAT64 block, byte displacements
  const wsend = new ArrayBuffer(16);
  new Int32Array(wsend, 0, 1)[0] = rank;
  new Float64Array(wsend, 8, 1)[0] = rank + 0.5;
  const wrecv = new ArrayBuffer(24);
  await dg.NeighborAlltoallw([new Uint8Array(wsend), [1, 1], [0, 8], [MPI.INT32, MPI.FLOAT64]], [new Uint8Array(wrecv), [1, 1], [16, 0], [MPI.INT32, MPI.FLOAT64]]);
  equal([new Int32Array(wrecv, 16, 1)[0], new Float64Array(wrecv, 0, 1)[0]], [prev, prev + 0.5], 'NeighborAlltoallw');
  // I and Init forms of the v and w collectives
  const iv = new Int16Array(3).fill(-1);
  await dg.IneighborAlltoallv([Int16Array.of(rank, rank, rank), [1, 2], [0, 1]], [iv, [1, 2], [0, 1]]).wait();
  equal(Array.from(iv), [prev, prev, prev], 'IneighborAlltoallv');
  const ag = new Int32Array(2).fill(-1);
  const agReq = dg.NeighborAllgatherInit(Int32Array.of(rank), ag);
  agReq.start();
  await agReq.wait();
  equal(Array.from(ag), [prev, prev], 'NeighborAllgatherInit');
  agReq.free();
  await throwsMPI(() => world.createDistGraphAdjacent([size], []), MPI.ERR_ARG, 'Comm.createDistGraphAdjacent', 'source out of range');
  await throwsMPI(() => world.createDistGraphAdjacent([prev], [next], { sourceWeights: [1] }), MPI.ERR_ARG, 'Comm.createDistGraphAdjacent', 'only one side weighted');
  const copy = await dg.dup();
  check(copy instanceof MPI.DistGraphComm, 'dup of a DistGraphComm');
  equal([copy.inNeighbors(), copy.outWeights], [[prev, prev], [3, 4]], 'dup keeps the lists');
  copy.free();
  // A persistent request: start() while active is refused; it holds its communicator past free()
  const pr = new Float64Array(2);
  const persistent = dg.NeighborAlltoallInit(Float64Array.of(rank, -rank), pr);
  persistent.start();
  await throwsMPI(() => persistent.start(), MPI.ERR_ARG, 'NeighborAlltoallInit.start', 'start while active');
  await persistent.wait();
  dg.free();
  pr.fill(0);
  persistent.start();
  await persistent.wait();
  equal(Array.from(pr), [prev, -prev], 'a start after the communicator\'s free');
  persistent.free();
  await throwsMPI(() => dg.NeighborAlltoall(new Float64Array(2), new Float64Array(2)), MPI.ERR_COMM, 'NeighborAlltoall', 'a freed communicator');

  // General form: rank 0 names every edge i -> i+1 (weight i); the others name nothing
  const srcs = rank === 0 ? Array.from({ length: size }, (_, i) => i) : [];
  const degs = rank === 0 ? srcs.map(() => 1) : [];
  const dsts = rank === 0 ? srcs.map((i) => (i + 1) % size) : [];
  const g2 = await world.createDistGraph(srcs, degs, dsts, { destWeights: rank === 0 ? srcs : [] });
  equal([g2.inNeighbors(), g2.outNeighbors(), g2.inWeights, g2.outWeights], [[prev], [next], [prev], [rank]], 'general dist graph');
  equal(await g2.neighborAlltoall([`from ${rank}`]), [`from ${prev}`], 'neighborAlltoall over the general graph');
  await throwsMPI(() => world.createDistGraph([0], [2], [1]), MPI.ERR_ARG, 'Comm.createDistGraph', 'degrees and destinations disagree');
  g2.free();
}

// 7. reorder: one host, so the identity
{
  const cart = (await world.createCart(dims2, [true, true], true))!;
  equal(cart.rank, rank, 'reorder on one host keeps the ranks');
  await haloMatchesSendrecv(cart);
  cart.free();
}

// 8. mpi4py spellings of the neighborhood collectives: the methods themselves, on every topology class
{
  const SPELLINGS = [
    ['neighbor_allgather', 'neighborAllgather'], ['neighbor_alltoall', 'neighborAlltoall'],
    ...['Allgather', 'Allgatherv', 'Alltoall', 'Alltoallv', 'Alltoallw'].flatMap((k) => {
      const m = k.toLowerCase();
      return [[`Neighbor_${m}`, `Neighbor${k}`], [`Ineighbor_${m}`, `Ineighbor${k}`], [`Neighbor_${m}_init`, `Neighbor${k}Init`]];
    }),
  ] as const;
  const next = (rank + 1) % size;
  const prev = (rank + size - 1) % size;
  const cart = (await world.createCart([size], [true], false))!;
  const graph = (await world.createGraph(Array.from({ length: size }, (_, i) => 2 * (i + 1)), Array.from({ length: size }, (_, i) => [(i + size - 1) % size, (i + 1) % size]).flat()))!;
  const dg = await world.createDistGraphAdjacent([prev], [next]);
  for (const c of [cart, graph, dg]) {
    const o = c as unknown as Record<string, unknown>;
    for (const [alias, canonical] of SPELLINGS) check(typeof o[canonical] === 'function' && o[alias] === o[canonical], `${c.topology} ${alias} is ${canonical}`);
  }
  // Called by those names: a ring, each rank sending its rank (and rank + 0.5) to next.
  const a2a = new Int32Array(2).fill(-1);
  await cart.Neighbor_alltoall(Int32Array.of(rank * 10, rank * 10 + 1), a2a);
  equal(Array.from(a2a), [prev * 10 + 1, next * 10], 'Cartcomm.Neighbor_alltoall: my left block from prev, my right block from next');
  const ag = new Int32Array(2).fill(-1);
  await graph.Ineighbor_allgather(Int32Array.of(rank), ag).wait();
  equal(Array.from(ag), [prev, next], 'Graphcomm.Ineighbor_allgather');
  const vr = new Int16Array(2).fill(-1);
  const vReq = dg.Neighbor_alltoallv_init([Int16Array.of(rank, rank), [2], [0]], [vr, [2], [0]]);
  vReq.start();
  await vReq.wait();
  equal(Array.from(vr), [prev, prev], 'Distgraphcomm.Neighbor_alltoallv_init');
  vReq.free();
  const wsend = new ArrayBuffer(8);
  new Float64Array(wsend)[0] = rank + 0.5;
  const wrecv = new ArrayBuffer(8);
  await dg.Neighbor_alltoallw([new Uint8Array(wsend), [1], [0], [MPI.FLOAT64]], [new Uint8Array(wrecv), [1], [0], [MPI.FLOAT64]]);
  equal(new Float64Array(wrecv)[0], prev + 0.5, 'Distgraphcomm.Neighbor_alltoallw');
  equal(await dg.neighbor_allgather(`from ${rank}`), [`from ${prev}`], 'Distgraphcomm.neighbor_allgather');
  // An error names the canonical call, as every alias's does.
  await throwsMPI(() => dg.Neighbor_alltoall(new Int32Array(3), new Int32Array(2)), MPI.ERR_COUNT, 'NeighborAlltoall', 'Neighbor_alltoall with a bad count');
  for (const c of [cart, graph, dg]) c.free();
}

await MPI.finalize();
console.log(`topo-suite OK rank ${rank}`);
