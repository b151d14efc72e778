// Communicator management over real processes: dup, idup, split (many colors
// and keys, UNDEFINED), splitType, create (non-members, disjoint groups),
// createGroup (concurrent calls with distinct tags, overlapping groups; a
// subset creating while the others and the members themselves hold ANY_TAG
// receives on the parent), the same context id at every member, point-to-point
// and collectives on every new communicator isolated from the parent, compare,
// name, and the errors. Run with 4 processes (also with TSMPI_CTXID_EAGER=0 and
// TSMPI_CTXID_ALGO=original).
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size === 4, 'run with -n 4');
const baseComms = MPI.stats().liveObjects.comm;

/** Every member's value, by point-to-point on `comm` (no allgather needed). */
async function allgatherP2p<T>(comm: MPI.Comm, value: T, tag = 4242): Promise<T[]> {
  const sends = [];
  for (let r = 0; r < comm.size; r++) if (r !== comm.rank) sends.push(comm.isend(value, r, tag));
  const out: T[] = [];
  for (let r = 0; r < comm.size; r++) out.push(r === comm.rank ? value : await comm.recv<T>(r, tag));
  await MPI.Request.waitall(sends);
  return out;
}

/** The world ranks of a communicator's members, in its rank order, checked to agree everywhere. */
async function worldRanksOf(comm: MPI.Comm): Promise<number[]> {
  const all = await allgatherP2p(comm, rank);
  equal(all.length, comm.size, `${comm.name}: one entry per member`);
  return all;
}

/** The same context id at every member (gathered by point-to-point, and by allreduce MIN = MAX). */
async function sameContextId(comm: MPI.Comm): Promise<void> {
  const ids = await allgatherP2p(comm, comm.contextId, 4243);
  check(ids.every((x) => x === comm.contextId), `${comm.name}: context ids ${JSON.stringify(ids)} differ`);
  equal([await comm.allreduce(comm.contextId, MPI.MIN), await comm.allreduce(comm.contextId, MPI.MAX)], [comm.contextId, comm.contextId], `${comm.name}: context id MIN/MAX`);
}

/**
 * Point-to-point and every existing collective on `child`, with the same tags in flight on
 * `parent` between the same processes at the same time: nothing mixes. `parentColl`: every
 * member of `parent` calls this at the same time, so a parent collective can run too.
 */
async function exercise(child: MPI.Comm, parent: MPI.Comm, parentColl = false): Promise<void> {
  const n = child.size;
  const me = child.rank;
  const what = child.name;
  const right = (me + 1) % n;
  const left = (me - 1 + n) % n;
  const cg = child.group;
  const pg = parent.group;
  const [pRight, pLeft] = cg.translateRanks([right, left], pg);
  cg.free();
  pg.free();
  // The same tag on parent and child: the parent's message is sent first and received last.
  const parentSend = parent.isend({ from: 'parent', r: parent.rank }, pRight!, 5);
  const childSend = child.isend({ from: 'child', r: me }, right, 5);
  const got = await child.recv<{ from: string; r: number }>(MPI.ANY_SOURCE, MPI.ANY_TAG);
  equal(got, { from: 'child', r: left }, `${what}: child receive sees only child traffic`);
  equal(await parent.recv(pLeft!, 5), { from: 'parent', r: pLeft }, `${what}: parent receive sees only parent traffic`);
  await MPI.Request.waitall([parentSend, childSend]);
  // Buffer form.
  const out = Int32Array.of(me, n);
  const inb = new Int32Array(2);
  await child.Sendrecv(out, right, 6, inb, left, 6);
  equal(Array.from(inb), [left, n], `${what}: Sendrecv`);
  // Collectives, with a parent collective in flight.
  const parentBarrier = parentColl ? parent.ibarrier() : null;
  await child.barrier();
  equal(await child.bcast(me === n - 1 ? `root ${what}` : null, n - 1), `root ${what}`, `${what}: bcast`);
  equal(await child.allreduce(me + 1, MPI.SUM), (n * (n + 1)) / 2, `${what}: allreduce`);
  const red = await child.reduce(Float64Array.of(me, 1), MPI.SUM, 0);
  if (me === 0) equal(Array.from(red as Float64Array), [(n * (n - 1)) / 2, n], `${what}: reduce`);
  else equal(red, undefined, `${what}: reduce elsewhere`);
  await parentBarrier?.wait();
  check(child.iprobe() === null && parent.iprobe() === null, `${what}: nothing left over`);
}

