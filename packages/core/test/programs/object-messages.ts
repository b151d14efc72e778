// Object messages by the structured-clone rules (issue 39), 2 processes: a Map, a Set, a Date, a BigInt,
// a cycle, a shared reference, an Error and a registered class instance through send/recv, isend/irecv,
// bcast and allgather; a receive waited on in an MPI.Worker thread (the value crosses by the relay
// cell); a function refused with ERR_ARG naming its path; a class the receiver did not register
// failing that receive with ERR_OTHER, naming the class, and the job going on.
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';
import { OnlyOnRankZero, checkSample, registerClasses, sample } from './object-messages-classes.ts';

registerClasses();
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const peer = 1 - world.rank;

// Point-to-point, blocking and nonblocking.
const [got] = await Promise.all([world.recv(peer, 1), world.send(sample(world.rank), peer, 1)]);
checkSample(got, peer, 'recv');
const req = world.irecv(peer, 2);
await world.isend(sample(world.rank), peer, 2).wait();
checkSample(await req.wait(), peer, 'irecv');

// Collectives.
checkSample(await world.bcast(world.rank === 0 ? sample(0) : null, 0), 0, 'bcast');
const all = await world.allgather(sample(world.rank));
all.forEach((v, r) => checkSample(v, r, `allgather[${r}]`));

// A receive posted here and waited on in a worker thread: the value crosses threads by the relay cell.
const relayed = world.irecv(peer, 3);
const worker = new MPI.Worker(new URL('./object-messages-worker.ts', import.meta.url), { workerData: { relayed, from: peer } });
const exited = once(worker, 'exit');
await world.send(sample(world.rank), peer, 3);
const [code] = (await exited) as [number];
equal(code, 0, 'the worker exits 0');

// Refusals happen in the sender, before anything is sent, and name the path.
const bad = { items: [1, 2, { callback: () => 0 }] };
await throwsMPI(() => world.send(bad, peer, 4), MPI.ERR_ARG, 'send', 'a function');
try {
  await world.send(bad, peer, 4);
} catch (e) {
  equal((e as Error).message, 'MPI_ERR_ARG: send: message.items[2].callback is a function; objects are sent by the structured-clone rules ' +
    '(docs/API.md "Object messages"); register a class with MPI.registerClass', 'the refusal names the path');
}
class Unregistered {
  a = 1;
}
await throwsMPI(() => world.isend({ u: new Unregistered() }, peer, 4), MPI.ERR_ARG, 'isend', 'an unregistered class instance');

// A class registered on rank 0 only: rank 1's receive fails naming it, and the next message still arrives.
if (world.rank === 0) {
  MPI.registerClass(OnlyOnRankZero, { name: 'test.OnlyOnRankZero' });
  await world.send(new OnlyOnRankZero(), 1, 5);
  await world.send('after', 1, 6);
} else {
  try {
    await world.recv(0, 5);
    check(false, 'a class this process did not register must fail the receive');
  } catch (e) {
    check(e instanceof MPI.MPIError && e.errorClass === MPI.ERR_OTHER && e.call === 'recv', `ERR_OTHER from recv, got ${String(e)}`);
    check(e.message.includes('"test.OnlyOnRankZero", which is not registered in this process'), `the error names the class: ${e.message}`);
  }
  equal(await world.recv(0, 6), 'after', 'the job goes on after the failed receive');
}

await world.barrier();
if (world.rank === 0) console.log(`object-messages OK (progress ${MPI.config().progress})`);
await MPI.finalize();
