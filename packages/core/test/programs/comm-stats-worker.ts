// Worker of comm-stats.ts: joins MPI and sends `count` messages of 16 bytes to `right` on `comm`, tag 2.
import * as MPI from '@tsmpi/core';

await MPI.init();
const { comm, right, count } = MPI.workerData as { comm: MPI.Comm; right: number; count: number };
for (let i = 0; i < count; i++) await comm.Send(new Uint8Array(16), right, 2);
