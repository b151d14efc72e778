// Worker of abort-worker.ts: aborts the job.
import * as MPI from '@tsmpi/core';

await MPI.init();
MPI.abort(7);
