// Cartesian arithmetic against the standard's examples and a brute-force reference (fast-check).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERR_ARG, ERR_DIMS, MPIError, PROC_NULL } from '../util/index.ts';
import { cartCoords, cartNeighbors, cartRank, cartSendOrder, cartShift, cartSub, computeDims, gridSize, wrapCoords } from './cart.ts';

/** Every non-increasing k-tuple of factors of m, lexicographically smallest first: the reference balance. */
function referenceFactors(m: number, k: number): number[] {
  const all: number[][] = [];
  const walk = (left: number, slots: number, cap: number, acc: number[]): void => {
    if (slots === 0) {
      if (left === 1) all.push(acc);
      return;
    }
    for (let d = 1; d <= Math.min(cap, left); d++) if (left % d === 0) walk(left / d, slots - 1, d, [...acc, d]);
  };
  walk(m, k, m, []);
  all.sort((a, b) => {
    for (let i = 0; i < k; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  });
  return all[0]!;
}

function errorClassOf(fn: () => unknown): number {
  try {
    fn();
  } catch (e) {
    if (e instanceof MPIError) return e.errorClass;
    throw e;
  }
  return -1;
}

describe('computeDims (MPI_Dims_create)', () => {
  it('gives the standard\'s examples (MPI 4.0 section 8.5.2)', () => {
    expect(computeDims(6, [0, 0])).toEqual([3, 2]);
    expect(computeDims(7, [0, 0])).toEqual([7, 1]);
    expect(computeDims(6, [0, 3, 0])).toEqual([2, 3, 1]);
    expect(errorClassOf(() => computeDims(7, [0, 3, 0]))).toBe(ERR_DIMS);
    expect(computeDims(16, 3)).toEqual([4, 2, 2]);
    expect(computeDims(12, 2)).toEqual([4, 3]);
    expect(computeDims(1, 2)).toEqual([1, 1]);
    expect(computeDims(5, [])).toEqual([]);
    expect(computeDims(8, [2, 4])).toEqual([2, 4]);
  });

  it('rejects impossible input with the classes MPICH uses', () => {
    expect(errorClassOf(() => computeDims(0, 2))).toBe(ERR_ARG);
    expect(errorClassOf(() => computeDims(4, -1))).toBe(ERR_ARG);
    expect(errorClassOf(() => computeDims(4, [0, -2]))).toBe(ERR_DIMS);
    expect(errorClassOf(() => computeDims(4, [1.5, 0]))).toBe(ERR_DIMS);
    expect(errorClassOf(() => computeDims(8, [2, 2]))).toBe(ERR_DIMS);
    expect(errorClassOf(() => computeDims(9, [2, 0]))).toBe(ERR_DIMS);
  });

  it('multiplies to nnodes, keeps fixed entries, fills non-increasing and as balanced as the reference', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 400 }), fc.array(fc.constantFrom<number>(0, 0, 0, 1, 2, 3), { minLength: 1, maxLength: 4 }), (n, given) => {
      const fixed = given.reduce((p, d) => (d === 0 ? p : p * d), 1);
      const free = given.filter((d) => d === 0).length;
      const ok = free === 0 ? fixed === n : n % fixed === 0;
      if (!ok) {
        expect(errorClassOf(() => computeDims(n, given))).toBe(ERR_DIMS);
        return;
      }
      const out = computeDims(n, given);
      expect(gridSize(out)).toBe(n);
      given.forEach((d, i) => d !== 0 && expect(out[i]).toBe(d));
      const filled = out.filter((_, i) => given[i] === 0);
      for (let i = 1; i < filled.length; i++) expect(filled[i]!).toBeLessThanOrEqual(filled[i - 1]!);
      if (free > 0) expect(filled).toEqual(referenceFactors(n / fixed, free));
    }));
  });
});

const dimsArb = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 });

describe('rank <-> coordinates', () => {
  it('are inverse on every grid point, row-major', () => {
    fc.assert(fc.property(dimsArb, (dims) => {
      for (let r = 0; r < gridSize(dims); r++) {
        const c = cartCoords(dims, r);
        c.forEach((x, i) => expect(x >= 0 && x < dims[i]!).toBe(true));
        expect(cartRank(dims, c)).toBe(r);
      }
    }));
    expect(cartCoords([2, 3], 4)).toEqual([1, 1]);
    expect(cartRank([2, 3], [1, 2])).toBe(5);
  });

  it('wraps coordinates of periodic dimensions only', () => {
    expect(wrapCoords([3, 4], [true, false], [-1, 3])).toEqual([2, 3]);
    expect(wrapCoords([3, 4], [true, false], [7, 0])).toEqual([1, 0]);
    expect(wrapCoords([3, 4], [true, false], [0, 4])).toBe(-2);
    expect(wrapCoords([3, 4], [false, false], [-1, 0])).toBe(-1);
  });
});

