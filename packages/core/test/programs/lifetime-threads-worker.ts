// Worker of lifetime-threads.ts.
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';

await MPI.init();
const data = MPI.workerData as { part: 'A' | 'B' | 'C'; r?: MPI.Request; c?: MPI.Comm; comm?: MPI.Comm; index?: number; cycles?: number };
const port = parentPort!;

if (data.part === 'A') {
  // The main thread frees the communicator meanwhile; the buffer is the main thread's, the status is here.
  await data.r!.wait();
  port.postMessage(data.r!.status!.error === 0 ? 100 + data.r!.status!.source : -1);
} else if (data.part === 'B') {
  MPI.threadAttach(1);
  data.c!.free();
  port.postMessage('freed');
} else {
  const comm = data.comm!;
  const peer = 1 - comm.rank;
  const src = Int32Array.of(1, 2, 3, 4);
  const dst = new Int32Array(4);
  let done = 0;
  for (let k = 0; k < data.cycles!; k++) {
    const pair = MPI.Datatype.contiguous(2, MPI.INT32).commit();
    const tag = k & 0xffff;
    const r = comm.Irecv([dst, 2, pair], peer, tag);
    pair.free(); // pending receive: the type stays alive until it completes
    const op = MPI.Op.create((a: Int32Array, b: Int32Array) => b.set(a));
    await comm.Send([src, 4, MPI.INT32], peer, tag);
    op.free();
    await r.wait();
    if (dst[3] !== 4) throw new Error(`cycle ${k}: got ${Array.from(dst)}`);
    dst.fill(0);
    if (k % 500 === 499) (await comm.dup()).free();
    done++;
  }
  port.postMessage(done);
}
