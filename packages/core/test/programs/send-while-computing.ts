// mpiexec -n 2 [--progress engines] send-while-computing.ts MODE, with SEND_WHILE_COMPUTING_MARKER
// naming a file in a fresh directory (docs/GUIDE.md "A send leaves when your code yields",
// docs/adr/0061): rank 0 sends, then computes without calling MPI until rank 1 says, in that file
// (no MPI message reaches a rank that does not run), that what it waits for arrived.
// A frame held until the computing ends trips the 60 s deadlock guard instead.
//   send       `await Send()`, then computing: the frame left before the await's continuation ran
//   first      the same as rank 0's first frame to rank 1, with no barrier before: `await Send()`
//              returns once the connection it opened carries the frame
//   allreduce  rank 1 enters Allreduce first, so rank 0's finishes inside the call; rank 0 computes
//              after `await Allreduce()` while rank 1's waits for rank 0's contribution
//   yield      Isend, one setImmediate turn, then computing
//   engines    Isend, then computing at once (run with --progress engines: the engine sends it)
import fs from 'node:fs';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const MODES = ['send', 'first', 'allreduce', 'yield', 'engines'];
const mode = process.argv[2] ?? '';
check(MODES.includes(mode), `mode one of ${MODES.join(', ')} (got ${mode})`);
const marker = process.env.SEND_WHILE_COMPUTING_MARKER ?? '';
check(marker !== '', 'SEND_WHILE_COMPUTING_MARKER names the marker file');

function computeUntilMarker(): void {
  const until = Date.now() + 60_000;
  while (!fs.existsSync(marker)) check(Date.now() < until, 'rank 1 to receive while rank 0 computes (deadlock guard, 60 s): the frame waited for the computing to end');
}

await MPI.init();
const world = MPI.COMM_WORLD;
const sum = new Float64Array(1);
if (mode !== 'first') await world.barrier();
if (world.rank === 0) {
  if (mode === 'allreduce') {
    const peerIn = world.Irecv(new Uint8Array(0), 1, 6);
    await peerIn.wait(); // rank 1 is in its Allreduce: this one finishes inside the call
    await world.Allreduce(new Float64Array([1]), sum, MPI.SUM);
    computeUntilMarker();
  } else if (mode === 'send' || mode === 'first') {
    await world.Send(new Float64Array([1, 2, 3]), 1, 5);
    computeUntilMarker();
  } else {
    const sent = world.Isend(new Float64Array([1, 2, 3]), 1, 5);
    if (mode === 'yield') await new Promise((ok) => setImmediate(ok));
    computeUntilMarker();
    await sent.wait();
  }
} else if (mode === 'allreduce') {
  const entered = world.Isend(new Uint8Array(0), 0, 6);
  await world.Allreduce(new Float64Array([2]), sum, MPI.SUM);
  await entered.wait();
  fs.writeFileSync(marker, 'received');
} else {
  const got = new Float64Array(3);
  await world.Recv(got, 0, 5);
  equal(Array.from(got).join(','), '1,2,3', 'the message');
  fs.writeFileSync(marker, 'received');
}
await world.barrier();
if (mode === 'allreduce') equal(sum[0], 3, 'the allreduce');
if (world.rank === 0) {
  console.log(`send-while-computing OK ${mode} (progress ${MPI.config().progress})`);
}
await MPI.finalize();
