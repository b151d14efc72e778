// Worker of ic-forms-threads.ts: every form on the intercommunicator of its workerData, then on the
// dup its parent posted, while the parent runs its own; frees both here (their one user release).
import { once } from 'node:events';
import { parentPort } from 'node:worker_threads';
import * as MPI from '@tsmpi/core';
import { check } from './check.ts';
import { runInterForms } from './ic-forms-body.ts';

await MPI.init();
const { inter } = MPI.workerData as { inter: MPI.Intercomm };
check(inter instanceof MPI.Intercomm && inter.isInter, 'workerData gives an Intercomm');
const [{ dup }] = (await once(parentPort!, 'message')) as [{ dup: unknown }];
const live = (MPI.revive({ dup }) as { dup: MPI.Intercomm }).dup;
check(live instanceof MPI.Intercomm && live.remoteSize === inter.remoteSize, 'postMessage gives an Intercomm');
let calls = await runInterForms(inter, 7, 'worker');
calls += await runInterForms(live, 9, 'worker dup');
inter.free();
live.free();
parentPort!.postMessage(calls);
