// mpiexec -n 2 with TSMPI_RANK_NODE_FLAGS=--require=<first-use-hold-hook.cjs> and FIRST_USE_FLUSH_MARKER
// naming a file in a fresh directory (docs/notebook/performance-2026-11.md 4.67): rank 1 queues a typed
// message with Isend and, in the same synchronous stretch, sends the process's first object message,
// which loads msgpackr synchronously before the transport's flush (at the microtask, docs/adr/0061)
// could run. The hook holds that load until rank 0 has received the typed message (it says so in the
// marker file: no MPI message reaches a process inside a require), so the job ends only if the frame
// went out before the load (util/first-use-load.ts); else the hook gives up after 60 s and exits 3. A
// round trip first opens the connections: a frame to a peer not yet connected waits for the
// handshake, which needs the event loop, and no flush can write it.
import fs from 'node:fs';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const marker = process.env.FIRST_USE_FLUSH_MARKER;
check(marker !== undefined && marker !== '', 'FIRST_USE_FLUSH_MARKER names the marker file');
await MPI.init();
const comm = MPI.COMM_WORLD;
const buf = new Uint8Array(1);
if (comm.rank === 0) {
  await comm.Recv(buf, 1, 3);
  await comm.Send(buf, 1, 4);
  await comm.Recv(buf, 1, 5);
  equal(buf[0], 7, 'the typed message sent before the first object message');
  fs.writeFileSync(marker, 'received');
  equal(await comm.recv<string>(1, 6), 'after', 'the first object message');
  console.log('first-use-flush OK');
} else {
  await comm.Send(buf, 0, 3);
  await comm.Recv(buf, 0, 4);
  const typed = comm.Isend(new Uint8Array([7]), 0, 5);
  const object = comm.send('after', 0, 6);
  await typed.wait();
  await object;
}
await MPI.finalize();
