// A topology communicator crosses threads (issue 36): the main thread creates a periodic 2-D
// CartComm and a DistGraphComm and hands them to an MPI.Worker, which revives them as the same
// classes with the same topology and runs the halo exchange on them for its rank. Run with 4.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const cart = (await world.createCart(MPI.computeDims(world.size, 2), [true, true]))!;
const next = (world.rank + 1) % world.size;
const prev = (world.rank + world.size - 1) % world.size;
const dg = await world.createDistGraphAdjacent([prev], [next], { sourceWeights: [7], destWeights: [9] });
const w = new MPI.Worker(new URL('./topo-threads-worker.ts', import.meta.url), { workerData: { cart, dg } });
const exited = once(w, 'exit');
const [seen] = (await once(w, 'message')) as [{ cls: string; dims: number[]; coords: number[]; halos: number[]; dgIn: number[]; dgWeights: number[] | null; dgGot: number[] }];
const [code] = (await exited) as [number];
equal(code, 0, 'worker exit code');
equal([seen.cls, seen.dims, seen.coords], ['CartComm', cart.dims, cart.coords], 'the worker sees the same CartComm');
const expected = cart.dims.flatMap((_, d) => cart.shift(d, 1)).map((n) => n);
equal(seen.halos, expected, 'the worker\'s halo exchange got each neighbour\'s rank');
equal([seen.dgIn, seen.dgWeights, seen.dgGot], [[prev], [7], [prev]], 'the worker sees the DistGraphComm');
check(cart instanceof MPI.CartComm, 'still a CartComm here');
cart.free();
dg.free();
await MPI.finalize();
console.log(`topo-threads OK rank ${rank}`);
