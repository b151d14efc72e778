// Worker of coll-forms-threads.ts: the same rounds on the communicator its parent duplicated.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { runForms } from './coll-forms-threads-body.ts';

await MPI.init();
const { comm } = MPI.workerData as { comm: MPI.Comm };
parentPort!.postMessage(await runForms(comm, 'worker'));