// ---------------------------------------------------------------- dup, idup, compare, name
const d1 = await world.dup();
equal([d1.size, d1.rank, d1.name], [4, rank, 'COMM_WORLD.dup'], 'dup shape and name');
check(d1.contextId !== world.contextId, 'dup has a new context id');
await sameContextId(d1);
equal(await worldRanksOf(d1), [0, 1, 2, 3], 'dup keeps the ranks');
await exercise(d1, world, true);
equal(d1.compare(world), MPI.CONGRUENT, 'dup is CONGRUENT');
equal(d1.compare(d1), MPI.IDENT, 'IDENT to itself');
d1.name = 'mine';
equal(d1.name, 'mine', 'name is settable');
const d2 = await d1.dup();
equal(d2.name, 'mine.dup', 'dup of a renamed communicator');
await exercise(d2, d1, true);

// Two idups in flight at once, a parent collective between them, then a dup: all ordered by call.
const r1 = world.idup();
const sum = world.allreduce(rank, MPI.SUM);
const r2 = world.idup();
const d3 = await world.dup();
const [i1, i2] = await MPI.Request.waitall([r1, r2]) as [MPI.Comm, MPI.Comm];
equal(await sum, 6, 'allreduce between idups');
check(i1 instanceof MPI.Comm && i2 instanceof MPI.Comm, 'idup resolves Comms');
check(new Set([i1.contextId, i2.contextId, d3.contextId, d1.contextId, d2.contextId]).size === 5, 'distinct ids for live communicators');
for (const c of [i1, i2, d3]) await sameContextId(c);
await exercise(i2, i1, true);
equal((await r1.wait()).contextId, i1.contextId, 'idup wait resolves the same Comm again');

// ---------------------------------------------------------------- split
// Many colors and keys, with ties: ranks by key, then parent rank.
const patterns: Array<(r: number) => [number, number]> = [
  (r) => [r % 2, 0], // two colors, equal keys: parent order
  (r) => [0, -r], // one color, reversed
  (r) => [r, 7], // every rank alone
  (r) => [[5, 9, 5, 9][r]!, [3, 1, 1, 0][r]!], // keys 3,1 (color 5: ranks 0,2 -> 2,0) and 1,0 (color 9: ranks 1,3 -> 3,1)
  (r) => [[0, MPI.UNDEFINED, 0, 0][r]!, [2, 0, 2, 1][r]!], // rank 1 out; ties 0,2 on key 2
  (r) => [2 ** 31 - 1, r % 3], // the largest color; keys 0,1,2,0 -> ranks 0,3,1,2
];
for (const [i, pattern] of patterns.entries()) {
  const mine = pattern(rank);
  const entries = Array.from({ length: size }, (_, r) => pattern(r));
  const expected = entries
    .map(([color, key], r) => ({ color, key, r }))
    .filter((e) => e.color === mine[0] && e.color !== MPI.UNDEFINED)
    .sort((x, y) => x.key - y.key || x.r - y.r)
    .map((e) => e.r);
  const sub = await world.split(mine[0], mine[1]);
  if (mine[0] === MPI.UNDEFINED) {
    equal(sub, null, `split pattern ${i}: UNDEFINED gives null`);
    continue;
  }
  check(sub !== null, `split pattern ${i}: a communicator`);
  equal(sub.name, `COMM_WORLD.split(${mine[0]})`, 'split name');
  equal([sub.size, sub.rank], [expected.length, expected.indexOf(rank)], `split pattern ${i}: size and rank`);
  equal(await worldRanksOf(sub), expected, `split pattern ${i}: order by key then parent rank`);
  await sameContextId(sub);
  if (sub.size > 1) await exercise(sub, world);
  sub.free();
}
// One allocation for every color: disjoint groups share the id.
const halves = await world.split(rank % 2, rank);
const ids = await allgatherP2p(world, halves!.contextId);
check(ids.every((x) => x === ids[0]), `split gives one id to every color: ${JSON.stringify(ids)}`);
// Split of a split.
const quarter = await halves!.split(halves!.rank, 0);
equal([quarter!.size, quarter!.rank], [1, 0], 'split of a split');
await exercise(quarter!, halves!);
quarter!.free();

