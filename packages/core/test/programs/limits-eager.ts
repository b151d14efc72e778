// Eager messages larger than a channel's injection ring (issue 17, limits): with --eager-limit
// raised to 8 MiB and thread level 'multiple', a thread that does not host the message's
// channel (the main thread in --progress threads, a worker in --progress inline) sends 1 MiB
// to 8 MiB messages in buffer, object and synchronous form, and a burst of 2 MiB isends before
// the receiver posts anything. Each arrives whole and in order. 2 processes.
import { once } from 'node:events';
import { isMainThread } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { fillPattern, patternMismatch } from './limits-pattern.ts';

const MIB = 1 << 20;
// Around the injection limit (1 MiB less 44 bytes of frame words), then up to the eager limit.
const SIZES = [MIB - 45, MIB - 44, MIB - 43, MIB, 2 * MIB + 1, 3 * MIB, 4 * MIB, 6 * MIB, 8 * MIB];
const BURST = 20;

async function exchange(world: MPI.Comm): Promise<void> {
  const peer = 1 - world.rank;
  if (world.rank === 0) {
    for (const [i, n] of SIZES.entries()) {
      const a = fillPattern(new Uint8Array(n), i);
      await world.Send(a, peer, 10 + i);
      await world.Ssend(a, peer, 100 + i);
      await world.send(a, peer, 200 + i);
    }
    const burst = Array.from({ length: BURST }, (_, k) => world.Isend(fillPattern(new Uint8Array(2 * MIB), 50 + k), peer, 300));
    await world.send('sent', peer, 301);
    await MPI.Request.waitall(burst);
  } else {
    for (const [i, n] of SIZES.entries()) {
      const b = new Uint8Array(n);
      const st = await world.Recv(b, peer, 10 + i);
      equal(st.getCount(), n, `Recv count of ${n}`);
      equal(patternMismatch(b, i), -1, `Recv bytes of ${n}`);
      b.fill(0);
      await world.Recv(b, peer, 100 + i);
      equal(patternMismatch(b, i), -1, `Ssend bytes of ${n}`);
      const o = await world.recv<Uint8Array>(peer, 200 + i);
      check(o instanceof Uint8Array && o.length === n, `object form of ${n}`);
      equal(patternMismatch(o, i), -1, `object bytes of ${n}`);
    }
    await world.recv(peer, 301); // every isend of the burst has been issued
    for (let k = 0; k < BURST; k++) {
      const b = new Uint8Array(2 * MIB);
      await world.Recv(b, peer, 300);
      equal(patternMismatch(b, 50 + k), -1, `burst message ${k} in order`);
    }
  }
}

if (isMainThread) {
  await MPI.init({ threadLevel: 'multiple' });
  const world = MPI.COMM_WORLD;
  const { progress, eagerLimit } = MPI.config();
  equal(eagerLimit, 8 * MIB, 'eager limit raised by the test');
  if (progress === 'threads') {
    await exchange(world); // the engines host every channel
  } else {
    const w = new MPI.Worker(new URL(import.meta.url), { workerData: {} });
    const [err] = await Promise.race([once(w, 'exit').then(() => [null]), once(w, 'error')]);
    if (err !== null) throw err;
  }
  await world.barrier();
  if (world.rank === 0) console.log(`limits-eager OK ${progress}`);
  await MPI.finalize();
} else {
  await MPI.init();
  await exchange(MPI.COMM_WORLD); // the main thread hosts every channel
}
