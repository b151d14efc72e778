// Worker of p2p-part.ts. On rank 0 it fills its share of the parts for each round its parent names
// and marks them ready (pready from a thread other than the request's); on rank 1 it watches
// parrived for every part of each round and checks the data of a part once it says arrived.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { fillPart, partHolds, P } from './p2p-part-body.ts';

await MPI.init();
const { req, buf, first, count, role } = MPI.workerData as { req: MPI.PartitionedRequest; buf: Float64Array; first: number; count: number; role: 'send' | 'recv' };
parentPort!.on('message', (round: number) => {
  if (round < 0) {
    parentPort!.close();
    return;
  }
  if (role === 'send') {
    // Last part first: the parts go in the order they become ready.
    for (let i = first + count - 1; i >= first; i--) {
      fillPart(buf, round, i);
      req.pready(i);
    }
    parentPort!.postMessage('ready');
    return;
  }
  void (async () => {
    const seen = new Array<boolean>(P).fill(false);
    while (seen.includes(false)) {
      for (let i = 0; i < P; i++) {
        if (seen[i] || !req.parrived(i)) continue;
        seen[i] = true;
        if (!partHolds(buf, round, i)) throw new Error(`worker: part ${i} of round ${round} said arrived before its data was in place`);
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    parentPort!.postMessage('arrived');
  })();
});