// splitType: one host, so one communicator of everybody, ordered by key.
const shared = await world.splitType(MPI.COMM_TYPE_SHARED, size - rank);
equal([shared!.size, shared!.rank], [4, 3 - rank], 'splitType(SHARED) with reversed keys');
equal(shared!.compare(world), MPI.SIMILAR, 'reversed split is SIMILAR');
await exercise(shared!, world, true);
const shared3 = await world.splitType(rank === 2 ? MPI.UNDEFINED : MPI.COMM_TYPE_SHARED);
equal(shared3?.size ?? null, rank === 2 ? null : 3, 'splitType UNDEFINED');
shared3?.free();

// ---------------------------------------------------------------- create
const wg = world.group;
const odd = wg.incl([3, 1]);
const cOdd = await world.create(odd);
if (rank % 2 === 0) {
  equal(cOdd, null, 'create: non-members get null');
} else {
  check(cOdd !== null, 'create: members get a communicator');
  equal([cOdd.size, cOdd.rank], [2, rank === 3 ? 0 : 1], 'create follows the group order');
  equal(await worldRanksOf(cOdd), [3, 1], 'create members');
  await sameContextId(cOdd);
  await exercise(cOdd, world);
  equal(cOdd.compare(halves!), MPI.SIMILAR, 'same members in another order: SIMILAR');
  cOdd.free();
}
// MPI-2.2: every process passes its own group, the groups disjoint.
const mineGroup = rank < 3 ? wg.incl([0, 1, 2]) : wg.incl([3]);
const cDisjoint = await world.create(mineGroup);
equal([cDisjoint!.size, cDisjoint!.rank], rank < 3 ? [3, rank] : [1, 0], 'create with disjoint groups');
if (rank < 3) {
  await sameContextId(cDisjoint!);
  await exercise(cDisjoint!, world);
}
const halvesGroup = halves!.group;
const cAll = await halves!.create(halvesGroup);
halvesGroup.free();
equal(cAll!.compare(halves!), MPI.CONGRUENT, 'create from the whole group is CONGRUENT');
equal(await world.create(MPI.Group.EMPTY), null, 'create(EMPTY) is null everywhere');

