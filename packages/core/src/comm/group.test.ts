import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_RANK, MPIError } from '../util/index.ts';
import { IDENT, PROC_NULL, SIMILAR, UNDEFINED, UNEQUAL } from './constants.ts';
import { Group, type RankRange } from './group.ts';

/** The endpoint ids of a group, as a plain array. */
const ids = (g: Group): number[] => Array.from(g.members);

/** A group of size 8 whose members are not their ranks, to catch rank/endpoint mix-ups. */
const G8 = new Group([10, 11, 12, 13, 14, 15, 16, 17]);
/** 7 3 9 4: the header's example. */
const G4 = new Group([7, 3, 9, 4]);

function expectMPIError(fn: () => unknown, errorClass: number, call: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(MPIError);
  expect((caught as MPIError).errorClass).toBe(errorClass);
  expect((caught as MPIError).call).toBe(call);
}

describe('Group accessors', () => {
  it('size, rankOf, endpointOf, has', () => {
    expect(G4.size).toBe(4);
    expect([7, 3, 9, 4].map((e) => G4.rankOf(e))).toEqual([0, 1, 2, 3]);
    expect(G4.rankOf(5)).toBe(UNDEFINED);
    expect(G4.rankOf(-1)).toBe(UNDEFINED);
    expect([0, 1, 2, 3].map((r) => G4.endpointOf(r))).toEqual([7, 3, 9, 4]);
    expect(G4.has(9)).toBe(true);
    expect(G4.has(8)).toBe(false);
  });

  it('UNDEFINED is -32766', () => {
    expect(UNDEFINED).toBe(-32766);
  });

  it('EMPTY has size 0 and no member', () => {
    expect(Group.EMPTY.size).toBe(0);
    expect(Group.EMPTY.rankOf(0)).toBe(UNDEFINED);
    expect(ids(Group.EMPTY)).toEqual([]);
  });

  it('is immutable: members returns a copy, the constructor copies its input', () => {
    const src = [1, 2, 3];
    const g = new Group(src);
    src[0] = 99;
    const m = g.members;
    m[1] = 99;
    expect(ids(g)).toEqual([1, 2, 3]);
  });
});

describe('Group.incl / Group.excl', () => {
  it('incl keeps the order of ranks', () => {
    expect(ids(G4.incl([2, 0]))).toEqual([9, 7]);
    expect(ids(G8.incl([7, 0, 3]))).toEqual([17, 10, 13]);
    expect(ids(G8.incl([0, 1, 2, 3, 4, 5, 6, 7]))).toEqual(ids(G8));
  });

  it('incl([]) is EMPTY', () => {
    expect(G8.incl([])).toBe(Group.EMPTY);
  });

  it('excl keeps group order', () => {
    expect(ids(G4.excl([2, 0]))).toEqual([3, 4]);
    expect(ids(G8.excl([7, 0, 3]))).toEqual([11, 12, 14, 15, 16]);
    expect(ids(G8.excl([]))).toEqual(ids(G8));
  });

  it('excl of every rank is EMPTY', () => {
    expect(G4.excl([3, 1, 0, 2])).toBe(Group.EMPTY);
  });

  it('out-of-range ranks are ERR_RANK naming the call', () => {
    for (const bad of [-1, 4, 100, 1.5, Number.NaN]) {
      expectMPIError(() => G4.incl([0, bad]), ERR_RANK, 'Group.incl');
      expectMPIError(() => G4.excl([bad]), ERR_RANK, 'Group.excl');
    }
    expectMPIError(() => Group.EMPTY.incl([0]), ERR_RANK, 'Group.incl');
  });

  it('repeated ranks are ERR_RANK (MPICH) and say which index', () => {
    expectMPIError(() => G4.incl([1, 2, 1]), ERR_RANK, 'Group.incl');
    expectMPIError(() => G4.excl([3, 3]), ERR_RANK, 'Group.excl');
    expect(() => G4.incl([1, 2, 1])).toThrow(/ranks\[2\] = 1 repeats ranks\[0\]/);
  });

  it('the error message names the value and the allowed range', () => {
    expect(() => G4.incl([7])).toThrow('MPI_ERR_RANK: Group.incl: ranks[0] = 7 is out of range for a group of size 4');
  });
});

