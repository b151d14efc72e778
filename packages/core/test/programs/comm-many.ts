// Context ids are reused after free, and running out is a clean ERR_OTHER.
// - 100,000 COMM_SELF.dup + free (no network), then 2,000 COMM_WORLD.dup + free;
// - exhaustion: rank 0 holds the low half of the id space (COMM_SELF dups),
//   rank 1 the high half (COMM_WORLD.create of a group of rank 1 alone, so the
//   id is free at both but kept only by rank 1); then no id is free at every
//   member of COMM_WORLD and dup fails with ERR_OTHER, the masks intact: after
//   the frees the next dup gets the lowest id again.
// Prints the time per creation (the benchmark proper is packages/bench/src/comm-create.ts).
// Run with 2 processes.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size === 2, 'run with -n 2');
const baseComms = MPI.stats().liveObjects.comm;

// 100,000 dup/free on COMM_SELF.
const SELF_LOOPS = 100_000;
let t0 = MPI.wtime();
const firstSelf = await MPI.COMM_SELF.dup();
const firstId = firstSelf.contextId;
firstSelf.free();
for (let i = 1; i < SELF_LOOPS; i++) {
  const c = await MPI.COMM_SELF.dup();
  if (c.contextId !== firstId) equal(c.contextId, firstId, `COMM_SELF.dup #${i} reuses the freed id`);
  c.free();
}
const selfUs = ((MPI.wtime() - t0) / SELF_LOOPS) * 1e6;
equal(MPI.stats().liveObjects.comm, baseComms, 'no communicator record left after the self loop');

// 2,000 dup/free on COMM_WORLD (two processes over TCP), plus idup.
const WORLD_LOOPS = 2_000;
await world.barrier();
t0 = MPI.wtime();
for (let i = 0; i < WORLD_LOOPS; i++) {
  const c = i % 2 === 0 ? await world.dup() : await world.idup().wait();
  if (i % 500 === 0) equal(await c.allreduce(1, MPI.SUM), 2, `dup #${i} works`);
  c.free();
}
const worldUs = ((MPI.wtime() - t0) / WORLD_LOOPS) * 1e6;

// Exhaustion. 16384 prefixes, 8 reserved.
const ALLOCATABLE = 16384 - 8;
const LOW = ALLOCATABLE >> 1;
const HIGH = ALLOCATABLE - LOW;
t0 = MPI.wtime();
const held: MPI.Comm[] = [];
if (rank === 0) for (let i = 0; i < LOW; i++) held.push(await MPI.COMM_SELF.dup());
const wg = world.group;
const one = wg.incl([1]);
for (let i = 0; i < HIGH; i++) {
  const c = await world.create(one);
  if (rank === 1) held.push(c!);
  else check(c === null, 'rank 0 is not in the group');
}
const fillS = MPI.wtime() - t0;
await throwsMPI(() => world.dup(), MPI.ERR_OTHER, 'Comm.dup', 'dup with no id free at both processes');
await throwsMPI(() => world.split(0), MPI.ERR_OTHER, 'Comm.split', 'split with no id free at both processes');
await throwsMPI(() => world.idup().wait(), MPI.ERR_OTHER, 'Comm.idup', 'idup with no id free at both processes');
// Each process alone still has half of the space free: a creation over one process succeeds.
(await MPI.COMM_SELF.dup()).free();
for (const c of held) c.free();
one.free();
wg.free();
const after = await world.dup();
equal(after.contextId, firstId, 'after the frees the lowest id is free again everywhere');
await after.allreduce(1, MPI.SUM);
after.free();
equal(MPI.stats().liveObjects.comm, baseComms, 'no communicator record left');

await MPI.finalize();
console.log(`comm-many OK ${rank} self-dup ${selfUs.toFixed(1)} us, world-dup ${worldUs.toFixed(1)} us, fill ${fillS.toFixed(2)} s`);