describe('shift (MPI_Cart_shift)', () => {
  it('gives PROC_NULL off non-periodic edges and wraps periodic ones', () => {
    expect(cartShift([4], [false], 0, 0, 1)).toEqual([PROC_NULL, 1]);
    expect(cartShift([4], [false], 3, 0, 1)).toEqual([2, PROC_NULL]);
    expect(cartShift([4], [true], 0, 0, 1)).toEqual([3, 1]);
    expect(cartShift([2, 3], [false, true], 0, 1, 1)).toEqual([2, 1]);
    expect(cartShift([2, 3], [false, true], 0, 0, 1)).toEqual([PROC_NULL, 3]);
    expect(cartShift([5], [true], 1, 0, -7)).toEqual([3, 4]);
    expect(cartShift([5], [false], 1, 0, 0)).toEqual([1, 1]);
  });

  it('is its own inverse: my dest\'s source is me, on a periodic grid or inside a non-periodic one', () => {
    fc.assert(fc.property(dimsArb, fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), fc.integer({ min: -6, max: 6 }), (dims, periods, disp) => {
      for (let r = 0; r < gridSize(dims); r++) {
        for (let d = 0; d < dims.length; d++) {
          const [source, dest] = cartShift(dims, periods, r, d, disp);
          if (dest !== PROC_NULL) expect(cartShift(dims, periods, dest, d, disp)[0]).toBe(r);
          if (source !== PROC_NULL) expect(cartShift(dims, periods, source, d, disp)[1]).toBe(r);
          if (periods[d]) expect(dest === PROC_NULL || source === PROC_NULL).toBe(false);
        }
      }
    }));
  });
});

describe('neighbour lists and send order', () => {
  it('lists per dimension the negative then the positive neighbour', () => {
    expect(cartNeighbors([2, 2], [true, true], 0)).toEqual([2, 2, 1, 1]);
    expect(cartNeighbors([3], [false], 0)).toEqual([PROC_NULL, 1]);
    expect(cartNeighbors([1], [true], 0)).toEqual([0, 0]);
  });

  it('pairs the k-th message a sends b with the k-th receive b posts from a (halo semantics)', () => {
    // Simulate one-tag FIFO matching on every grid, including periodic dimensions of size 1 and 2.
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }), fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), (dims, periods) => {
      const n = gridSize(dims);
      const order = cartSendOrder(dims.length);
      const queues = new Map<string, number[]>(); // "a->b": send slots of a, in send order
      for (let a = 0; a < n; a++) {
        const nb = cartNeighbors(dims, periods, a);
        for (const j of order) if (nb[j] !== PROC_NULL) {
          const key = `${a}->${nb[j]}`;
          queues.set(key, [...(queues.get(key) ?? []), j]);
        }
      }
      for (let b = 0; b < n; b++) {
        const nb = cartNeighbors(dims, periods, b);
        nb.forEach((a, i) => {
          if (a === PROC_NULL) return;
          const sentSlot = queues.get(`${a}->${b}`)!.shift()!;
          // slot 2d (negative) must receive what the neighbour sent in direction 2d+1 (positive), and vice versa
          expect(sentSlot).toBe(i ^ 1);
        });
      }
    }));
  });
});

describe('sub (MPI_Cart_sub)', () => {
  it('groups the points that agree on the dropped coordinates, ranked by the kept ones', () => {
    // dims [2, 3]: keep dimension 1 -> rows; keep dimension 0 -> columns
    expect(cartSub([2, 3], [false, true], 4, [false, true])).toEqual({ color: 1, key: 1, dims: [3], periods: [true] });
    expect(cartSub([2, 3], [false, true], 4, [true, false])).toEqual({ color: 1, key: 1, dims: [2], periods: [false] });
    expect(cartSub([2, 3], [false, true], 5, [false, false])).toEqual({ color: 5, key: 0, dims: [], periods: [] });
  });
});
