// mpiexec -n 2 --endpoints 2 --channels 2: one worker thread per endpoint, thread i
// talking to endpoint i of the other process (the endpoints pair layout). Checks
// that the two pairs use different channels (docs/adr/0018: with (s + d) mod C on
// global ranks both used channel 0) where the main thread's transport counts them
// (inline progress), then that eager, ssend and rendezvous messages cross intact
// and in order in both directions, in every progress mode. When this process's
// workers report phase 1 done, the other process may already be in phase 2:
// its first rendezvous request (one frame per pair, unanswered until this
// side's workers post their receives) can have arrived too. The counts are
// the transport's totals since init, not a difference from a snapshot taken
// after init: the other process's phase-1 frames can arrive while this one
// is still in init (a rank held up there for 15 s counted all 200 frames
// before such a snapshot and then 0 in phase 1).
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { equal } from './check.ts';

await MPI.init({ threadLevel: 'multiple' });
const P = MPI.COMM_WORLD.size;
const J = MPI.config().endpoints;
const C = MPI.config().channels;
equal([P, J, C], [2, 2, 2], 'job shape (mpiexec -n 2 --endpoints 2 --channels 2)');
const EAGER = 200;
const workers = Array.from({ length: J }, (_, index) => new MPI.Worker(new URL('./ep-channels-worker.ts', import.meta.url), { workerData: { index, eager: EAGER } }));
// Phase 1: each thread sends EAGER eager messages to its peer and receives as many.
await Promise.all(workers.map((w) => once(w, 'message')));
const after = MPI.stats().perChannel.map((c) => c.received);
const counted = MPI.config().progress === 'inline';
if (counted) {
  // The main thread hosts both channels: every frame from the other process arrives on its transport.
  // Init sends nothing over these channels: all of it is phase 1 (and at most that first request).
  equal(after.map((n) => n === EAGER || n === EAGER + 1), [true, true], `frames received per channel since init (${after.join(', ')}): one pair per channel, ${EAGER} eager frames and at most the peer's first phase-2 request`);
}
// Phase 2: ssend and rendezvous both ways.
for (const w of workers) w.postMessage('go');
const reports = (await Promise.all(workers.map((w) => once(w, 'message')))).map(([m]) => m as string);
equal(reports, workers.map((_, i) => `thread ${i} ok`), 'every thread exchanged intact messages in order');
await MPI.COMM_WORLD.barrier();
if (MPI.COMM_WORLD.rank === 0) console.log(`ep-channels OK (progress ${MPI.config().progress}${counted ? ', channels counted' : ''})`);
await MPI.finalize();
