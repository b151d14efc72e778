// mpiexec -n 2 [--progress engines] send-while-computing.ts engines|yield (docs/GUIDE.md "A send
// leaves when your code yields"): rank 0 isends a message, then computes without calling MPI until
// rank 1 says, in a file (no MPI message reaches a rank that does not run), that the message
// arrived. engines: with --progress engines the send leaves while the main thread computes; yield:
// under inline progress, one setImmediate turn after the Isend writes it before the computing starts.
// A message held until the computing ends trips the 60 s deadlock guard instead.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const mode = process.argv[2];
check(mode === 'engines' || mode === 'yield', `mode engines or yield (got ${mode})`);
const marker = path.join(os.tmpdir(), `tsmpi-send-while-computing-${(process.env.TSMPI_PMI_URL ?? 'none').replace(/\W/g, '') /* one job's: the key leaves process.env at init */}`);

await MPI.init();
const world = MPI.COMM_WORLD;
await world.barrier();
if (world.rank === 0) {
  const sent = world.Isend(new Float64Array([1, 2, 3]), 1, 5);
  if (mode === 'yield') await new Promise((ok) => setImmediate(ok));
  const until = Date.now() + 60_000;
  while (!fs.existsSync(marker)) check(Date.now() < until, 'rank 1 to receive the message while rank 0 computes (deadlock guard, 60 s): the frame waited for the computing to end');
  await sent.wait();
} else {
  const got = new Float64Array(3);
  await world.Recv(got, 0, 5);
  equal(Array.from(got).join(','), '1,2,3', 'the message');
  fs.writeFileSync(marker, 'received');
}
await world.barrier();
if (world.rank === 0) {
  fs.rmSync(marker, { force: true });
  console.log(`send-while-computing OK ${mode} (progress ${MPI.config().progress})`);
}
await MPI.finalize();
