// Rank 1 drops its connections (a lost network, as the others see it) and exits
// argv[2] ms later; the others wait in a receive from it, and fail first.
import * as MPI from '@tsmpi/core';
import { runtime } from '../../src/runtime/index.ts';

const exitAfterMs = Number(process.argv[2]);
await MPI.init();
await MPI.COMM_WORLD.barrier(); // every connection is up
if (MPI.COMM_WORLD.rank === 1) {
  runtime('fail-lost-peer').device.transport!.destroy();
  setTimeout(() => process.exit(1), exitAfterMs);
} else {
  await MPI.COMM_WORLD.recv(1, 5);
}
await MPI.finalize();
