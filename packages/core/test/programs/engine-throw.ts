/**
 * A channel engine that dies from an uncaught exception (issue 17;
 * packages/launcher/test/faults.it.test.ts, docs/RELIABILITY.md section 1):
 * run under mpiexec with --progress threads, TSMPI_TEST_ENGINE_THROW=0:1:MS and
 * TSMPI_RANK_NODE_FLAGS=--require=.../engine-throw-hook.cjs, the test-only
 * module that makes rank 0's engine of channel 1 (the one between endpoints 0
 * and 1 with the default 2 channels) throw MS ms after it started (this program
 * reads the variable only for MS).
 *
 *   engine-throw.ts push|wait|locked
 *
 * push  rank 0's main thread floods rank 1 with eager isends and never waits
 *       for them: once the engine is dead its injection ring fills (4 MiB)
 *       and the next isend would wait for room that never comes.
 * wait  rank 0 waits in a receive from rank 1 that rank 1 answers only after
 *       MS + 1 s: its dead engine would have to complete it.
 * locked (with TSMPI_TEST_ENGINE_THROW=0:1:MS:locked or :locked-exit: the engine
 *       dies holding the matching-queue lock of source 1, by an uncaught
 *       exception or with its thread gone) rank 0's main thread posts and
 *       cancels receives from rank 1 in a loop that never yields: the first
 *       post after the engine died must throw ERR_PROC_FAILED naming the lock
 *       and the engine (docs/RELIABILITY.md section 5), not spin forever.
 * Rank 1 receives everything rank 0 sends. The job must end with rank 0 named
 * (and the line `tsmpi: rank 0: channel engine failed: channel 1 ...`, or the
 * MPIError of the isend that found the ring closed), never hang. A rank still
 * running after SAFETY_MS exits with 99 by itself.
 */
import * as MPI from '@tsmpi/core';

const [mode = ''] = process.argv.slice(2);
const SAFETY_MS = 120_000;
const TAG = 5;
const hook = (process.env['TSMPI_TEST_ENGINE_THROW'] ?? '').split(':');
const throwAfterMs = Number(hook[2] ?? 0);
setTimeout(() => {
  console.error(`engine-throw: rank ${process.env['TSMPI_RANK']} still running after ${SAFETY_MS} ms; the job never ended`);
  process.exit(99);
}, SAFETY_MS).unref();

if (mode !== 'push' && mode !== 'wait' && mode !== 'locked') {
  console.error(`engine-throw: unknown mode '${mode}'; usage: engine-throw.ts push|wait|locked`);
  process.exit(2);
}
await MPI.init();
const world = MPI.COMM_WORLD;
await world.barrier();
const buf = new Uint8Array(32 * 1024); // below the 64 KiB eager limit: eager, through the injection ring
if (mode === 'push') {
  if (world.rank === 0) {
    console.log('engine-throw: rank 0 flooding');
    for (let i = 0; ; i++) {
      world.Isend(buf, 1, TAG).free(); // a freed request still completes
      // Let the event loop turn now and then (the engine's death is reported there), as a real program would.
      if (i % 64 === 63) await new Promise((r) => setImmediate(r));
    }
  } else {
    for (;;) await world.Recv(buf, 0, TAG);
  }
} else if (mode === 'locked') {
  if (world.rank === 0) {
    console.log('engine-throw: rank 0 posting');
    // Never yields: the engine's report cannot reach this thread's event loop, only the lock's word can.
    const until = Date.now() + throwAfterMs + 20_000;
    while (Date.now() < until) {
      const r = world.Irecv(buf, 1, TAG);
      r.cancel();
      r.free();
    }
    console.error('engine-throw: rank 0 posted receives for 20 s after the engine died without an error');
    process.exit(98);
  } else {
    await world.Recv(buf, 0, TAG); // never sent: rank 1 ends when rank 0 does
  }
} else {
  if (world.rank === 0) {
    console.log('engine-throw: rank 0 waiting');
    await world.Recv(buf, 1, TAG);
  } else {
    await new Promise((r) => setTimeout(r, throwAfterMs + 1000));
    await world.Send(buf, 0, TAG);
  }
}
await MPI.finalize();