// ---------------------------------------------------------------- createGroup
// Concurrent calls with distinct tags on one parent, overlapping groups, started in a
// different order at every rank, all in flight at once.
const specs = [
  { ranks: [0, 1, 2], tag: 1 },
  { ranks: [1, 2, 3], tag: 2 },
  { ranks: [3, 0], tag: 3 },
  { ranks: [0, 1, 2, 3], tag: 4 },
  { ranks: [2, 1], tag: 5 },
  { ranks: [rank], tag: 100 + rank }, // everybody alone, concurrently
];
const order = specs.map((_, i) => i).sort((x, y) => ((x * 7 + rank * 3) % 11) - ((y * 7 + rank * 3) % 11));
const groups = specs.map((s) => wg.incl(s.ranks));
const inFlight = new Map<number, Promise<MPI.Comm | null>>();
for (const i of order) inFlight.set(i, world.createGroup(groups[i]!, specs[i]!.tag));
const created = await Promise.all(specs.map((_, i) => inFlight.get(i)!));
for (const [i, spec] of specs.entries()) {
  const comm = created[i]!;
  if (!spec.ranks.includes(rank)) {
    equal(comm, null, `createGroup ${spec.tag}: non-member gets null`);
    continue;
  }
  check(comm !== null, `createGroup ${spec.tag}: member gets a communicator`);
  equal([comm.size, comm.rank, comm.name], [spec.ranks.length, spec.ranks.indexOf(rank), `COMM_WORLD.createGroup(${spec.tag})`], `createGroup ${spec.tag}: shape`);
}
// Checks on each new communicator, one at a time in the same order everywhere.
for (const [i, spec] of specs.entries()) {
  const comm = created[i];
  if (comm === null || comm === undefined) continue;
  equal(await worldRanksOf(comm), spec.ranks, `createGroup ${spec.tag}: members`);
  await sameContextId(comm);
  if (comm.size > 1) await exercise(comm, world);
}
const liveIds = created.filter((c) => c !== null).map((c) => c!.contextId);
check(new Set(liveIds).size === liveIds.length, `createGroup: distinct ids at one process ${JSON.stringify(liveIds)}`);
for (const c of created) c?.free();

// A subset creates while everybody holds ANY_SOURCE/ANY_TAG receives on the parent,
// members included: the creation's traffic never matches them.
{
  const members = [0, 1, 2];
  const userTag = 7; // the same number as the creation's tag
  const wildcard = world.irecv<string>(MPI.ANY_SOURCE, MPI.ANY_TAG);
  const wildcardBuf = new Uint8Array(64);
  const wildcardBufReq = world.Irecv(wildcardBuf, MPI.ANY_SOURCE, MPI.ANY_TAG);
  let sub: MPI.Comm | null = null;
  if (members.includes(rank)) {
    const g = wg.incl(members);
    // Several creations back to back, one on tag 7 (= the user tag below).
    for (const tag of [userTag, 0, MPI.TAG_UB]) {
      const c = await world.createGroup(g, tag);
      equal(c!.size, 3, `createGroup(tag ${tag}) while wildcards are posted`);
      if (tag === userTag) sub = c;
      else c!.free();
    }
    g.free();
  }
  check(!wildcard.test() && !wildcardBufReq.test(), 'no creation message matched a wildcard receive');
  equal(world.iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG), null, 'nothing pending on the parent');
  await world.barrier(); // nobody sends a user message before every rank has checked
  // Now the user messages: everybody sends its rank to its right neighbour, twice.
  const right = (rank + 1) % size;
  const left = (rank + size - 1) % size;
  await world.send(`user ${rank}`, right, userTag);
  await world.Send(Uint8Array.of(rank, 42), right, userTag);
  equal(await wildcard.wait(), `user ${left}`, 'the wildcard receive gets the user message');
  await wildcardBufReq.wait();
  equal([wildcardBufReq.status!.source, wildcardBufReq.status!.tag, wildcardBufReq.status!.getCount(), wildcardBuf[0], wildcardBuf[1]], [left, userTag, 2, left, 42], 'the buffer wildcard gets the user message');
  if (sub !== null) {
    await sameContextId(sub);
    await exercise(sub, world);
    sub.free();
  }
}

// createGroup on a derived parent, and a group of one.
if (halves!.rank === 0) {
  const hg = halves!.group;
  const one = hg.incl([0]);
  const self = await halves!.createGroup(one, 9);
  hg.free();
  one.free();
  equal([self!.size, self!.rank], [1, 0], 'createGroup of one member');
  await exercise(self!, MPI.COMM_SELF);
  self!.free();
}
await world.barrier();

