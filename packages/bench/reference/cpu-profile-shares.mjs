// Where a rank's CPU goes in a timed loop, from its `node --cpu-prof` profiles: the shares of the
// non-waiting samples by what the sampled stack holds (docs/notebook/performance-2026-11.md 4.51).
// Sample counts and their proportions hold on a loaded machine; the profiles' times do not.
//
//   TSMPI_RANK_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR --cpu-prof-interval=200" \
//     node_modules/.bin/mpiexec -n 2 packages/bench/dist/allreduce.js --size 8 --iterations 30000 --warmup 2000
//   node packages/bench/reference/cpu-profile-shares.mjs DIR/*.cpuprofile
//
// Samples count from the first one inside the loop's kernel (recursiveDoublingBytes for an allreduce,
// roundTrip for a ping-pong) plus a tenth of the rest (the warm-up calls). Waiting, left out: (idle),
// (program) and the poll turn's own frame (wait-poll.ts #turn, where sched_yield is spent). Each
// kept sample goes to the first category its stack matches, in this order:
//   flush        the socket write of the turn's frames (tcp-transport flushAll)
//   read         a socket read and what it completes (frame parsing, matching)
//   api/coll     MPI calls, collectives, the device (core/dist/api, coll, comm, device, datatype)
//   poll         the poll loop's machinery (setImmediate turns, performance.now)
//   bench        the benchmark's own loop
//   other        the rest: mostly the promise and nextTick queues between the above
// and every share is also given in units of the flush: count the socket writes per call apart (a 2-process
// allreduce writes once per two calls, a ping-pong once per round trip; notebook 4.51) before comparing two loops.
import fs from 'node:fs';

const KERNEL = /^(recursiveDoublingBytes|roundTrip)$/;
const order = ['flush', 'read', 'api/coll', 'poll', 'gc', 'bench', 'other'];
const count = Object.fromEntries(order.map((k) => [k, 0]));
const leaves = new Map(order.map((k) => [k, new Map()]));
let work = 0;
for (const file of process.argv.slice(2)) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id) => {
    const s = [];
    for (let p = id; p !== undefined; p = parent.get(p)) s.push(nodes.get(p).callFrame);
    return s;
  };
  let first = prof.samples.findIndex((id) => stackOf(id).some((f) => KERNEL.test(f.functionName)));
  if (first < 0) continue;
  first += Math.floor((prof.samples.length - first) / 10);
  for (let i = first; i < prof.samples.length; i++) {
    const stack = stackOf(prof.samples[i]);
    const fn = stack[0].functionName;
    if (fn === '(idle)' || fn === '(program)' || fn === '#turn') continue;
    work++;
    const has = (re) => stack.some((f) => re.test(`${f.functionName} ${f.url}`));
    let cat = 'other';
    if (fn === '(garbage collector)') cat = 'gc';
    else if (has(/flushAll/)) cat = 'flush';
    else if (has(/socketOnRead|onStreamRead/)) cat = 'read';
    else if (has(/core\/dist\/(api|coll|comm|device|datatype)\//)) cat = 'api/coll';
    else if (has(/wait-poll|processImmediate/) || /^(now|setImmediate|toggleImmediateRef)$/.test(fn)) cat = 'poll';
    else if (has(/bench\/dist\//)) cat = 'bench';
    count[cat]++;
    const leaf = `${fn || '(anonymous)'} ${stack[0].url.replace(/^.*\/packages\//, '')}`;
    leaves.get(cat).set(leaf, (leaves.get(cat).get(leaf) ?? 0) + 1);
  }
}
if (work === 0) {
  console.error('cpu-profile-shares: no sample inside an allreduce or ping-pong loop');
  process.exit(2);
}
console.log(`${work} non-waiting samples`);
for (const k of order) {
  const top = [...leaves.get(k)].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([l, c]) => `${l} ${((100 * c) / work).toFixed(1)}%`);
  console.log(`${k.padEnd(9)} ${((100 * count[k]) / work).toFixed(1).padStart(5)}%  ${(count[k] / count.flush).toFixed(2)} x flush   ${top.join('; ')}`);
}
