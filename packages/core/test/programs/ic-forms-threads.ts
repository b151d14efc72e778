// Intercommunicators used from several threads at once (issue 36): the main thread creates two
// intercommunicators between the COMM_WORLD halves, hands one to an MPI.Worker (workerData: its
// remote group and send context cross with it) and a dup of the other by postMessage, and both
// threads run every buffer collective form (ic-forms-body.ts: blocking, nonblocking, persistent,
// overlapping) at the same time, each on its own intercommunicators; every result is checked.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';
import { runInterForms } from './ic-forms-body.ts';

await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const { rank, size } = world;
const nLow = Math.floor(size / 2);
const isLow = rank < nLow;
const half = (await world.split(isLow ? 0 : 1, rank))!;
const mine = await half.createIntercomm(0, world, isLow ? nLow : 0, 31);
const theirs = await half.createIntercomm(0, world, isLow ? nLow : 0, 32);
const theirsDup = await theirs.dup();
const w = new MPI.Worker(new URL('./ic-forms-threads-worker.ts', import.meta.url), { workerData: { inter: theirs } });
const exited = once(w, 'exit');
w.postMessage({ dup: theirsDup });
const [mineCalls, [workerCalls]] = await Promise.all([runInterForms(mine, 5, 'main'), once(w, 'message') as Promise<[number]>]);
const [code] = (await exited) as [number];
equal(code, 0, 'worker exit code');
check(mineCalls > 0 && workerCalls === 2 * mineCalls, `both threads ran every form (main ${mineCalls}, worker ${workerCalls})`);
mine.free();
half.free();
await MPI.finalize();
console.log(`ic-forms-threads OK ${rank}`);
