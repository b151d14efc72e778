// Worker of object-messages.ts: waits on a receive its main thread posted; the value crosses threads.
import * as MPI from '@tsmpi/core';
import { checkSample, registerClasses } from './object-messages-classes.ts';

// Before init: the requests in workerData are revived by init, and a completed one decodes its value then.
registerClasses();
await MPI.init();
const { relayed, from } = MPI.workerData as { relayed: MPI.Request<unknown>; from: number };
checkSample(await relayed.wait(), from, 'a receive waited on in a worker thread');
