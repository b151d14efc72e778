// The new collective forms from several threads at once (issue 36: "usable from any thread and
// overlapping each other"): the main thread hands a dup of COMM_WORLD to an MPI.Worker, which runs
// persistent and nonblocking collectives on it (AllreduceInit started many times, IreduceScatter,
// Iallgatherv, Ialltoallw) while the main thread runs its own on COMM_WORLD; both check results.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { runForms } from './coll-forms-threads-body.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const rank = world.rank;
const copy = await world.dup();
const w = new MPI.Worker(new URL('./coll-forms-threads-worker.ts', import.meta.url), { workerData: { comm: copy } });
const exited = once(w, 'exit');
const mine = await runForms(world, 'main');
const [theirs] = (await once(w, 'message')) as [number];
const [code] = (await exited) as [number];
equal(code, 0, 'worker exit code');
check(mine > 0 && theirs === mine, `both threads ran every round (main ${mine}, worker ${theirs})`);
copy.free();
await MPI.finalize();
console.log(`coll-forms-threads OK rank ${rank}`);
