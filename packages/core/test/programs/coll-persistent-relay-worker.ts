// Worker of coll-persistent-relay.ts: revives each start of its parent's persistent request, waits on
// it, and says how it completed; null ends it.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
parentPort!.on('message', (m: unknown) => {
  if (m === null) {
    parentPort!.close();
    return;
  }
  const r = MPI.revive(m) as MPI.Request<void>;
  r.wait().then(
    () => parentPort!.postMessage(r.status !== null && r.status.error === MPI.SUCCESS ? 'complete' : 'no status'),
    (e: unknown) => parentPort!.postMessage(`failed: ${String(e)}`),
  );
});
