// Object lifetime across threads (issue 13), 2 processes, --endpoints 2:
//  A. a request waited in a worker after its communicator was freed in the main thread;
//  B. a communicator made on endpoint 0 and freed by a thread attached to endpoint 1
//     returns its context id to endpoint 0's mask;
//  C. THREADS threads x CYCLES create/use/free cycles (a datatype freed while its receive
//     is pending, a user op, and every 500 cycles a dup): liveObjects back to the
//     baseline; under gc the collector runs (gcCycles > 0).
// argv: [threads = 4] [cycles = 10000]
import { once } from 'node:events';
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const threads = Number(process.argv[2] ?? 4);
const cycles = Number(process.argv[3] ?? 10000);
await MPI.init({ threadLevel: 'multiple' });
const world = MPI.COMM_WORLD;
const me = world.rank;
const peer = 1 - me;
const strategy = MPI.config().refcount;
const baseline = MPI.stats().liveObjects;
const url = new URL('./lifetime-threads-worker.ts', import.meta.url);

async function run(workerData: Record<string, unknown>): Promise<unknown> {
  const w = new MPI.Worker(url, { workerData });
  // Listen for both now: a worker's last message and its exit can be emitted in one turn.
  const exited = once(w, 'exit');
  const [result] = (await once(w, 'message')) as [unknown];
  const [code] = (await exited) as [number];
  equal(code, 0, `worker ${String(workerData.part)} exit code`);
  return result;
}

// --- A ----------------------------------------------------------------------------------------
const c1 = await world.dup();
const c1Id = c1.contextId;
const into = new Int32Array(1);
const r = c1.Irecv(into, peer, 9);
const ps = c1.SendInit(Int32Array.of(100 + me), peer, 9);
const waited = run({ part: 'A', r });
c1.free();
const c2 = await world.dup();
check(c2.contextId !== c1Id, 'c2 does not get the id of c1, whose receive is pending');
equal(await c2.sendrecv('c2', peer, 1, peer, 1), 'c2', 'c2 works');
ps.start();
await ps.wait();
ps.free();
equal(await waited, 100 + peer, 'the worker waited the receive on the freed c1 and got its message');
check(r.test(), 'the receive is complete in its own thread too');
c2.free();

// --- B ----------------------------------------------------------------------------------------
if (MPI.config().endpoints >= 2) {
  // Under gc, freed communicators wait for a collection: collect before each allocation compared.
  const collect = (): void => {
    if (strategy === 'gc') for (let i = 0; i <= 64; i++) MPI.Op.create(() => undefined).free(); // the 65th creation collects
  };
  collect();
  const c = await world.dup();
  const cId = c.contextId;
  await run({ part: 'B', c });
  collect();
  const again = await world.dup();
  equal(again.contextId, cId, 'a communicator freed by a thread on endpoint 1 gives its id back to endpoint 0, which reuses it');
  again.free();
}

// --- C ----------------------------------------------------------------------------------------
const comms: MPI.Comm[] = [];
for (let t = 0; t < threads; t++) comms.push(await world.dup());
const results = (await Promise.all(comms.map((comm, index) => run({ part: 'C', comm, index, cycles })))) as number[];
equal(results, comms.map(() => cycles), 'every thread finished its cycles');
for (const c of comms) c.free();
await world.barrier();
const st = MPI.stats();
equal(st.liveObjects.request, 0, 'no live request');
if (strategy === 'gc') {
  check(st.gcCycles > 0, `the collector ran (gcCycles ${st.gcCycles})`);
} else {
  equal(st.liveObjects, baseline, `${strategy}: back to the predefined baseline`);
}
await world.barrier();
if (me === 0) console.log(`lifetime-threads OK (refcount ${strategy}, ${threads} threads x ${cycles} cycles, gcCycles ${st.gcCycles})`);
await MPI.finalize();
