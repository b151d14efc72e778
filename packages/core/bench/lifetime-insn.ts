/**
 * One request's reference work in one thread, for instruction counts: runs acquire +
 * releaseRequest (device/lifetime.ts) LOOPS times for one strategy and one kind of objects,
 * nothing else, so that the difference between two runs under callgrind with different LOOPS
 * is the instructions of LOOPS requests (load-independent, unlike the times of lifetime-cost.ts).
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/a.out node --import tsx \
 *     packages/core/bench/lifetime-insn.ts gc derived 1000000
 */
import { DevRequest, REQ_KIND, ObjectTable, OBJECT_KIND, allocateLifetimeBuffers, createLifetime, type RefcountStrategy } from '../src/device/index.ts';

const [strategy = 'gc', objects = 'derived', loopsArg = '1000000'] = process.argv.slice(2);
const loops = Number(loopsArg);
const table = new ObjectTable(ObjectTable.allocateBuffers(64, 1 << 16), true);
const lt = createLifetime(strategy as RefcountStrategy, table, allocateLifetimeBuffers(4, 64), 0);
const derived = objects === 'derived';
const comm = derived ? lt.create(OBJECT_KIND.COMM, [32, 0], null, 'bench') : table.create(OBJECT_KIND.COMM, true, [0, 0], null, 'bench');
const type = derived ? lt.create(OBJECT_KIND.DATATYPE, [], null, 'bench') : table.create(OBJECT_KIND.DATATYPE, true, [], null, 'bench');
const r = new DevRequest(REQ_KIND.SEND);
for (let i = 0; i < loops; i++) {
  lt.acquire(r, comm, type, 0);
  lt.releaseRequest(r);
}
if (lt.liveRequests() !== 0) throw new Error('a request stayed live');
