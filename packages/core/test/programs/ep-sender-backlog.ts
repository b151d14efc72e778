// mpiexec -n 2 --endpoints 2 --progress threads|inline (issue 16's rule: a thread that computes for 5 s
// or exits must not strand messages on connections it owns). Rank 1's worker W (endpoint 2) isends
// N eager messages of 16 KiB (16 MiB in all) to endpoint 1 (rank 0's worker) in one turn, so one
// write holds them all and the kernel takes only part of it: the rest waits in W's socket, which
// only W's event loop can write. Then, by argv[2]:
//   computes    W computes for 5 s without returning to its event loop, then awaits its sends;
//               the receiver must get all N in order.
//   terminated  rank 1's main thread terminates W while it computes; the receiver gets all N, or
//               the job ends with ERR_PROC_FAILED naming W (never a hang, never a silent loss).
// The path is the setting's: with endpointReceive thread (or auto) rank 0's worker reads endpoint 1
// and W joins its route once its connection there is up (docs/adr/0019); with engine, W's frames
// take its own connection to the channel's host (docs/adr/0015's direct route).
import { isMainThread, parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { readerConnectionReady } from './ep-reader-sockets.ts';

const N = 1024;
const BYTES = 16 << 10;

if (!isMainThread) {
  await MPI.init();
  const { mode } = MPI.workerData as { mode: string };
  const reading = process.env.TSMPI_ENDPOINT_RECEIVE !== 'engine';
  if (MPI.COMM_WORLD.rank === 0) {
    MPI.threadAttach(1);
    // With a reader, the route's opening went out before `go` on this thread's connection.
    await MPI.COMM_ENDPOINTS.send('go', 2, 8);
    equal(await MPI.COMM_ENDPOINTS.recv<number>(2, 9), -1, 'message -1, by the engine path');
    const buf = new Uint8Array(BYTES);
    for (let i = 0; i < N; i++) {
      await MPI.COMM_ENDPOINTS.Recv(buf, 2, 10);
      const got = new DataView(buf.buffer).getInt32(0, true);
      if (got !== i) throw new Error(`message ${i} out of order: got ${got}`);
    }
    console.log(`ep-sender-backlog: all ${N} received`);
    parentPort!.postMessage('done');
  } else {
    equal(MPI.attachedEndpoint(), 2, 'the sender is on endpoint 2');
    equal(await MPI.COMM_ENDPOINTS.recv<string>(1, 8), 'go', 'go from the receiver');
    await MPI.COMM_ENDPOINTS.send(-1, 1, 9);
    if (reading) await readerConnectionReady();
    const sends: MPI.Request<void>[] = [];
    for (let i = 0; i < N; i++) {
      const b = new Uint8Array(BYTES);
      new DataView(b.buffer).setInt32(0, i, true);
      sends.push(MPI.COMM_ENDPOINTS.Isend(b, 1, 10));
    }
    // One microtask boundary: the frames go out in one write, most of which the kernel refuses.
    await Promise.resolve();
    if (reading) check(MPI.stats().readerRoutes.framesSent >= N, 'the messages took the reader\'s path');
    parentPort!.postMessage('queued');
    const until = Date.now() + (mode === 'computes' ? 5_000 : 60_000);
    while (Date.now() < until) { /* computes, never returning to the event loop */ }
    check(mode === 'computes', 'terminated by the main thread within 60 s (deadlock guard)');
    await MPI.Request.waitall(sends);
    parentPort!.postMessage('done');
  }
} else {
  const mode = process.argv[2];
  check(mode === 'computes' || mode === 'terminated', `argv[2] computes|terminated, got ${mode}`);
  await MPI.init({ threadLevel: 'multiple' });
  const worker = new MPI.Worker(new URL(import.meta.url), { workerData: { mode } });
  // Listen for the exit before the report arrives: the last message and the exit can come in one turn.
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const said: unknown[] = [];
  const done = new Promise<void>((resolve) => worker.on('message', (m) => { said.push(m); if (m === 'done' || (m === 'queued' && mode === 'terminated')) resolve(); }));
  await done;
  if (MPI.COMM_WORLD.rank === 1 && mode === 'terminated') await worker.terminate();
  await exited;
  await MPI.COMM_WORLD.barrier();
  if (MPI.COMM_WORLD.rank === 0) console.log(`ep-sender-backlog OK ${mode} ${MPI.config().progress}`);
  await MPI.finalize();
}