// ---------------------------------------------------------------- errors
const other = rank < 2 ? wg.incl([2, 3]) : wg.incl([0, 1]);
const halvesParent = await world.split(rank < 2 ? 0 : 1, 0);
await throwsMPI(() => halvesParent!.create(other), MPI.ERR_GROUP, 'Comm.create', 'create: group not a subset');
await throwsMPI(() => halvesParent!.createGroup(other, 1), MPI.ERR_GROUP, 'Comm.createGroup', 'createGroup: group not a subset');
await throwsMPI(() => world.create({} as never), MPI.ERR_GROUP, 'Comm.create', 'create: not a group');
await throwsMPI(() => world.createGroup(null as never), MPI.ERR_GROUP, 'Comm.createGroup', 'createGroup: null group');
await throwsMPI(() => world.createGroup(wg, -1), MPI.ERR_TAG, 'Comm.createGroup', 'createGroup: negative tag');
await throwsMPI(() => world.createGroup(wg, MPI.TAG_UB + 1), MPI.ERR_TAG, 'Comm.createGroup', 'createGroup: tag above TAG_UB');
await throwsMPI(() => world.split(-3), MPI.ERR_ARG, 'Comm.split', 'split: negative color');
await throwsMPI(() => world.split(1.5), MPI.ERR_ARG, 'Comm.split', 'split: fractional color');
await throwsMPI(() => world.split(0, 2 ** 31), MPI.ERR_ARG, 'Comm.split', 'split: key out of int range');
await throwsMPI(() => world.split(0, NaN), MPI.ERR_ARG, 'Comm.split', 'split: NaN key');
await throwsMPI(() => world.splitType(7), MPI.ERR_ARG, 'Comm.splitType', 'splitType: unknown type');
await throwsMPI(() => world.free(), MPI.ERR_COMM, 'Comm.free', 'free COMM_WORLD');
await throwsMPI(() => MPI.COMM_SELF.free(), MPI.ERR_COMM, 'Comm.free', 'free COMM_SELF');
const gone = await world.dup();
gone.free();
await throwsMPI(() => gone.free(), MPI.ERR_COMM, 'Comm.free', 'double free');
await throwsMPI(() => gone.send(1, 0), MPI.ERR_COMM, 'send', 'send on a freed communicator');
await throwsMPI(() => gone.recv(0), MPI.ERR_COMM, 'recv', 'recv on a freed communicator');
await throwsMPI(() => gone.barrier(), MPI.ERR_COMM, 'barrier', 'barrier on a freed communicator');
await throwsMPI(() => gone.allreduce(1, MPI.SUM), MPI.ERR_COMM, 'allreduce', 'allreduce on a freed communicator');
await throwsMPI(() => gone.dup(), MPI.ERR_COMM, 'Comm.dup', 'dup of a freed communicator');
await throwsMPI(() => gone.idup(), MPI.ERR_COMM, 'Comm.idup', 'idup of a freed communicator');
await throwsMPI(() => gone.split(0), MPI.ERR_COMM, 'Comm.split', 'split of a freed communicator');
await throwsMPI(() => gone.create(wg), MPI.ERR_COMM, 'Comm.create', 'create on a freed communicator');
await throwsMPI(() => gone.createGroup(wg), MPI.ERR_COMM, 'Comm.createGroup', 'createGroup on a freed communicator');
await throwsMPI(() => gone.group, MPI.ERR_COMM, 'Comm.group', 'group of a freed communicator');
// Errors change nothing: the parent's collective sequence is intact.
equal(await world.allreduce(1, MPI.SUM), 4, 'world still works after the errors');

// ---------------------------------------------------------------- cleanup
for (const c of [d1, d2, d3, i1, i2, halves!, shared!, cDisjoint!, cAll!, halvesParent!]) c.free();
for (const g of [wg, odd, mineGroup, other, ...groups]) g.free();
equal(MPI.stats().liveObjects.comm, baseComms, 'every communicator record is back');
await MPI.finalize();
console.log(`comm-create OK ${rank}`);
