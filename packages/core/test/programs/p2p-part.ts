// Partitioned communication (issue 36; MPI 4.0 chapter 4; API.md "More point-to-point"), behaviour
// of MPICH's test/mpi/part tests re-implemented from their descriptions: a PsendInit / PrecvInit
// pair started several rounds with new data, parts marked ready out of order with pready,
// preadyRange and preadyList; parrived true for a part only once its data is in place; then the
// same with two MPI.Worker threads on the sender filling the parts of a buffer over a
// SharedArrayBuffer and marking them ready, and a worker on the receiver watching parrived; and the
// argument errors. np 2 (rank 0 sends, rank 1 receives); --eager-limit 1024 makes each 4 KiB part a
// rendezvous message.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { fillPart, N, P, partHolds } from './p2p-part-body.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const buf = new Float64Array(new SharedArrayBuffer(N * 8));
const TAG = 3;
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

// --- the main thread alone -------------------------------------------------------------------
if (rank === 0) {
  const req = world.PsendInit(buf, P, 1, TAG);
  await throwsMPI(() => req.pready(0), MPI.ERR_ARG, 'pready', 'pready before start');
  for (let round = 0; round < 3; round++) {
    req.start();
    for (let i = 0; i < P; i++) fillPart(buf, round, i);
    if (round === 0) for (let i = P - 1; i >= 0; i--) req.pready(i);
    if (round === 1) {
      req.preadyRange(4, 7);
      req.preadyList([1, 3, 0, 2]);
    }
    if (round === 2) {
      req.preadyList([5]);
      await throwsMPI(() => req.pready(5), MPI.ERR_ARG, 'pready', 'a part marked ready twice');
      await throwsMPI(() => req.pready(P), MPI.ERR_ARG, 'pready', 'a part index out of range');
      await throwsMPI(() => req.preadyRange(3, 1), MPI.ERR_ARG, 'preadyRange', 'hi below lo');
      await throwsMPI(() => req.parrived(0), MPI.ERR_ARG, 'parrived', 'parrived on a send');
      req.preadyRange(0, 4);
      req.preadyRange(6, 7);
    }
    await req.wait();
  }
  req.free();
} else {
  const req = world.PrecvInit(buf, P, 0, TAG);
  await throwsMPI(() => req.pready(0), MPI.ERR_ARG, 'pready', 'pready on a receive');
  for (let round = 0; round < 3; round++) {
    req.start();
    const seen = new Array<boolean>(P).fill(false);
    while (seen.includes(false)) {
      for (let i = 0; i < P; i++) {
        if (seen[i] || !req.parrived(i)) continue;
        seen[i] = true;
        check(partHolds(buf, round, i), `part ${i} of round ${round} said arrived before its data was in place`);
      }
      await turns(1);
    }
    const st = await req.wait().then(() => req.status!);
    equal([st.source, st.tag], [0, TAG], 'status of a partitioned receive');
    for (let i = 0; i < P; i++) check(partHolds(buf, round, i), `part ${i} of round ${round}`);
  }
  req.free();
}

// --- parts filled and marked ready by worker threads -------------------------------------------
{
  const ROUNDS = 4;
  const req = rank === 0 ? world.PsendInit(buf, P, 1, TAG + 1) : world.PrecvInit(buf, P, 0, TAG + 1);
  const role = rank === 0 ? 'send' : 'recv';
  const shares = rank === 0 ? [[0, P / 2], [P / 2, P / 2]] : [[0, P]];
  const workers = shares.map(([first, count]) => new MPI.Worker(new URL('./p2p-part-worker.ts', import.meta.url), { workerData: { req, buf, first, count, role } }));
  const exits = workers.map((w) => once(w, 'exit'));
  for (let round = 0; round < ROUNDS; round++) {
    req.start();
    const answers = workers.map((w) => once(w, 'message'));
    for (const w of workers) w.postMessage(round);
    await req.wait();
    const said = await Promise.all(answers);
    equal(said.map(([m]) => m as string), workers.map(() => (rank === 0 ? 'ready' : 'arrived')), `workers of round ${round}`);
    if (rank === 1) for (let i = 0; i < P; i++) check(partHolds(buf, round, i), `part ${i} of worker round ${round}`);
  }
  for (const w of workers) w.postMessage(-1);
  for (const [code] of (await Promise.all(exits)) as [number][]) equal(code, 0, 'worker exit code');
  req.free();
}

// --- argument errors ---------------------------------------------------------------------------
await throwsMPI(() => world.PsendInit(new Float64Array(10), 3, 1 - rank), MPI.ERR_COUNT, 'PsendInit', '10 elements in 3 partitions');
await throwsMPI(() => world.PsendInit(new Float64Array(10), 0, 1 - rank), MPI.ERR_COUNT, 'PsendInit', '0 partitions');
await throwsMPI(() => world.PrecvInit(new Float64Array(10), 2, MPI.ANY_SOURCE), MPI.ERR_RANK, 'PrecvInit', 'ANY_SOURCE');
await throwsMPI(() => world.PrecvInit(new Float64Array(10), 2, 0, MPI.ANY_TAG), MPI.ERR_TAG, 'PrecvInit', 'ANY_TAG');
await throwsMPI(() => world.PsendInit([new Float64Array(10), MPI.FLOAT64] as unknown as Float64Array, 2, 0), MPI.ERR_BUFFER, 'PsendInit', 'a [buf, datatype] spec');
await throwsMPI(() => world.PsendInit(new Float64Array(10), 2, 5), MPI.ERR_RANK, 'PsendInit', 'dest out of range');

await world.barrier();
await MPI.finalize();
console.log(`p2p-part OK rank ${rank}`);
