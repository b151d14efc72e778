// Worker of exit-every-rank.ts. role 'throw': joins MPI, then throws (the process ends: nobody listens for
// the thread's 'error'). role 'couple': accepts (rank 0 opens the port and writes DIR/port) or connects over
// the communicator in its workerData and posts the intercommunicator to its main thread.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const data = MPI.workerData as { role: string; side?: string; dir?: string; comm?: MPI.Comm };
if (data.role === 'throw') throw new Error('exit-every-rank: the worker thread fails on purpose');
const comm = data.comm!;
const portFile = path.join(data.dir!, 'port');
let inter: MPI.Intercomm;
if (data.side === 'accept') {
  let port = '';
  if (comm.rank === 0) {
    port = await MPI.openPort();
    writeFileSync(`${portFile}.tmp`, port, { mode: 0o600 });
    renameSync(`${portFile}.tmp`, portFile);
  }
  inter = await comm.accept(port);
} else {
  while (!existsSync(portFile)) await new Promise((r) => setTimeout(r, 20));
  inter = await comm.connect(readFileSync(portFile, 'utf8'));
}
parentPort!.postMessage(MPI.dehydrate({ inter }));
