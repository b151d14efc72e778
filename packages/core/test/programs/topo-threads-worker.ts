// Worker of topo-threads.ts: uses the topology communicators its parent created.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const { cart, dg } = MPI.workerData as { cart: MPI.CartComm; dg: MPI.DistGraphComm };
const halos = new Int32Array(2 * cart.ndims);
await cart.NeighborAlltoall(new Int32Array(2 * cart.ndims).fill(cart.rank), halos);
const dgGot = new Int32Array(1);
await dg.NeighborAllgather(Int32Array.of(dg.rank), dgGot);
parentPort!.postMessage({
  cls: cart instanceof MPI.CartComm ? 'CartComm' : String((cart as object).constructor.name), dims: cart.dims, coords: cart.coords, halos: Array.from(halos),
  dgIn: dg.inNeighbors(), dgWeights: dg.inWeights, dgGot: Array.from(dgGot),
});
