// Every Group operation through the public API against hand-computed results,
// the caller's rank, EMPTY, free and the object-table records, and bad input
// (ERR_GROUP / ERR_RANK / ERR_ARG). Run with 4 processes.
import * as MPI from '@tsmpi/core';
import { check, equal, throwsMPI } from './check.ts';

await MPI.init();
const world = MPI.COMM_WORLD;
const { rank, size } = world;
check(size === 4, 'run with -n 4');
const baseGroups = MPI.stats().liveObjects.group;

/** The world ranks of a group's members, in group order. */
const made: MPI.Group[] = [];
/** Remembers a group to free at the end. */
const t = (g: MPI.Group): MPI.Group => (made.push(g), g);
const members = (g: MPI.Group): number[] => t(g).translateRanks(Array.from({ length: g.size }, (_, i) => i), wg);

const wg = world.group;
equal([wg.size, wg.rank], [4, rank], 'COMM_WORLD.group');
equal(wg.compare(world.group), MPI.IDENT, 'two views of COMM_WORLD.group are IDENT');
const selfGroup = MPI.COMM_SELF.group;
equal([selfGroup.size, selfGroup.rank], [1, 0], 'COMM_SELF.group');
equal(members(selfGroup), [rank], 'COMM_SELF.group is the caller');

// incl / excl
const a = wg.incl([3, 1, 2]);
equal(members(a), [3, 1, 2], 'incl keeps the order of ranks');
equal(a.size, 3, 'incl size');
equal(a.rank, ({ 3: 0, 1: 1, 2: 2 } as Record<number, number>)[rank] ?? MPI.UNDEFINED, 'incl rank');
const b = wg.excl([0, 2]);
equal(members(b), [1, 3], 'excl keeps group order');
equal(b.rank, rank === 1 ? 0 : rank === 3 ? 1 : MPI.UNDEFINED, 'excl rank');
check(wg.incl([]) === MPI.Group.EMPTY, 'incl([]) is EMPTY');
check(wg.excl([0, 1, 2, 3]) === MPI.Group.EMPTY, 'excl(all) is EMPTY');
equal(members(a.incl([2, 0])), [2, 3], 'incl of a subgroup');

// rangeIncl / rangeExcl
equal(members(wg.rangeIncl([[0, 3, 2]])), [0, 2], 'rangeIncl [0,3,2]');
equal(members(wg.rangeIncl([[3, 0, -2]])), [3, 1], 'rangeIncl [3,0,-2]');
equal(members(wg.rangeIncl([[2, 2, 1], [0, 1, 1]])), [2, 0, 1], 'rangeIncl two ranges in turn');
equal(members(wg.rangeExcl([[0, 3, 3]])), [1, 2], 'rangeExcl [0,3,3]');
equal(members(wg.rangeExcl([[1, 2, 1]])), [0, 3], 'rangeExcl [1,2,1]');

// set operations
const c = wg.incl([2, 0]);
equal(members(MPI.Group.union(a, c)), [3, 1, 2, 0], 'union: a then b\'s new members');
equal(members(MPI.Group.union(c, a)), [2, 0, 3, 1], 'union is ordered by its first argument');
equal(members(MPI.Group.intersection(a, c)), [2], 'intersection in a\'s order');
equal(members(MPI.Group.intersection(wg, a)), [1, 2, 3], 'intersection in the first group\'s order');
equal(members(MPI.Group.difference(a, c)), [3, 1], 'difference');
check(MPI.Group.difference(c, wg) === MPI.Group.EMPTY, 'difference to nothing is EMPTY');
check(MPI.Group.intersection(b, c) === MPI.Group.EMPTY, 'disjoint intersection is EMPTY');
equal(members(MPI.Group.union(MPI.Group.EMPTY, b)), [1, 3], 'union with EMPTY');

// translateRanks and compare
equal(a.translateRanks([0, 1, 2, MPI.PROC_NULL], c), [MPI.UNDEFINED, MPI.UNDEFINED, 0, MPI.PROC_NULL], 'translateRanks a -> c');
equal(wg.translateRanks([0, 1, 2, 3], a), [MPI.UNDEFINED, 1, 2, 0], 'translateRanks world -> a');
equal(wg.translateRanks([], a), [], 'translateRanks of nothing');
equal(a.compare(t(wg.incl([3, 1, 2]))), MPI.IDENT, 'same members same order: IDENT');
equal(a.compare(t(wg.incl([1, 2, 3]))), MPI.SIMILAR, 'same members other order: SIMILAR');
equal(a.compare(c), MPI.UNEQUAL, 'different members: UNEQUAL');
equal(a.compare(wg), MPI.UNEQUAL, 'different sizes: UNEQUAL');
equal(MPI.Group.EMPTY.compare(wg.incl([])), MPI.IDENT, 'EMPTY vs EMPTY');

// EMPTY
equal([MPI.Group.EMPTY.size, MPI.Group.EMPTY.rank], [0, MPI.UNDEFINED], 'EMPTY size and rank');
MPI.Group.EMPTY.free(); // a no-op, as in MPICH
equal(MPI.Group.EMPTY.size, 0, 'EMPTY survives free');

