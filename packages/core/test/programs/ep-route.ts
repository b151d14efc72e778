// mpiexec -n 2 --endpoints 2, TSMPI_ENDPOINT_RECEIVE=thread (docs/adr/0019): messages that take an
// endpoint reader's path. In each process a worker reads endpoint 1 in ROUNDS readings (attach to
// 1, receive, attach to 0: the hand-back, waiting until the reading's socket is gone), while the
// main thread (endpoint 0) sends ROUNDS x PER_ROUND numbered messages to the other process's
// endpoint 1, which must arrive in order across every open and close. Argument:
//   handshake  the worker sends `go` from endpoint 1 once it reads it, and the other main sends a
//              round only after `go`: the route's opening went out before `go` on the same
//              connection, so the round's first message sees the route open, takes the engine
//              path and starts the main thread's connection to the reader; once that carries
//              frames (readerConnectionReady) every other message of the round takes the
//              reader's path (one of them a rendezvous message, one a synchronous send)
//   stream     after the first `go` the main threads send without waiting, in windows, while the
//              readings come and go: any frame may take either path, and a switch can fall between
//              any two of them
// A second argument sets the readings per process (default 4; 250 messages each): `stream 40` is
// docs/adr/0019's 10,000-message stream.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';
import { readerConnectionReady, workerEnv } from './ep-reader-sockets.ts';

await MPI.init({ threadLevel: 'multiple' });
const mode = process.argv[2];
if (mode !== 'handshake' && mode !== 'stream') throw new Error(`ep-route.ts: mode handshake or stream, got ${mode}`);
const rank = MPI.COMM_WORLD.rank;
equal([MPI.COMM_WORLD.size, MPI.config().endpoints], [2, 2], 'job shape');
const ROUNDS = process.argv[3] === undefined ? 4 : Number(process.argv[3]);
const PER_ROUND = 250;
const worker = new MPI.Worker(new URL('./ep-route-worker.ts', import.meta.url), { workerData: { mode, rounds: ROUNDS, perRound: PER_ROUND }, env: workerEnv() });
// Listen for the exit before the report arrives: the last message and the exit can come in one turn.
const exited = once(worker, 'exit');
const reported = once(worker, 'message');
const other = 1 - rank;
const to = other * 2 + 1;
/** Message i: a number, or (handshake) a large array that goes by rendezvous, as an object with its number. */
const big = (i: number): { i: number; pad: Uint8Array } => ({ i, pad: new Uint8Array(200_000).fill(i & 0xff) });
if (mode === 'handshake') {
  for (let r = 0; r < ROUNDS; r++) {
    equal(await MPI.COMM_ENDPOINTS.recv<number>(to, 8), r, `go for round ${r}`);
    const sends: MPI.Request<void>[] = [];
    for (let k = 0; k < PER_ROUND; k++) {
      const i = r * PER_ROUND + k;
      if (k === 1) await readerConnectionReady();
      if (k === 10) sends.push(MPI.COMM_ENDPOINTS.isend(big(i), to, 9));
      else if (k === PER_ROUND - 1) await MPI.COMM_ENDPOINTS.ssend(i, to, 9);
      else sends.push(MPI.COMM_ENDPOINTS.isend(i, to, 9));
    }
    await MPI.Request.waitall(sends);
  }
} else {
  equal(await MPI.COMM_ENDPOINTS.recv<number>(to, 8), 0, 'go for the stream');
  // Windows of 10 with a pause between them, so the stream lasts as long as several readings and
  // switches fall inside it (pacing only: what is asserted is the order, whatever path each took).
  for (let i = 0; i < ROUNDS * PER_ROUND; i += 10) {
    await MPI.Request.waitall(Array.from({ length: 10 }, (_, k) => MPI.COMM_ENDPOINTS.isend(i + k, to, 9)));
    await sleep(2);
  }
}
const [report] = (await reported) as [{ inOrder: number }];
equal(report, { inOrder: ROUNDS * PER_ROUND }, 'the worker received every message in order');
await exited;
await MPI.COMM_WORLD.barrier();
if (rank === 0) console.log(`ep-route OK ${mode} ${MPI.config().progress}`);
await MPI.finalize();
