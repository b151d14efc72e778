// Worker of worker-ids.ts: joins MPI, sends its index to the main thread, ends.
import * as MPI from '@tsmpi/core';

await MPI.init();
const { index, self } = MPI.workerData as { index: number; self: MPI.Comm };
await self.send(index, 0, index);