describe('Group.rangeIncl / Group.rangeExcl', () => {
  it('positive strides, last reached or not', () => {
    expect(ids(G8.rangeIncl([[0, 7, 1]]))).toEqual(ids(G8));
    expect(ids(G8.rangeIncl([[0, 7, 2]]))).toEqual([10, 12, 14, 16]);
    expect(ids(G8.rangeIncl([[1, 6, 2]]))).toEqual([11, 13, 15]); // 7 is past last
    expect(ids(G8.rangeIncl([[2, 2, 5]]))).toEqual([12]); // first == last
    expect(ids(G8.rangeIncl([[0, 5, 10]]))).toEqual([10]); // one step overshoots last
  });

  it('negative strides', () => {
    expect(ids(G4.rangeIncl([[3, 0, -2]]))).toEqual([4, 3]); // the header's example: ranks 3, 1
    expect(ids(G8.rangeIncl([[7, 0, -1]]))).toEqual([17, 16, 15, 14, 13, 12, 11, 10]);
    expect(ids(G8.rangeIncl([[6, 1, -3]]))).toEqual([16, 13]); // ranks 6, 3 (0 is past last)
    expect(ids(G8.rangeIncl([[5, 5, -1]]))).toEqual([15]);
  });

  it('several ranges concatenate in order', () => {
    expect(ids(G8.rangeIncl([[6, 7, 1], [0, 2, 2], [5, 3, -2]]))).toEqual([16, 17, 10, 12, 15, 13]);
  });

  it('no range is EMPTY', () => {
    expect(G8.rangeIncl([])).toBe(Group.EMPTY);
    expect(ids(G8.rangeExcl([]))).toEqual(ids(G8));
  });

  it('rangeExcl keeps group order', () => {
    expect(ids(G8.rangeExcl([[0, 7, 2]]))).toEqual([11, 13, 15, 17]);
    expect(ids(G8.rangeExcl([[7, 5, -1], [0, 0, 1]]))).toEqual([11, 12, 13, 14]);
    expect(G8.rangeExcl([[0, 7, 1]])).toBe(Group.EMPTY);
    expect(ids(G4.rangeExcl([[3, 0, -2]]))).toEqual([7, 9]);
  });

  it('the last rank may lie outside the group when no computed rank does (MPI: computed ranks must be valid)', () => {
    expect(ids(G4.rangeIncl([[1, 5, 5]]))).toEqual([3]); // ranks 1 (6 is past last)
    expect(ids(G4.rangeIncl([[2, -1, -4]]))).toEqual([9]);
  });

  const errors: [string, RankRange[], number][] = [
    ['stride 0', [[0, 3, 0]], ERR_ARG],
    ['positive stride walking away from last', [[3, 1, 1]], ERR_ARG],
    ['negative stride walking away from last', [[1, 3, -1]], ERR_ARG],
    ['range leaving the group upwards', [[2, 4, 1]], ERR_ARG],
    ['range leaving the group downwards', [[1, -1, -1]], ERR_ARG],
    ['range leaving the group by its stride', [[0, 6, 3]], ERR_ARG],
    ['first rank above the group', [[4, 4, 1]], ERR_RANK],
    ['first rank below the group', [[-1, 2, 1]], ERR_RANK],
    ['a rank in two ranges', [[0, 2, 1], [3, 2, -1]], ERR_ARG],
    ['a rank in two ranges, far apart', [[0, 3, 3], [1, 1, 1], [3, 3, 1]], ERR_ARG],
    ['non-integer stride', [[0, 3, 1.5]], ERR_ARG],
  ];
  it.each(errors)('%s is an error of the documented class, naming the call', (_name, ranges, errorClass) => {
    expectMPIError(() => G4.rangeIncl(ranges), errorClass, 'Group.rangeIncl');
    expectMPIError(() => G4.rangeExcl(ranges), errorClass, 'Group.rangeExcl');
  });
});

