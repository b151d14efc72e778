/**
 * Worker thread of soak.ts: for every round the main thread posts, exchanges
 * 8 checked messages (0 B to 256 KiB, so eager and rendezvous) in a ring on
 * its own dup of COMM_WORLD, the same communicator in every rank's worker,
 * while the main thread runs its own traffic. Posts back {messages, errors}.
 */
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { KiB, Rng, pattern, verify } from './soak-traffic.ts';

await MPI.init();
const { comm, seed } = MPI.workerData as { comm: MPI.Comm; seed: number };
const { rank, size } = comm;
const right = (rank + 1) % size;
const left = (rank - 1 + size) % size;
const PER_ROUND = 8;
/** Distinct from the main thread's indexes, so patterns differ. */
const INDEX_BASE = 1_000_000;

const sizeOf = (round: number, i: number, src: number): number => new Rng(seed, round, i, src, 0x574b5252).int(0, 256 * KiB);

parentPort!.on('message', (m: { round?: number; stop?: boolean }) => {
  if (m.stop === true) {
    parentPort!.close();
    return;
  }
  const round = m.round!;
  void (async () => {
    let errors = 0;
    for (let i = 0; i < PER_ROUND; i++) {
      const index = INDEX_BASE + i;
      const send = comm.Isend(pattern(seed, round, index, rank, sizeOf(round, i, rank)), right, 7);
      const want = sizeOf(round, i, left);
      const buf = new Uint8Array(want);
      await comm.Recv(buf, left, 7);
      if (verify(buf, seed, round, index, left, want) !== 'ok') {
        errors++;
        console.error(`soak worker of rank ${rank}: round ${round} message ${i} from ${left} differs`);
      }
      await send.wait();
    }
    parentPort!.postMessage({ messages: PER_ROUND, errors });
  })();
});