// a communicator's group follows the communicator
const rev = await world.split(0, -rank);
check(rev !== null, 'split(0) gives a communicator');
const rg = rev.group;
equal(members(rg), [3, 2, 1, 0], 'split by descending key: group order');
equal(rg.rank, rev.rank, 'group rank = communicator rank');
equal(rg.compare(wg), MPI.SIMILAR, 'reversed world group is SIMILAR');

// errors
const ERR = { group: MPI.ERR_GROUP, rank: MPI.ERR_RANK, arg: MPI.ERR_ARG };
await throwsMPI(() => wg.incl([4]), ERR.rank, 'Group.incl', 'incl out of range');
await throwsMPI(() => wg.incl([-1]), ERR.rank, 'Group.incl', 'incl negative');
await throwsMPI(() => wg.incl([1, 1]), ERR.rank, 'Group.incl', 'incl repeated');
await throwsMPI(() => wg.incl([0.5]), ERR.rank, 'Group.incl', 'incl not an integer');
await throwsMPI(() => wg.incl('0' as never), ERR.arg, 'Group.incl', 'incl not an array');
await throwsMPI(() => wg.excl([7]), ERR.rank, 'Group.excl', 'excl out of range');
await throwsMPI(() => wg.excl([2, 2]), ERR.rank, 'Group.excl', 'excl repeated');
await throwsMPI(() => wg.rangeIncl([[0, 3, 0]]), ERR.arg, 'Group.rangeIncl', 'zero stride');
await throwsMPI(() => wg.rangeIncl([[3, 0, 1]]), ERR.arg, 'Group.rangeIncl', 'stride away from last');
await throwsMPI(() => wg.rangeIncl([[0, 5, 1]]), ERR.arg, 'Group.rangeIncl', 'range leaves the group');
await throwsMPI(() => wg.rangeIncl([[4, 5, 1]]), ERR.rank, 'Group.rangeIncl', 'first out of range');
await throwsMPI(() => wg.rangeIncl([[0, 2, 1], [2, 3, 1]]), ERR.arg, 'Group.rangeIncl', 'overlapping ranges');
await throwsMPI(() => wg.rangeIncl([[0, 2]] as never), ERR.arg, 'Group.rangeIncl', 'a range of two numbers');
await throwsMPI(() => wg.rangeExcl([[0, 3, 0]]), ERR.arg, 'Group.rangeExcl', 'rangeExcl zero stride');
await throwsMPI(() => wg.translateRanks([4], a), ERR.rank, 'Group.translateRanks', 'translateRanks out of range');
await throwsMPI(() => wg.translateRanks([0], {} as never), ERR.group, 'Group.translateRanks', 'translateRanks to a non-group');
await throwsMPI(() => wg.compare(null as never), ERR.group, 'Group.compare', 'compare with null');
await throwsMPI(() => MPI.Group.union(wg, 3 as never), ERR.group, 'Group.union', 'union with a number');
await throwsMPI(() => MPI.Group.intersection(undefined as never, wg), ERR.group, 'Group.intersection', 'intersection with undefined');
await throwsMPI(() => MPI.Group.difference(world as never, wg), ERR.group, 'Group.difference', 'difference with a Comm');

// free: a freed group is unusable; records go back
const d = wg.incl([0, 1]);
const live = MPI.stats().liveObjects.group;
d.free();
equal(MPI.stats().liveObjects.group, live - 1, 'free releases the record');
await throwsMPI(() => d.free(), ERR.group, 'Group.free', 'double free');
await throwsMPI(() => d.incl([0]), ERR.group, 'Group.incl', 'incl on a freed group');
await throwsMPI(() => d.rank, ERR.group, 'Group.rank', 'rank of a freed group');
await throwsMPI(() => MPI.Group.union(d, wg), ERR.group, 'Group.union', 'union with a freed group');
await throwsMPI(() => world.create(d), ERR.group, 'Comm.create', 'create with a freed group');

// a communicator keeps its group record after the user frees the group it came from
const e = wg.incl([1, 0, 2, 3]);
const fromE = await world.create(e);
check(fromE !== null, 'create(e)');
e.free();
equal(fromE.rank, [1, 0, 2, 3].indexOf(rank), 'create keeps the order of the group');
equal(members(fromE.group), [1, 0, 2, 3], 'the communicator\'s group outlives the user\'s handle');
fromE.free();
rev.free();
for (const g of new Set([a, b, c, selfGroup, ...made])) g.free();
wg.free();
equal(MPI.stats().liveObjects.group, baseGroups, 'every group record is back after the frees');
await throwsMPI(() => world.group.incl([9]), ERR.rank, 'Group.incl', 'incl on a fresh view');

await MPI.finalize();
await throwsMPI(() => MPI.Group.EMPTY.incl([]), MPI.ERR_OTHER, 'Group.incl', 'after finalize');
console.log(`group-ops OK ${rank}`);