describe('Group.union / intersection / difference (MPI order rules)', () => {
  const a = new Group([5, 1, 9, 3]);
  const b = new Group([3, 8, 5, 0]);

  it('union: a in order, then b minus a in b order', () => {
    expect(ids(Group.union(a, b))).toEqual([5, 1, 9, 3, 8, 0]);
    expect(ids(Group.union(b, a))).toEqual([3, 8, 5, 0, 1, 9]);
    expect(ids(Group.union(a, a))).toEqual([5, 1, 9, 3]);
    expect(ids(Group.union(Group.EMPTY, b))).toEqual([3, 8, 5, 0]);
    expect(Group.union(Group.EMPTY, Group.EMPTY)).toBe(Group.EMPTY);
  });

  it('intersection: members of a also in b, in a order', () => {
    expect(ids(Group.intersection(a, b))).toEqual([5, 3]);
    expect(ids(Group.intersection(b, a))).toEqual([3, 5]);
    expect(Group.intersection(a, new Group([2, 4]))).toBe(Group.EMPTY);
    expect(Group.intersection(a, Group.EMPTY)).toBe(Group.EMPTY);
  });

  it('difference: members of a not in b, in a order', () => {
    expect(ids(Group.difference(a, b))).toEqual([1, 9]);
    expect(ids(Group.difference(b, a))).toEqual([8, 0]);
    expect(Group.difference(a, a)).toBe(Group.EMPTY);
    expect(ids(Group.difference(a, Group.EMPTY))).toEqual([5, 1, 9, 3]);
  });
});

describe('Group.translateRanks', () => {
  const a = new Group([5, 1, 9, 3]);
  const b = new Group([3, 8, 5, 0]);

  it('maps ranks through endpoints, UNDEFINED where absent', () => {
    expect(a.translateRanks([0, 1, 2, 3], b)).toEqual([2, UNDEFINED, UNDEFINED, 0]);
    expect(b.translateRanks([3, 0], a)).toEqual([UNDEFINED, 3]);
    expect(a.translateRanks([], b)).toEqual([]);
  });

  it('PROC_NULL maps to PROC_NULL', () => {
    expect(a.translateRanks([PROC_NULL, 0], b)).toEqual([PROC_NULL, 2]);
  });

  it('an out-of-range rank is ERR_RANK', () => {
    expectMPIError(() => a.translateRanks([4], b), ERR_RANK, 'Group.translateRanks');
    expectMPIError(() => a.translateRanks([-3], b), ERR_RANK, 'Group.translateRanks');
  });

  it('to a derived group: incl then translate back is the identity on the chosen ranks', () => {
    const sub = G8.incl([6, 2, 4]);
    expect(sub.translateRanks([0, 1, 2], G8)).toEqual([6, 2, 4]);
    expect(G8.translateRanks([2, 3, 4, 6], sub)).toEqual([1, UNDEFINED, 2, 0]);
  });
});

describe('Group.compare', () => {
  it('IDENT, SIMILAR, UNEQUAL', () => {
    expect(G4.compare(G4)).toBe(IDENT);
    expect(G4.compare(new Group([7, 3, 9, 4]))).toBe(IDENT);
    expect(G4.compare(new Group([4, 3, 9, 7]))).toBe(SIMILAR);
    expect(G4.compare(new Group([7, 3, 9]))).toBe(UNEQUAL);
    expect(G4.compare(new Group([7, 3, 9, 5]))).toBe(UNEQUAL);
    expect(Group.EMPTY.compare(new Group([]))).toBe(IDENT);
    expect(Group.EMPTY.compare(G4)).toBe(UNEQUAL);
  });

  it('derived groups compare as MPI says', () => {
    expect(G8.rangeIncl([[7, 0, -1]]).compare(G8)).toBe(SIMILAR);
    expect(Group.union(G8.incl([0, 1]), G8.excl([0, 1])).compare(G8)).toBe(IDENT);
    expect(Group.union(G8.excl([0, 1]), G8.incl([0, 1])).compare(G8)).toBe(SIMILAR);
  });
});
