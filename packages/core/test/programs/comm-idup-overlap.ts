// Pending idups overlapping the other communicator constructors (issue 34; the behaviour of
// MPICH's test/mpi/comm/comm_idup_comm.c): five idup(COMM_WORLD) are left pending while dup,
// split, create and (by the even ranks only) createGroup are each made, checked with an
// Allreduce and freed; then the idups complete and each is checked and freed. Argument: how
// many times to run that scenario in one job (default 1). Run with 6 processes (any size >= 2).
// It used to hang: a free (Comm.free of the dup) ran on a thread while that thread's pending
// idup held the context-id mutex across an await, and waited for it forever in lockSync.
import * as MPI from '@tsmpi/core';
import { check, equal } from './check.ts';

const IDUPS = 5;
const rounds = Number(process.argv[2] ?? 1);

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size >= 2, 'run with at least 2 processes');
check(Number.isInteger(rounds) && rounds >= 1, `rounds ${process.argv[2]}: expected a positive integer`);
const baseComms = MPI.stats().liveObjects.comm;

/** Every member takes part in an Allreduce on `comm` (the sum of ones is its size), then frees it. */
async function checkAndFree(comm: MPI.Comm | null, what: string, expectedSize: number): Promise<void> {
  check(comm !== null, `${what}: a member gets a communicator`);
  equal(comm.size, expectedSize, `${what}: size`);
  const sum = new Int32Array(1);
  await comm.Allreduce(Int32Array.of(1), sum, MPI.SUM);
  equal(sum[0], comm.size, `${what}: Allreduce of ones`);
  comm.free();
}

for (let round = 0; round < rounds; round++) {
  const idups: MPI.Request<MPI.Comm>[] = [];
  for (let i = 0; i < IDUPS; i++) idups.push(world.idup());

  await checkAndFree(await world.dup(), 'dup', size);
  const half = Math.floor(size / 2);
  await checkAndFree(await world.split(rank % 2, size - rank), 'split', rank % 2 === 0 ? size - half : half);

  const worldGroup = world.group;
  const high = worldGroup.rangeIncl([[half, size - 1, 1]]);
  const highComm = await world.create(high);
  high.free();
  if (rank >= half) await checkAndFree(highComm, 'create', size - half);
  else equal(highComm, null, 'create: a non-member gets null');

  const odd: number[] = [];
  for (let r = 1; r < size; r += 2) odd.push(r);
  const even = worldGroup.excl(odd);
  if (rank % 2 === 0) await checkAndFree(await world.createGroup(even, 0), 'createGroup', even.size);
  even.free();
  worldGroup.free();

  const dups = (await MPI.Request.waitall(idups)) as MPI.Comm[];
  check(new Set(dups.map((c) => c.contextId)).size === IDUPS, `idup: distinct context ids ${JSON.stringify(dups.map((c) => c.contextId))}`);
  for (const [i, c] of dups.entries()) await checkAndFree(c, `idup ${i}`, size);
}
equal(MPI.stats().liveObjects.comm, baseComms, 'every communicator made was freed');

console.log(`comm-idup-overlap OK rank ${rank}`);
await MPI.finalize();
