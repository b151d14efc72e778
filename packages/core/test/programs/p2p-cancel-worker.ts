// Worker of p2p-cancel.ts on rank 0: cancels its own unmatched synchronous and rendezvous sends
// (the cancel and its answer travel on the worker's own connections), then sends one that is kept.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const world = MPI.COMM_WORLD;
const sync = world.Issend(new Int32Array([555, 0]), 1, 20);
sync.cancel();
await sync.wait();
const big = world.Isend(new Uint8Array(4096).fill(3), 1, 20);
big.cancel();
await big.wait();
await world.Send(new Int32Array([666, 0]), 1, 20);
parentPort!.postMessage([sync.status!.cancelled, big.status!.cancelled]);
